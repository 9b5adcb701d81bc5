// The Layer base: registration, dotted names, modes, gradients, state_dict loading (validated, all or
// nothing, into the existing storage), forward hooks.
#include <doctest/doctest.h>

#include "nn/dense.h"
#include "nn/fixture.h"
#include "nn/layer.h"

using namespace tg;

namespace {

// Two parameters and a buffer; the registration functions made public for the tests.
struct Leaf : nn::Layer {
  Variable w, b;
  Leaf() {
    w = register_parameter("w", tensor({1, 2, 3, 4}, {2, 2}));
    b = register_parameter("b", zeros({2}));
    register_buffer("running", ones({2}));
  }
  Variable forward(const Variable& x) override { return matmul(x, w) + b; }
  std::string type_name() const override { return "Leaf"; }
  using Layer::register_buffer;
  using Layer::register_layer;
  using Layer::register_parameter;
};

// A parameter of its own and three children, one of them a Dense.
struct Tree : nn::Layer {
  Leaf left, right;
  nn::Dense head{nn::DenseOptions{.in_features = 2, .out_features = 1}};
  Variable scale;
  Tree() {
    scale = register_parameter("scale", ones({1}));
    register_layer("left", left);
    register_layer("right", right);
    register_layer("head", head);
  }
  Variable forward(const Variable& x) override { return head(right(left(x))) * scale; }
  std::string type_name() const override { return "Tree"; }
};

std::vector<std::string> names(const nn::Layer& l) {
  std::vector<std::string> out;
  for (const auto& [name, p] : l.named_parameters()) out.push_back(name);
  return out;
}

// Every value of the layer's state, in key order, for before/after comparisons.
std::vector<std::vector<double>> snapshot(const nn::Layer& l) {
  std::vector<std::vector<double>> out;
  for (const auto& [name, t] : l.state_dict()) out.push_back(t.to_vector<double>());
  return out;
}

}  // namespace

TEST_CASE("named_parameters walks sub-layers depth first with dotted names, own parameters first") {
  Tree t;
  CHECK(names(t) ==
        std::vector<std::string>{"scale", "left.w", "left.b", "right.w", "right.b", "head.weight", "head.bias"});
  CHECK(t.parameters().size() == 7);
  CHECK(t.num_parameters() == 1 + 6 + 6 + 3);
  std::vector<std::string> buffers;
  for (const auto& [name, b] : t.named_buffers()) buffers.push_back(name);
  CHECK(buffers == std::vector<std::string>{"left.running", "right.running"});
  CHECK(t.named_children().size() == 3);
  CHECK(t.named_children()[2].second == &t.head);
}

TEST_CASE("register_* refuses empty, dotted and duplicate names, naming the layer and the name") {
  Leaf l;
  CHECK_THROWS_WITH_AS(l.register_parameter("w", zeros({1})),
                       "Leaf::register_parameter: name 'w' is already registered", ValueError);
  CHECK_THROWS_WITH_AS(l.register_buffer("b", zeros({1})), "Leaf::register_buffer: name 'b' is already registered",
                       ValueError);
  Leaf child;
  CHECK_THROWS_WITH_AS(l.register_layer("running", child), "Leaf::register_layer: name 'running' is already registered",
                       ValueError);
  CHECK_THROWS_WITH_AS(l.register_parameter("a.b", zeros({1})),
                       "Leaf::register_parameter: name 'a.b' must be non-empty and contain no '.'", ValueError);
  CHECK_THROWS_AS(l.register_layer("", child), ValueError);
  CHECK_THROWS_AS(l.register_layer("self", l), ValueError);
  CHECK_THROWS_WITH_AS(l.register_parameter("ids", zeros({1}, i64)),
                       "Leaf::register_parameter: 'ids' must be f32 or f64, got i64", DTypeError);
  CHECK(l.named_parameters().size() == 2);  // nothing was added by the failed calls
}

TEST_CASE("train and eval reach every sub-layer") {
  Tree t;
  CHECK(t.head.is_training());
  t.eval();
  CHECK_FALSE(t.is_training());
  CHECK_FALSE(t.left.is_training());
  CHECK_FALSE(t.head.is_training());
  t.train();
  CHECK(t.right.is_training());
}

TEST_CASE("zero_grad drops the gradient of every parameter, sub-layers included") {
  Tree t;
  sum(t(Variable(ones({3, 2})))).backward();
  for (const Variable& p : t.parameters()) CHECK(p.grad().defined());
  t.zero_grad();
  for (const Variable& p : t.parameters()) CHECK_FALSE(p.grad().defined());
}

TEST_CASE("a layer without a unary forward says so, naming its type") {
  struct NoForward : nn::Layer {
    std::string type_name() const override { return "NoForward"; }
  } l;
  CHECK_THROWS_WITH_AS(l(Variable(ones({1}))),
                       "NoForward: has no unary forward(Variable); call its own forward overload", Error);
}

