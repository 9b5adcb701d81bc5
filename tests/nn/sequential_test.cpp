// Sequential: owns its layers, names them "0", "1", ..., chains them (running each one's hooks), and
// reads in summary() as a tree.
#include <doctest/doctest.h>

#include "autograd/gradcheck.h"
#include "nn/activation.h"
#include "nn/dense.h"
#include "nn/embedding.h"
#include "nn/fixture.h"
#include "nn/sequential.h"

using namespace tg;

namespace {

// Dense(3 -> 4), ReLU, Dense(4 -> 2) in f64, seeded.
void build_mlp(nn::Sequential& net) {
  manual_seed(6);
  net.emplace<nn::Dense>(nn::DenseOptions{.in_features = 3, .out_features = 4, .dtype = f64});
  net.emplace<nn::ReLU>();
  net.add(std::make_unique<nn::Dense>(nn::DenseOptions{.in_features = 4, .out_features = 2, .dtype = f64}));
}

}  // namespace

TEST_CASE("Sequential registers its layers as 0, 1, ... like PyTorch") {
  nn::Sequential net;
  build_mlp(net);
  std::vector<std::string> names;
  for (const auto& [name, p] : net.named_parameters()) names.push_back(name);
  CHECK(names == std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"});
  CHECK(net.size() == 3);
  CHECK(net[1].type_name() == "ReLU");
  CHECK_THROWS_WITH_AS(net[3], "Sequential: index 3 is out of range for 3 layers", IndexError);
  CHECK_THROWS_AS(net.add(nullptr), ValueError);
}

TEST_CASE("Sequential applies its layers in order, and an empty one is the identity") {
  nn::Sequential net;
  build_mlp(net);
  const Variable x(randn({5, 3}, f64));
  const Variable want = net[2](relu(net[0](x)));
  CHECK(test::max_abs_diff(net(x).value(), want.value()) == 0);
  nn::Sequential empty;
  CHECK(test::max_abs_diff(empty(x).value(), x.value()) == 0);
}

TEST_CASE("Sequential passes gradcheck in f64 through every layer's parameters") {
  nn::Sequential net;
  build_mlp(net);
  std::vector<Variable> inputs{Variable(randn({2, 3}, f64), true)};
  for (const Variable& p : net.parameters()) inputs.push_back(p);
  CHECK(gradcheck([&](const std::vector<Variable>& x) { return net(x[0]); }, inputs));
}

TEST_CASE("Sequential runs the hooks of its layers and its own") {
  nn::Sequential net;
  build_mlp(net);
  std::vector<std::string> trace;
  auto record_shape = [&](nn::Layer& l, const Variable& in, const Variable& out) {
    trace.push_back(fmt::format("{} {} -> {}", l.type_name(), in.shape(), out.shape()));
  };
  for (int64_t i = 0; i < net.size(); ++i) net[i].register_forward_hook(record_shape);
  net.register_forward_hook(record_shape);
  net(Variable(zeros({5, 3}, f64)));
  CHECK(trace == std::vector<std::string>{"Dense (5, 3) -> (5, 4)", "ReLU (5, 4) -> (5, 4)", "Dense (5, 4) -> (5, 2)",
                                          "Sequential (5, 3) -> (5, 2)"});
}

TEST_CASE("Sequential can start with an Embedding fed i64 indices in a Variable") {
  nn::Sequential net;
  net.emplace<nn::Embedding>(nn::EmbeddingOptions{.num_embeddings = 6, .embedding_dim = 3});
  net.emplace<nn::Dense>(nn::DenseOptions{.in_features = 3, .out_features = 2});
  CHECK(net(Variable(index_tensor({1, 5, 0, 2}, {2, 2}))).shape() == Shape{2, 2, 2});
}

TEST_CASE("summary of nested Sequentials shows names, types and subtree parameter counts") {
  nn::Sequential net;
  build_mlp(net);
  nn::Sequential& inner = net.emplace<nn::Sequential>();
  inner.emplace<nn::Dense>(nn::DenseOptions{.in_features = 2, .out_features = 1, .bias = false});
  inner.emplace<nn::Sigmoid>();
  CHECK(net.summary() ==
        "Layer (type)          Parameters\n"
        "================================\n"
        "Sequential                    28\n"
        "  0 (Dense)                   16\n"
        "  1 (ReLU)                     0\n"
        "  2 (Dense)                   10\n"
        "  3 (Sequential)               2\n"
        "    0 (Dense)                  2\n"
        "    1 (Sigmoid)                0\n"
        "================================\n"
        "Total parameters: 28 (trainable: 28)\n");
}
