// BatchNorm1d/2d, GroupNorm and RMSNorm against PyTorch (fixtures nn/norms.*, gen_norms.py): outputs, input
// and parameter gradients, and the running statistics after each training step and in eval; errors.
#include <doctest/doctest.h>

#include <cmath>

#include "nn/norms_fixture.h"

using namespace tg;

namespace {

// Runs the fixture's calls on the module at `path`, in order on one layer that starts from PyTorch's state,
// checking each call's output and gradients and the buffers after it.
void check_sequence(const std::string& path, const char* file, double tol) {
  const nlohmann::json f = test::load_fixture(file);
  const DType dt = test::fixture_dtype(f);
  std::unique_ptr<nn::Layer> layer = test::make_norm_layer(path, dt);
  layer->load_state_dict(test::state_under(test::fixture_weights(f), path));
  int calls = 0;
  for (const nlohmann::json& c : f["cases"]) {
    if (c["module"] != path) continue;
    CAPTURE(c["name"].get<std::string>());
    layer->train(c["mode"] == "train");
    layer->zero_grad();
    Variable x(test::fixture_tensor(c["inputs"]["x"], dt), true);
    test::check_fixture_case(*layer, c, (*layer)(x), {{"x", x}}, tol);
    const auto buffers = layer->named_buffers();
    CHECK(buffers.size() == c["buffers_after"].size());
    for (const auto& [name, b] : buffers) {
      const Tensor want = test::fixture_tensor(c["buffers_after"][name], b.dtype());
      test::check_close(b, want, tol, name + " after " + c["name"].get<std::string>());
    }
    ++calls;
  }
  CHECK(calls > 0);
}

const char* const kFiles[] = {"nn/norms.f64.json", "nn/norms.f32.json"};
double tolerance_of(const char* file) { return std::string(file).find("f64") != std::string::npos ? 1e-10 : 1e-5; }

}  // namespace

TEST_CASE("BatchNorm1d matches torch over three training steps ((N, C) and (N, C, L)) and eval") {
  for (const char* file : kFiles) check_sequence("bn1d", file, tolerance_of(file));
}

TEST_CASE("BatchNorm2d matches torch over three training steps and eval") {
  for (const char* file : kFiles) check_sequence("bn2d", file, tolerance_of(file));
}

TEST_CASE("BatchNorm2d with momentum nullopt keeps torch's cumulative average from a loaded count") {
  for (const char* file : kFiles) check_sequence("bn2d_cma", file, tolerance_of(file));
}

TEST_CASE("BatchNorm2d without affine, with eps and momentum set, matches torch") {
  for (const char* file : kFiles) check_sequence("bn2d_noaffine", file, tolerance_of(file));
}

TEST_CASE("BatchNorm1d without running statistics uses the batch's in eval too, as torch") {
  for (const char* file : kFiles) check_sequence("bn1d_notrack", file, tolerance_of(file));
}

TEST_CASE("GroupNorm matches torch on (N, C, L) and (N, C, H, W), and as instance norm without affine") {
  for (const char* file : kFiles) {
    check_sequence("gn.0", file, tolerance_of(file));
    check_sequence("gn.1", file, tolerance_of(file));
  }
}

TEST_CASE("RMSNorm matches PyTorch 2.4's formula: default eps, two normalised dims, no weight") {
  for (const char* file : kFiles)
    for (const char* path : {"rms.0", "rms.1", "rms.2"}) check_sequence(path, file, tolerance_of(file));
}

