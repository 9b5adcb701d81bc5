// Layer::save / Layer::load through safetensors: a bit-exact round trip into a differently initialised
// layer, PyTorch's files loading by name, and every kind of bad file failing with a tg::Error while the
// layer keeps all its values.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "nn/activation.h"
#include "nn/dense.h"
#include "nn/fixture.h"
#include "nn/layer_norm.h"
#include "nn/sequential.h"
#include "nn/temp_file.h"

using namespace tg;
using tg::test::TempFile;
using tg::test::raw_state;
namespace fs = std::filesystem;

namespace {

// Dense(4 -> 3), Tanh, LayerNorm(3), and a buffer: a little of everything a state_dict holds.
struct Model : nn::Layer {
  nn::Sequential body;
  Model(DType dt = f32, int64_t out = 3, bool bias = true) {
    body.emplace<nn::Dense>(nn::DenseOptions{.in_features = 4, .out_features = out, .bias = bias, .dtype = dt});
    body.emplace<nn::Tanh>();
    body.emplace<nn::LayerNorm>(nn::LayerNormOptions{.normalized_shape = {out}, .dtype = dt});
    register_layer("body", body);
    register_buffer("steps", randn({2}, dt));
    for (const Variable& p : parameters()) Tensor(p.value()).add_(randn(p.shape(), dt));  // not LayerNorm's 1 and 0
  }
  std::string type_name() const override { return "Model"; }
};

}  // namespace

TEST_CASE("save then load into a differently initialised layer is bit exact, buffers included") {
  TempFile file;
  manual_seed(20);
  Model saved;
  saved.save(file.path);
  Model loaded;
  REQUIRE(raw_state(loaded) != raw_state(saved));
  loaded.load(file.path);
  CHECK(raw_state(loaded) == raw_state(saved));
  const Safetensors st = load_safetensors(file.path);
  CHECK(st.metadata == std::map<std::string, std::string>{{"format", "tensorgrad"}, {"layer", "Model"}});
  CHECK(st.tensors.size() == 5);  // body.0.weight, body.0.bias, body.2.weight, body.2.bias, steps
}

TEST_CASE("load reads PyTorch's safetensors by state_dict name") {
  nn::Dense dense({.in_features = 4, .out_features = 3, .dtype = f64});
  dense.load(std::string(TG_FIXTURES_DIR) + "/nn/linear.f64.safetensors");
  const TensorMap want = load_safetensors(std::string(TG_FIXTURES_DIR) + "/nn/linear.f64.safetensors").tensors;
  CHECK(test::max_abs_diff(dense.weight().value(), want.at("weight")) == 0);
  CHECK(test::max_abs_diff(dense.bias().value(), want.at("bias")) == 0);
}

TEST_CASE("a file that does not fit the layer fails with the right error and changes nothing") {
  TempFile no_bias, narrow, wide_f64;
  Model(f32, 3, /*bias=*/false).save(no_bias.path);
  Model(f32, 2).save(narrow.path);
  Model(f64).save(wide_f64.path);
  Model m;
  const auto before = raw_state(m);
  CHECK_THROWS_WITH_AS(m.load(no_bias.path), "Model::load_state_dict: missing keys [body.0.bias]", ValueError);
  CHECK_THROWS_WITH_AS(m.load(narrow.path),
                       "Model::load_state_dict: shape of 'body.0.bias' differs: expected (3,) vs loaded (2,)",
                       ShapeError);
  CHECK_THROWS_WITH_AS(m.load(wide_f64.path),
                       "Model::load_state_dict: dtype of 'body.0.bias' differs: expected f32 vs loaded f64",
                       DTypeError);
  CHECK_THROWS_AS(m.load(std::string(TG_FIXTURES_DIR) + "/nn/linear.f32.safetensors"), ValueError);  // foreign keys
  CHECK(raw_state(m) == before);
}

TEST_CASE("a damaged file fails with ValueError and changes nothing") {
  TempFile good, bad;
  Model().save(good.path);
  const std::string bytes = good.bytes();
  Model m;
  const auto before = raw_state(m);
  SUBCASE("truncated data") { bad.write(bytes.substr(0, bytes.size() - 5)); }
  SUBCASE("truncated header") { bad.write(bytes.substr(0, 20)); }
  SUBCASE("shorter than the header length") { bad.write(bytes.substr(0, 5)); }
  SUBCASE("corrupt header JSON") {
    std::string b = bytes;
    b[9] = '#';
    bad.write(b);
  }
  SUBCASE("header length past the end") {
    std::string b = bytes;
    b[7] = '\x01';
    bad.write(b);
  }
  SUBCASE("missing file") {}
  CHECK_THROWS_AS(m.load(bad.path), ValueError);
  CHECK(raw_state(m) == before);
}

TEST_CASE("save to a folder that does not exist throws Error naming the path") {
  Model m;
  CHECK_THROWS_WITH_AS(m.save("/nonexistent-folder/x.safetensors"),
                       doctest::Contains("/nonexistent-folder/x.safetensors"), Error);
}

// An undefined tensor used to crash the writer (a null storage read), and a name that is not UTF-8 escaped
// as nlohmann::json's type_error instead of a tg::Error.
TEST_CASE("save_safetensors refuses an undefined tensor and a name that is not UTF-8, leaving no file") {
  const fs::path path = fs::temp_directory_path() / fmt::format("tg-save-{}.safetensors", ::getpid());
  CHECK_THROWS_WITH_AS(save_safetensors(path.string(), {{"w", ones({2})}, {"u", Tensor()}}),
                       doctest::Contains("'u' is an undefined tensor"), ValueError);
  CHECK_THROWS_WITH_AS(save_safetensors(path.string(), {{"w\xff", ones({2})}}),
                       doctest::Contains("a tensor name or metadata string is not valid UTF-8"), ValueError);
  CHECK_THROWS_WITH_AS(save_safetensors(path.string(), {{"w", ones({2})}}, {{"note", "\xc3"}}),
                       doctest::Contains("not valid UTF-8"), ValueError);
  CHECK_FALSE(fs::exists(path));
  CHECK_FALSE(fs::exists(path.string() + ".tmp"));
}
