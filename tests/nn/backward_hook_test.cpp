// Layer backward hooks (register_backward_hook, PyTorch's register_full_backward_hook): the gradients they
// see, their order within a layer and across a Sequential, replacing grad_input, inputs without grad, removal.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "nn/activation.h"
#include "nn/dense.h"
#include "nn/sequential.h"

using namespace tg;
using namespace tg::nn;

namespace {

// y = 2x, elementwise: grad_input = 2·grad_output, easy to check by hand.
struct Double : Layer {
  Variable forward(const Variable& x) override { return x * 2.0; }
  std::string type_name() const override { return "Double"; }
};

std::vector<double> values(const Variable& v) { return v.value().to_vector<double>(); }

}  // namespace

TEST_CASE("a backward hook sees dL/dx and dL/dy, and hooks of one layer run in registration order") {
  Double d;
  std::vector<std::string> calls;
  d.register_backward_hook([&](Layer& l, const Variable& gx, const Variable& gy) {
    calls.push_back("first " + l.type_name());
    CHECK(values(gy) == std::vector<double>{1, 2});  // L = Σ y·[1, 2]
    CHECK(values(gx) == std::vector<double>{2, 4});
    return Variable();
  });
  d.register_backward_hook(
      [&](Layer&, const Variable&, const Variable&) { return calls.push_back("second"), Variable(); });
  Variable x(tensor({3.0, 4.0}, {2}, f64), true);
  sum(d(x) * Variable(tensor({1.0, 2.0}, {2}, f64))).backward();
  CHECK(calls == std::vector<std::string>{"first Double", "second"});
  CHECK(values(Variable(x.grad())) == std::vector<double>{2, 4});
}

TEST_CASE("a backward hook's return value replaces grad_input for later hooks and for the input") {
  Double d;
  std::vector<double> seen_by_second;
  d.register_backward_hook([](Layer&, const Variable& gx, const Variable&) { return Variable(gx.value() * 10.0); });
  d.register_backward_hook([&](Layer&, const Variable& gx, const Variable&) {
    seen_by_second = values(gx);
    return Variable();
  });
  Variable x(tensor({3.0, 4.0}, {2}, f64), true);
  sum(d(x)).backward();
  CHECK(seen_by_second == std::vector<double>{20, 20});
  CHECK(values(Variable(x.grad())) == std::vector<double>{20, 20});
}

TEST_CASE("backward hooks fire from the last layer of a Sequential to the first, and change upstream gradients") {
  Sequential net;
  net.emplace<Dense>(DenseOptions{.in_features = 2, .out_features = 2, .dtype = f64});
  net.emplace<Tanh>();
  std::vector<std::string> calls;
  net[1].register_backward_hook(
      [&](Layer& l, const Variable&, const Variable&) { return calls.push_back(l.type_name()), Variable(); });
  net[0].register_backward_hook([&](Layer& l, const Variable& gx, const Variable&) {
    calls.push_back(l.type_name());
    return Variable(zeros_like(gx.value()));  // cut the gradient to the input
  });
  Variable x(tensor({0.5, -1.0}, {1, 2}, f64), true);
  sum(net(x)).backward();
  CHECK(calls == std::vector<std::string>{"Tanh", "Dense"});
  CHECK(values(Variable(x.grad())) == std::vector<double>{0, 0});
  CHECK(net[0].parameters()[0].grad().defined());  // the layer's own parameters still get theirs
}

TEST_CASE("with an input that needs no grad the hook gets an undefined grad_input and grad_output") {
  Dense dense({.in_features = 2, .out_features = 1, .dtype = f64});
  int runs = 0;
  dense.register_backward_hook([&](Layer&, const Variable& gx, const Variable& gy) {
    ++runs;
    CHECK_FALSE(gx.defined());
    CHECK(gy.shape() == Shape{1, 1});
    return Variable();
  });
  sum(dense(Variable(ones({1, 2}, f64)))).backward();
  CHECK(runs == 1);
  CHECK(dense.weight().grad().defined());
}

TEST_CASE("a removed backward hook no longer runs; a bad handle or a wrong shape throws") {
  Double d;
  int runs = 0;
  const int handle =
      d.register_backward_hook([&](Layer&, const Variable&, const Variable&) { return ++runs, Variable(); });
  Variable x(tensor({1.0, 2.0}, {2}, f64), true);
  sum(d(x)).backward();
  d.remove_backward_hook(handle);
  sum(d(x)).backward();
  CHECK(runs == 1);
  CHECK_THROWS_WITH_AS(d.remove_backward_hook(handle),
                       doctest::Contains("Double::remove_backward_hook: no hook with handle"), ValueError);
  d.register_backward_hook([](Layer&, const Variable&, const Variable&) { return Variable(zeros({3}, f64)); });
  CHECK_THROWS_WITH_AS(sum(d(x)).backward(),
                       doctest::Contains("Double: backward hook 1 returned grad_input of shape (3,) for (2,)"),
                       ShapeError);
}
