// The fixture loader (fixture.h) against facts the fixtures README states.
#include "nn/fixture.h"

#include <cmath>

using namespace tg;
using tg::test::fixture_tensor;
using tg::test::load_fixture;

TEST_CASE("fixture loader reads tensors, dtypes and the weights a layer file names") {
  const nlohmann::json f = load_fixture("nn/linear.f32.json");
  CHECK(test::fixture_dtype(f) == DType::f32);
  const Tensor x = fixture_tensor(f["cases"][0]["inputs"]["x"], DType::f32);
  CHECK(x.shape() == Shape{2, 5, 4});
  const TensorMap w = test::fixture_weights(f);
  REQUIRE(w.size() == 2);
  CHECK(w.at("weight").shape() == Shape{3, 4});
  CHECK(w.at("bias").dtype() == DType::f32);
}

TEST_CASE("fixture loader reads integer indices exactly and non-finite strings") {
  const Tensor idx = fixture_tensor(load_fixture("nn/embedding.f64.json")["cases"][0]["inputs"]["indices"], i64);
  CHECK(idx.to_vector<int64_t>() == std::vector<int64_t>{1, 0, 7, 7, 9, 0});
  const Tensor t = fixture_tensor(nlohmann::json::parse(R"({"shape": [3], "data": ["inf", "-inf", "nan"]})"), f64);
  const std::vector<double> v = t.to_vector<double>();
  CHECK(v[0] == INFINITY);
  CHECK(v[1] == -INFINITY);
  CHECK(std::isnan(v[2]));
}

TEST_CASE("max_abs_diff finds the worst element and treats NaN against a number as infinite") {
  CHECK(test::max_abs_diff(tensor({1, 2, 3}), tensor({1, 2.5, 3})) == doctest::Approx(0.5));
  CHECK(test::max_abs_diff(tensor({NAN}), tensor({NAN})) == 0);
  CHECK(std::isinf(test::max_abs_diff(tensor({NAN}), tensor({1}))));
}
