// Dense against PyTorch's nn.Linear (fixtures nn/linear.*), finite differences, its init and its errors.
#include <doctest/doctest.h>

#include "autograd/gradcheck.h"
#include "nn/dense.h"
#include "nn/fixture.h"

using namespace tg;

TEST_CASE("Dense matches torch.nn.Linear: output and gradients for input, weight and bias") {
  for (const char* file : {"nn/linear.f64.json", "nn/linear.f32.json"}) {
    CAPTURE(file);
    const nlohmann::json f = test::load_fixture(file);
    const DType dt = test::fixture_dtype(f);
    nn::Dense dense({.in_features = 4, .out_features = 3, .dtype = dt});
    dense.load_state_dict(test::fixture_weights(f));
    for (const nlohmann::json& c : f["cases"]) {
      dense.zero_grad();
      Variable x(test::fixture_tensor(c["inputs"]["x"], dt), true);
      test::check_fixture_case(dense, c, dense(x), {{"x", x}}, test::fixture_tolerance(dt));
    }
  }
}

TEST_CASE("Dense passes gradcheck in f64 for input, weight and bias") {
  manual_seed(1);
  nn::Dense dense({.in_features = 3, .out_features = 2, .dtype = f64});
  std::vector<Variable> inputs{Variable(randn({2, 3}, f64), true)};
  for (const Variable& p : dense.parameters()) inputs.push_back(p);
  CHECK(gradcheck([&](const std::vector<Variable>& x) { return dense(x[0]); }, inputs));
}

TEST_CASE("Dense without bias has only a weight and computes x Wᵀ") {
  nn::Dense dense({.in_features = 2, .out_features = 2, .bias = false, .dtype = f64});
  CHECK(dense.named_parameters().size() == 1);
  CHECK_FALSE(dense.bias());
  dense.load_state_dict({{"weight", tensor({1, 2, 3, 4}, {2, 2}, f64)}});
  CHECK(dense(Variable(tensor({1, 1}, {1, 2}, f64))).value().to_vector<double>() == std::vector<double>{3, 7});
}

TEST_CASE("Dense starts uniform in ±1/√in_features, as PyTorch's Linear") {
  manual_seed(0);
  nn::Dense dense({.in_features = 16, .out_features = 64});
  const double bound = 0.25;  // 1/√16
  for (const Variable& p : dense.parameters()) {
    CHECK(amax(abs(p.value())).item() <= bound);
    CHECK(amax(abs(p.value())).item() > 0.9 * bound);  // fills the range, not a narrower one
  }
}

TEST_CASE("Dense names the input shape and in_features when the last dim differs") {
  nn::Dense dense({.in_features = 4, .out_features = 3});
  CHECK_THROWS_WITH_AS(dense(Variable(zeros({2, 5}))), "Dense: input (2, 5) must end in in_features 4", ShapeError);
  CHECK_THROWS_WITH_AS(nn::Dense({.in_features = -1, .out_features = 3}),
                       "Dense: in_features must be >= 0 (0 = inferred) and out_features > 0, got -1 and 3",
                       ValueError);
}
