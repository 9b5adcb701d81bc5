// Hooks on a variable's gradient (Variable::register_hook, as PyTorch's Tensor.register_hook): when they run,
// in what order, with what gradient, how a returned gradient replaces it, and removal. Values by hand.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "autograd/check.h"
#include "autograd/functions.h"

using namespace tg;
using tg::test::check_values;
using tg::test::leaf;

TEST_CASE("a leaf's hooks run in order, once, with the gradient summed over its uses, before accumulation") {
  Variable x = leaf({1, 2});
  std::vector<std::string> calls;
  x.register_hook([&](const Variable& g) {
    calls.push_back("first");
    check_values(g.value(), {6, 8});  // y = 3x + x² + x: dy/dx = 4 + 2x
    CHECK_FALSE(x.grad().defined());  // not accumulated yet
    return Variable();                // keep it
  });
  x.register_hook([&](const Variable& g) {
    calls.push_back("second");
    return Variable(g.value() * 2.0);  // replaces it
  });
  sum(x * 3.0 + x * x + x).backward();
  CHECK(calls == std::vector<std::string>{"first", "second"});
  check_values(x.grad(), {12, 16});
}

TEST_CASE("a hook on an op's output changes the gradient that flows into that op") {
  Variable x = leaf({1, 2});
  Variable h = x * x;  // dh/dx = 2x
  h.retain_grad();
  std::vector<double> seen;
  h.register_hook([&](const Variable& g) {
    seen = g.value().to_vector<double>();
    return Variable(g.value() * 10.0);
  });
  sum(h * 3.0).backward();
  CHECK(seen == std::vector<double>{3, 3});
  check_values(h.grad(), {30, 30});  // retain_grad keeps the hooked gradient
  check_values(x.grad(), {60, 120});
}

TEST_CASE("hooks on an output run before the hooks of what it was made from") {
  Variable x = leaf({1});
  Variable h = exp(x);
  std::vector<std::string> calls;
  x.register_hook([&](const Variable&) { return calls.push_back("x"), Variable(); });
  h.register_hook([&](const Variable&) { return calls.push_back("h"), Variable(); });
  sum(h).backward();
  CHECK(calls == std::vector<std::string>{"h", "x"});
}

TEST_CASE("a removed hook no longer runs; removing it twice throws") {
  Variable x = leaf({1, 2});
  int runs = 0;
  const int handle = x.register_hook([&](const Variable&) { return ++runs, Variable(); });
  sum(x).backward();
  x.remove_hook(handle);
  sum(x).backward();
  CHECK(runs == 1);
  CHECK_THROWS_WITH_AS(x.remove_hook(handle), doctest::Contains("no hook with handle 0"), ValueError);
}

TEST_CASE("hooks run for tg::grad and leave grad() alone") {
  Variable x = leaf({2});
  x.register_hook([](const Variable& g) { return Variable(g.value() + 1.0); });
  const std::vector<Variable> g = grad({sum(x * x)}, {x});
  check_values(g[0].value(), {5});  // 2x + 1
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("register_hook refuses a variable without grad and a gradient of another shape") {
  Variable c(zeros({2}, f64));
  CHECK_THROWS_WITH_AS(c.register_hook([](const Variable& g) { return g; }),
                       doctest::Contains("register_hook: the variable (shape (2,)) does not require grad"), ValueError);
  Variable x = leaf({1, 2});
  x.register_hook([](const Variable&) { return Variable(zeros({3}, f64)); });
  CHECK_THROWS_WITH_AS(sum(x).backward(),
                       doctest::Contains("hook 0 returned a gradient (3,) f64 for a gradient (2,) f64"), ShapeError);
}
