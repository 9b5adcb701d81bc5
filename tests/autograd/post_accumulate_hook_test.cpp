// Variable::register_post_accumulate_grad_hook: once per backward, with the gradient summed over every use,
// as soon as the leaf's last use has been differentiated (DistributedDataParallel starts its allreduce there).
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "autograd/check.h"
#include "autograd/functions.h"

using namespace tg;
using tg::test::check_values;
using tg::test::leaf;

TEST_CASE("a post-accumulate hook runs once per backward with the gradient summed over all uses") {
  Variable x = leaf({1, 2});
  std::vector<std::vector<double>> seen;
  x.register_post_accumulate_grad_hook([&](const Tensor& g) { seen.push_back(g.to_vector<double>()); });
  sum(x * x + x * 3.0).backward();  // d/dx = 2x + 3
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == std::vector<double>{5, 7});
  sum(x * x + x * 3.0).backward();  // accumulated: the hook sees grad(), not this backward's part
  REQUIRE(seen.size() == 2);
  CHECK(seen[1] == std::vector<double>{10, 14});
}

TEST_CASE("a post-accumulate hook runs as soon as the leaf's last use is differentiated") {
  // out = Σ tanh(w1 · x) · w2: w2's only use (the last op) is differentiated first, before w1's gradient exists.
  Variable x = leaf({0.5, -1}), w1 = leaf({2, 3}), w2 = leaf({1, 4});
  std::vector<std::string> order;
  bool w1_grad_at_w2_hook = true;
  w2.register_post_accumulate_grad_hook([&](const Tensor&) {
    order.push_back("w2");
    w1_grad_at_w2_hook = w1.grad().defined();
  });
  w1.register_post_accumulate_grad_hook([&](const Tensor&) { order.push_back("w1"); });
  sum(tanh(w1 * x) * w2).backward();
  CHECK(order == std::vector<std::string>{"w2", "w1"});
  CHECK_FALSE(w1_grad_at_w2_hook);
  check_values(w2.grad(), {std::tanh(1.0), std::tanh(-3.0)});
}

TEST_CASE("a post-accumulate hook runs on a root leaf, not for an unreached leaf, nor in tg::grad") {
  Variable x = leaf({1, 2}), unused = leaf({3});
  int x_calls = 0, unused_calls = 0;
  x.register_post_accumulate_grad_hook([&](const Tensor& g) { ++x_calls, check_values(g, {1, 1}); });
  unused.register_post_accumulate_grad_hook([&](const Tensor&) { ++unused_calls; });
  x.backward(ones({2}, DType::f64));
  CHECK(x_calls == 1);
  grad({sum(x * x)}, {x});
  CHECK(x_calls == 1);
  CHECK(unused_calls == 0);
}

TEST_CASE("remove_post_accumulate_grad_hook stops a hook; bad handles and non-leaves throw ValueError") {
  Variable x = leaf({1, 2});
  int calls = 0;
  const int handle = x.register_post_accumulate_grad_hook([&](const Tensor&) { ++calls; });
  x.remove_post_accumulate_grad_hook(handle);
  sum(x * x).backward();
  CHECK(calls == 0);
  CHECK_THROWS_WITH_AS(x.remove_post_accumulate_grad_hook(handle),
                       "remove_post_accumulate_grad_hook: no hook with handle 0 on this variable", ValueError);
  CHECK_THROWS_WITH_AS((x * 2.0).register_post_accumulate_grad_hook([](const Tensor&) {}),
                       "register_post_accumulate_grad_hook: the variable (shape (2,)) is not a leaf that requires grad",
                       ValueError);
}

TEST_CASE("a post-accumulate hook sees the gradient that register_hook's hooks made and grad() accumulated") {
  Variable x = leaf({1, 2});
  std::vector<double> seen;
  x.register_hook([](const Variable& g) { return Variable(g.value() * 10.0); });
  x.register_post_accumulate_grad_hook([&](const Tensor& g) { seen = g.to_vector<double>(); });
  sum(x * x + x).backward();  // (2x + 1) · 10
  CHECK(seen == std::vector<double>{30, 50});
  check_values(x.grad(), {30, 50});
}
