// Deferred shapes (Keras's build, PyTorch's Lazy* modules): a Dense without in_features and a user layer
// that makes its weights in build(); the error before the build, and save/load/summary after it.
#include <doctest/doctest.h>

#include "nn/activation.h"
#include "nn/dense.h"
#include "nn/save_model.h"
#include "nn/sequential.h"
#include "nn/temp_file.h"

using namespace tg;
using tg::test::TempFile;

namespace {

// Keras style: the width of the weight comes from the first input; build() counts its runs.
struct Scale : nn::Layer {
  Variable gain;
  int builds = 0;
  Scale() { defer_build(); }
  void build(const Shape& input_shape) override {
    ++builds;
    gain = register_parameter("gain", full({input_shape.back()}, 2.0));
  }
  Variable forward(const Variable& x) override { return x * gain; }
};

// Two lazy Dense layers with a ReLU between: (..., any) -> (..., 2).
void add_lazy_mlp(nn::Sequential& net) {
  net.emplace<nn::Dense>(nn::DenseOptions{.out_features = 3});
  net.emplace<nn::ReLU>();
  net.emplace<nn::Dense>(nn::DenseOptions{.out_features = 2});
}

}  // namespace

TEST_CASE("a Dense without in_features infers it and draws the weights an eager Dense would") {
  const Variable x(randn({2, 4}));
  manual_seed(7);
  nn::Dense eager({.in_features = 4, .out_features = 3});
  manual_seed(7);
  nn::Dense lazy({.out_features = 3});
  CHECK_FALSE(lazy.is_built());
  const Variable y = lazy(x);  // the build draws here what eager drew at construction
  CHECK(lazy.is_built());
  CHECK(lazy.options().in_features == 4);
  CHECK(lazy.weight().shape() == Shape{3, 4});
  CHECK(lazy.weight().value().to_vector<float>() == eager.weight().value().to_vector<float>());
  CHECK(y.value().to_vector<float>() == eager(x).value().to_vector<float>());
  CHECK_THROWS_WITH_AS(lazy(Variable(zeros({2, 5}))), "Dense: input (2, 5) must end in in_features 4", ShapeError);
}

TEST_CASE("parameters() of a model that is not built names the layer, so no optimizer misses weights") {
  nn::Sequential net;
  add_lazy_mlp(net);
  CHECK_THROWS_WITH_AS(net.parameters(),
                       doctest::Contains("Sequential: the Dense '0' is not built yet: it makes its parameters on its "
                                         "first input; run the model once on an example input (a dry run)"),
                       ValueError);
  CHECK_THROWS_AS(net.state_dict(), ValueError);
  CHECK_THROWS_AS(net.summary(), ValueError);
  {
    NoGradGuard dry_run;
    net(Variable(zeros({1, 5})));
  }
  CHECK(net.parameters().size() == 4);
  CHECK(net.num_parameters() == 3 * 5 + 3 + 2 * 3 + 2);
}

TEST_CASE("build() runs once, on the first call, and ensure_built makes the weights without a dry run") {
  Scale called, shaped;
  CHECK_THROWS_AS(called.parameters(), ValueError);
  const Variable x(tensor({1, 2, 3}, {1, 3}));
  CHECK(called(x).value().to_vector<float>() == std::vector<float>{2, 4, 6});
  called(x);
  CHECK(called.builds == 1);
  shaped.ensure_built({5, 3});
  shaped.ensure_built({5, 3});
  CHECK(shaped.builds == 1);
  CHECK(shaped.gain.shape() == Shape{3});
}

TEST_CASE("after the build, save/load, save_model/load_model and summary see the inferred shapes") {
  manual_seed(3);
  nn::Sequential net;
  add_lazy_mlp(net);
  const Variable x(randn({4, 5}));
  const std::vector<float> y = net(x).value().to_vector<float>();

  TempFile weights, model;
  net.save(weights.path);
  nn::Sequential copy;
  add_lazy_mlp(copy);
  CHECK_THROWS_AS(copy.load(weights.path), ValueError);  // nothing to load into yet
  copy(x);
  copy.load(weights.path);
  CHECK(copy(x).value().to_vector<float>() == y);

  nn::save_model(net, model.path);
  const std::unique_ptr<nn::Layer> loaded = nn::load_model(model.path);
  CHECK((*loaded)(x).value().to_vector<float>() == y);
  CHECK(net.summary().find("Total parameters: 26 (trainable: 26)") != std::string::npos);
}