TEST_CASE("BatchNorm's state_dict holds PyTorch's keys, num_batches_tracked as an i64 scalar") {
  nn::BatchNorm2d bn({.num_features = 4});
  const TensorMap sd = bn.state_dict();
  std::vector<std::string> keys;
  for (const auto& [key, t] : sd) keys.push_back(key);
  CHECK(keys == std::vector<std::string>{"bias", "num_batches_tracked", "running_mean", "running_var", "weight"});
  CHECK(sd.at("num_batches_tracked").dtype() == i64);
  CHECK(sd.at("num_batches_tracked").dim() == 0);
  CHECK(test::max_abs_diff(sd.at("running_var"), ones({4})) == 0);
  nn::BatchNorm1d plain({.num_features = 4, .affine = false, .track_running_stats = false});
  CHECK(plain.state_dict().empty());
}

TEST_CASE("BatchNorm counts batches in training only, and reset_running_stats starts over") {
  nn::BatchNorm1d bn({.num_features = 2, .dtype = f64});
  bn(Variable(randn({4, 2}, f64)));
  bn(Variable(randn({4, 2}, f64)));
  CHECK(bn.num_batches_tracked().item() == 2);
  bn.eval();
  const Tensor before = bn.running_mean().clone();
  bn(Variable(randn({4, 2}, f64)));
  CHECK(bn.num_batches_tracked().item() == 2);
  CHECK(test::max_abs_diff(bn.running_mean(), before) == 0);
  bn.reset_running_stats();
  CHECK(bn.num_batches_tracked().item() == 0);
  CHECK(test::max_abs_diff(bn.running_mean(), zeros({2}, f64)) == 0);
  CHECK(test::max_abs_diff(bn.running_var(), ones({2}, f64)) == 0);
}

TEST_CASE("BatchNorm refuses one value per channel in training, leaving its statistics alone") {
  nn::BatchNorm1d bn({.num_features = 3});
  CHECK_THROWS_WITH_AS(bn(Variable(randn({1, 3}))),
                       "batch_norm: expected more than 1 value per channel when training, got input (1, 3)",
                       ValueError);
  CHECK(bn.num_batches_tracked().item() == 0);
  bn.eval();
  CHECK(bn(Variable(randn({1, 3}))).shape() == Shape{1, 3});  // eval uses the running statistics
}

TEST_CASE("BatchNorm names the expected rank and channel count") {
  nn::BatchNorm1d bn1({.num_features = 3});
  CHECK_THROWS_WITH_AS(bn1(Variable(randn({2, 3, 4, 5}))),
                       "BatchNorm1d: input must be (N, C) or (N, C, L), got (2, 3, 4, 5)", ShapeError);
  CHECK_THROWS_WITH_AS(bn1(Variable(randn({2, 4}))), "BatchNorm1d: input (2, 4) has 4 channels (dim 1), expected 3",
                       ShapeError);
  nn::BatchNorm2d bn2({.num_features = 3});
  CHECK_THROWS_WITH_AS(bn2(Variable(randn({2, 3, 4}))), "BatchNorm2d: input must be (N, C, H, W), got (2, 3, 4)",
                       ShapeError);
}

TEST_CASE("BatchNorm, GroupNorm and RMSNorm refuse bad options") {
  CHECK_THROWS_WITH_AS(nn::BatchNorm1d({.num_features = 3, .eps = 0}), "BatchNorm1d: eps must be > 0, got 0",
                       ValueError);
  CHECK_THROWS_WITH_AS(nn::BatchNorm2d({.num_features = 3, .momentum = 1.5}),
                       "BatchNorm2d: momentum must be in [0, 1], got 1.5", ValueError);
  CHECK_THROWS_AS(nn::BatchNorm2d({.num_features = 3, .momentum = -0.1}), ValueError);
  CHECK_THROWS_AS(nn::BatchNorm1d({.num_features = 0}), ValueError);
  CHECK_THROWS_WITH_AS(nn::GroupNorm({.num_groups = 4, .num_channels = 6}),
                       "GroupNorm: num_channels 6 is not divisible by num_groups 4", ValueError);
  CHECK_THROWS_AS(nn::GroupNorm({.num_groups = 0, .num_channels = 6}), ValueError);
  CHECK_THROWS_WITH_AS(nn::GroupNorm({.num_groups = 2, .num_channels = 6, .eps = -1e-5}),
                       "GroupNorm: eps must be > 0, got -1e-05", ValueError);
  CHECK_THROWS_AS(nn::RMSNorm({.normalized_shape = {}}), ValueError);
  CHECK_THROWS_AS(nn::RMSNorm({.normalized_shape = {4, 0}}), ValueError);
  CHECK_THROWS_WITH_AS(nn::RMSNorm({.normalized_shape = {4}, .eps = 0.0}), "RMSNorm: eps must be > 0, got 0",
                       ValueError);
}

