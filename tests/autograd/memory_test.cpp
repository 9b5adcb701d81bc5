// Memory behaviour of the graph: deep chains are built, walked and destroyed without recursion, a
// training-like loop allocates nothing that outlives an iteration, and dropping a graph frees every
// record in it (no reference cycles).
#include <doctest/doctest.h>

#include <cmath>
#include <memory>

#include "autograd/check.h"
#include "autograd/functions.h"
#include "core/random.h"

using namespace tg;
using tg::test::check_values;
using tg::test::leaf;

namespace {
constexpr int kDeep = 100'000;
}  // namespace

TEST_CASE("a chain of 100 000 ops builds, backprops and is destroyed without overflowing the stack") {
  const double c = 1.0000001;
  Variable x = leaf({1});
  {
    Variable y = x;
    for (int i = 0; i < kDeep; ++i) y = y * c;
    y.backward(ones({1}, f64));
    CHECK(y.item() == doctest::Approx(std::pow(c, kDeep)).epsilon(1e-9));
  }  // the freed graph's records go here
  check_values(x.grad(), {std::pow(c, kDeep)}, 1e-9);
}

TEST_CASE("a chain of 100 000 ops is destroyed without overflowing the stack, with or without a retained graph") {
  Variable x = leaf({2});
  SUBCASE("never differentiated") {
    Variable y = x;
    for (int i = 0; i < kDeep; ++i) y = y + 0.0;
    CHECK(y.item() == 2);
  }
  SUBCASE("after backward with retain_graph") {
    Variable y = x;
    for (int i = 0; i < kDeep; ++i) y = y + 0.0;
    y.backward(ones({1}, f64), {.retain_graph = true});
    check_values(x.grad(), {1});
  }
}

TEST_CASE("the differentiable gradient of a 100 000-op chain is destroyed without overflowing the stack") {
  // y = x·wᴺ with x = w = 1: dy/dw = N·wᴺ⁻¹ = N. With create_graph that gradient carries its own graph: a
  // chain of N products (dy/dyₖ = wᴺ⁻ᵏ) and a chain of N additions (the sum over the N uses of w).
  // (Its second derivative is left to the Hessian tests: walking this graph again takes half a minute in
  // a Debug build.)
  Variable x = leaf({1}), w = leaf({1});
  Variable y = x;
  for (int i = 0; i < kDeep; ++i) y = y * w;
  Variable g = grad({y}, {w}, {ones({1}, f64)}, {.create_graph = true})[0];
  CHECK(g.requires_grad());
  check_values(g.value(), {double(kDeep)});
}

TEST_CASE("2000 training-like iterations leave no storage behind") {
  // A tiny regression, tanh(x·w + b) against t, with plain SGD applied in place under NoGradGuard.
  Generator gen(0);
  Variable w(randn({4, 3}, f64, &gen), true), b(zeros({3}, f64), true);
  const Variable x(randn({8, 4}, f64, &gen)), t(rand({8, 3}, f64, &gen, -0.5, 0.5));
  auto step = [&] {
    Variable h = tanh(matmul(x, w) + b);  // (8, 3)
    Variable loss = mean((h - t) * (h - t));
    loss.backward();
    NoGradGuard no_grad;
    for (Variable* p : {&w, &b}) {
      Tensor value = p->value();
      value.add_(p->grad(), -0.5);
      p->zero_grad();
    }
    return loss.item();
  };
  const double first = step();
  for (int i = 0; i < 9; ++i) step();
  const int64_t warm = live_storages();
  double last = 0;
  for (int i = 0; i < 2000; ++i) last = step();
  CHECK(live_storages() == warm);
  CHECK(last < first / 2);  // it did train
}

TEST_CASE("dropping a graph frees its records and values: no reference cycles") {
  Variable x = leaf({0.5, -1, 2});
  const int64_t before = live_storages();
  std::weak_ptr<AutogradMeta> meta;
  std::weak_ptr<Node> node;
  SUBCASE("after backward") {
    {
      Variable h = tanh(x * 2.0);  // tanh keeps its output: the node holds a value, not the record
      meta = h.meta(), node = h.grad_fn();
      sum(h * h).backward();
    }
    x.zero_grad();
  }
  SUBCASE("without backward") {
    Variable h = exp(x * 2.0);
    meta = h.meta(), node = h.grad_fn();
    Variable y = sum(h * x);
  }
  SUBCASE("after a second derivative through tg::grad") {
    Variable h = tanh(x * 2.0);
    meta = h.meta(), node = h.grad_fn();
    Variable g = grad({sum(h * h)}, {x}, {}, {.create_graph = true})[0];
    grad({sum(g)}, {x});
  }
  CHECK(meta.expired());
  CHECK(node.expired());
  CHECK(live_storages() == before);
}

TEST_CASE("backward with create_graph keeps the gradient's graph in the leaf until zero_grad") {
  // The leaf's grad is differentiable, so it holds a graph whose backward captures the leaf: a cycle, as
  // in PyTorch. zero_grad (or tg::grad, which stores nothing) breaks it.
  Variable x = leaf({0.5, -1});
  const int64_t before = live_storages();
  std::weak_ptr<Node> node;
  {
    Variable y = sum(tanh(x) * x);
    y.backward({.create_graph = true});
    node = x.grad_variable().grad_fn();
  }
  REQUIRE(node.lock() != nullptr);
  x.zero_grad();
  CHECK(node.expired());
  CHECK(live_storages() == before);
}