TEST_CASE("state_dict holds parameters and buffers by dotted name, sharing storage with the layer") {
  Tree t;
  const TensorMap s = t.state_dict();
  CHECK(s.size() == 9);
  CHECK(s.count("left.running"));
  Tensor(s.at("left.w")).fill_(7.0);
  CHECK(t.left.w.value().to_vector<double>() == std::vector<double>{7, 7, 7, 7});
}

TEST_CASE("load_state_dict copies into the existing storage, so held Variables see the new values") {
  Tree t;
  const Variable held = t.left.w;  // as an optimizer holds it
  const void* storage = held.value().storage().get();
  TensorMap s;
  for (const auto& [k, v] : t.state_dict()) s[k] = full(v.shape(), 0.5, v.dtype());
  t.load_state_dict(s);
  CHECK(held.value().to_vector<double>() == std::vector<double>{0.5, 0.5, 0.5, 0.5});
  CHECK(t.left.w.value().storage().get() == storage);
  CHECK(t.state_dict().at("right.running").to_vector<double>() == std::vector<double>{0.5, 0.5});
}

TEST_CASE("load_state_dict lists every missing and unexpected key and changes nothing") {
  Leaf l;
  const auto before = snapshot(l);
  TensorMap s = {{"w", zeros({2, 2})}, {"extra", zeros({1})}, {"more", zeros({1})}};
  CHECK_THROWS_WITH_AS(l.load_state_dict(s),
                       "Leaf::load_state_dict: missing keys [b, running]; unexpected keys [extra, more]", ValueError);
  CHECK(snapshot(l) == before);
  s.erase("extra");
  s.erase("more");
  CHECK_THROWS_WITH_AS(l.load_state_dict(s), "Leaf::load_state_dict: missing keys [b, running]", ValueError);
  l.load_state_dict(s, /*strict=*/false);  // loads w alone
  CHECK(l.w.value().to_vector<double>() == std::vector<double>{0, 0, 0, 0});
  CHECK(l.state_dict().at("running").to_vector<double>() == std::vector<double>{1, 1});
}

TEST_CASE("load_state_dict names the key and both shapes or dtypes, after checking every key first") {
  Leaf l;
  const auto before = snapshot(l);
  // "b" sorts first and is fine; "w" is wrong: b must not be copied either.
  TensorMap s = {{"b", full({2}, 9.0)}, {"running", zeros({2})}, {"w", zeros({4})}};
  CHECK_THROWS_WITH_AS(l.load_state_dict(s),
                       "Leaf::load_state_dict: shape of 'w' differs: expected (2, 2) vs loaded (4,)", ShapeError);
  CHECK(snapshot(l) == before);
  s["w"] = zeros({2, 2}, f64);
  CHECK_THROWS_WITH_AS(l.load_state_dict(s), "Leaf::load_state_dict: dtype of 'w' differs: expected f32 vs loaded f64",
                       DTypeError);
  CHECK(snapshot(l) == before);
  CHECK_THROWS_AS(l.load_state_dict(s, /*strict=*/false), DTypeError);  // non-strict still checks what it loads
}

TEST_CASE("forward hooks run after operator() in order, see input and output, and can be removed") {
  Leaf l;
  std::vector<std::string> calls;
  const int first = l.register_forward_hook([&](nn::Layer& layer, const Variable& in, const Variable& out) {
    calls.push_back(fmt::format("{} {} -> {}", layer.type_name(), in.shape(), out.shape()));
  });
  l.register_forward_hook([&](nn::Layer&, const Variable&, const Variable& out) {
    calls.push_back(fmt::format("sum {}", sum(out).item()));
  });
  l(Variable(ones({1, 2})));  // [1 1]·[[1 2] [3 4]] = [4 6]
  CHECK(calls == std::vector<std::string>{"Leaf (1, 2) -> (1, 2)", "sum 10"});
  l.remove_forward_hook(first);
  calls.clear();
  l(Variable(ones({1, 2})));
  CHECK(calls == std::vector<std::string>{"sum 10"});
  l.forward(Variable(ones({1, 2})));  // forward alone runs no hooks
  CHECK(calls.size() == 1);
  CHECK_THROWS_WITH_AS(l.remove_forward_hook(first), "Leaf::remove_forward_hook: no hook with handle 0", ValueError);
}

TEST_CASE("a forward hook may remove itself while running") {
  Leaf l;
  int runs = 0, handle = -1;
  handle = l.register_forward_hook([&](nn::Layer& layer, const Variable&, const Variable&) {
    ++runs;
    layer.remove_forward_hook(handle);
  });
  l(Variable(ones({1, 2})));
  l(Variable(ones({1, 2})));
  CHECK(runs == 1);
}

TEST_CASE("summary shows the tree with the parameters of each subtree") {
  Tree t;
  CHECK(t.summary() ==
        "Layer (type)        Parameters\n"
        "==============================\n"
        "Tree                        16\n"
        "  left (Leaf)                6\n"
        "  right (Leaf)               6\n"
        "  head (Dense)               3\n"
        "==============================\n"
        "Total parameters: 16 (trainable: 16)\n");
}