TEST_CASE("GroupNorm and RMSNorm name the shapes they expected") {
  nn::GroupNorm gn({.num_groups = 2, .num_channels = 6});
  CHECK_THROWS_WITH_AS(gn(Variable(randn({6}))), "GroupNorm: input must be (N, C, *), got (6,)", ShapeError);
  CHECK_THROWS_WITH_AS(gn(Variable(randn({2, 4, 3}))), "GroupNorm: input (2, 4, 3) has 4 channels (dim 1), expected 6",
                       ShapeError);
  nn::RMSNorm rms({.normalized_shape = {3, 4}});
  CHECK_THROWS_WITH_AS(rms(Variable(randn({2, 4, 3}))), "RMSNorm: input (2, 4, 3) must end in normalized_shape (3, 4)",
                       ShapeError);
  CHECK_THROWS_AS(rms(Variable(randn({4}))), ShapeError);
}

TEST_CASE("the functions name the op and both shapes for per-channel tensors and groups") {
  const Variable x(randn({2, 3, 4}));
  CHECK_THROWS_WITH_AS(batch_norm(x, zeros({4}), ones({4}), Variable(), Variable(), true),
                       "batch_norm: running_mean must be (3,) for input (2, 3, 4), got (4,)", ShapeError);
  CHECK_THROWS_WITH_AS(batch_norm(x, Tensor(), Tensor(), Variable(ones({3}, f64)), Variable(), true),
                       "batch_norm: weight is f64 but the input is f32", DTypeError);
  CHECK_THROWS_AS(batch_norm(x, Tensor(), Tensor(), Variable(), Variable(), false), ValueError);
  CHECK_THROWS_WITH_AS(batch_norm(x, Tensor(), Tensor(), Variable(), Variable(), true, 1.2),
                       "batch_norm: momentum must be in [0, 1], got 1.2", ValueError);
  CHECK_THROWS_WITH_AS(group_norm(x, 2, Variable(), Variable()),
                       "group_norm: 3 channels of input (2, 3, 4) are not divisible by num_groups 2", ValueError);
  CHECK_THROWS_WITH_AS(group_norm(x, 3, Variable(ones({4})), Variable()),
                       "group_norm: weight must be (3,) for input (2, 3, 4), got (4,)", ShapeError);
  CHECK_THROWS_WITH_AS(rms_norm(x, 1, Variable(ones({3}))), "rms_norm: weight must be (4,) for input (2, 3, 4), got (3,)",
                       ShapeError);
  CHECK_THROWS_AS(rms_norm(x, 4, Variable()), ShapeError);
}

TEST_CASE("RMSNorm's default eps is the machine epsilon of the input's dtype") {
  // A zero row: y = 0·rsqrt(0 + eps) = 0 whatever eps, so probe x = tiny instead, where eps dominates.
  const double tiny = 1e-9;
  for (DType dt : {f32, f64}) {
    nn::RMSNorm rms({.normalized_shape = {2}, .elementwise_affine = false, .dtype = dt});
    const double eps = dt == f32 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
    const double want = tiny / std::sqrt(tiny * tiny + eps);
    const Tensor y = rms(Variable(full({1, 2}, tiny, dt))).value();
    CHECK(y.to(f64).to_vector<double>()[0] == doctest::Approx(want).epsilon(1e-6));
  }
}
