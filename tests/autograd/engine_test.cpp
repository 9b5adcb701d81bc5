// The backward engine and the Variable API, one behaviour per case, each on hand-derived values:
// accumulation, fan-out, broadcast reduction, freed graphs, in-place checks, grad modes, tg::grad,
// second derivatives, anomaly detection and the DOT export.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "autograd/check.h"
#include "autograd/functions.h"
#include "autograd/node.h"

using namespace tg;
using tg::test::check_values;
using tg::test::leaf;

TEST_CASE("gradients accumulate into leaves across backward calls until zero_grad") {
  Variable x = leaf({1, 2});
  sum(x * x).backward();  // d/dx Σx² = 2x
  check_values(x.grad(), {2, 4});
  sum(x * x).backward();
  check_values(x.grad(), {4, 8});
  x.zero_grad();
  CHECK_FALSE(x.grad().defined());
  sum(x * x).backward();
  check_values(x.grad(), {2, 4});
}

// The engine runs a graph's nodes latest first by their creation numbers, so a node must never be numbered below
// the nodes it takes inputs from, even while another thread records its own graph (an ensemble's members).
TEST_CASE("nodes recorded on two threads at once get distinct numbers, increasing on each thread") {
  constexpr int ops = 50000;
  std::vector<uint64_t> numbers[2];
  auto chain = [&](std::vector<uint64_t>& out) {
    Variable y = leaf({1.0});
    const Variable w = leaf({1.0});
    std::vector<Variable> keep;  // each output keeps its node alive, and with it its number
    for (int i = 0; i < ops; ++i) {
      y = y * w;
      keep.push_back(y);
      out.push_back(y.grad_fn()->sequence);
    }
  };
  std::thread other(chain, std::ref(numbers[1]));
  chain(numbers[0]);
  other.join();
  for (const auto& n : numbers)  // strictly increasing: no neighbours where the later is not larger
    CHECK(std::adjacent_find(n.begin(), n.end(), std::greater_equal<uint64_t>()) == n.end());
  std::vector<uint64_t> all(numbers[0]);
  all.insert(all.end(), numbers[1].begin(), numbers[1].end());
  std::sort(all.begin(), all.end());
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
}

TEST_CASE("a later backward sums into the leaf's gradient in place when nothing else holds it") {
  Variable x = leaf({1, 2});
  sum(x * x).backward();
  const double* first = x.grad().data<double>();  // a pointer only: the tensor handle is dropped
  sum(x * x).backward();
  CHECK(x.grad().data<double>() == first);
  check_values(x.grad(), {4, 8});
}

TEST_CASE("a gradient the user holds keeps its values when a later backward accumulates") {
  Variable x = leaf({1, 2});
  sum(x * x).backward();
  const Tensor held = x.grad();
  sum(x * x).backward();
  check_values(held, {2, 4});
  check_values(x.grad(), {4, 8});
}

TEST_CASE("a value used on several paths receives the sum of their gradients") {
  // a = 2x, y = a² + a + x.  dy/dx = (2a + 1)·2 + 1 = 27 at x = 3.
  Variable x = leaf({3});
  Variable a = x * 2.0;
  sum(a * a + a + x).backward();
  check_values(x.grad(), {27});
}

TEST_CASE("broadcast gradients are summed back to each input's shape") {
  SUBCASE("(2, 3) * (3)") {
    Variable a = leaf({1, 2, 3, 4, 5, 6}, {2, 3}), b = leaf({10, 20, 30});
    sum(a * b).backward();
    CHECK(a.grad().shape() == Shape{2, 3});
    CHECK(b.grad().shape() == Shape{3});
    check_values(a.grad(), {10, 20, 30, 10, 20, 30});
    check_values(b.grad(), {5, 7, 9});  // column sums of a
  }
  SUBCASE("(2, 1) * (1, 3)") {
    Variable c = leaf({1, 2}, {2, 1}), d = leaf({1, 2, 3}, {1, 3});
    sum(c * d).backward();
    CHECK(c.grad().shape() == Shape{2, 1});
    CHECK(d.grad().shape() == Shape{1, 3});
    check_values(c.grad(), {6, 6});
    check_values(d.grad(), {3, 3, 3});
  }
  SUBCASE("0-d * (2, 3)") {
    Variable s = leaf({2}, {}), m = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
    sum(s * m).backward();
    CHECK(s.grad().shape() == Shape{});
    check_values(s.grad(), {21});
    check_values(m.grad(), {2, 2, 2, 2, 2, 2});
  }
}

TEST_CASE("backward on a non-scalar without grad_output throws ValueError naming the shape") {
  Variable x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK_THROWS_WITH_AS((x * 2.0).backward(), doctest::Contains("output of shape (2, 3) is not a scalar"), ValueError);
}

TEST_CASE("backward with a grad_output gives the vector-Jacobian product of a non-scalar") {
  Variable x = leaf({1, 2, 3});
  (x * x).backward(tensor({1, 10, 100}, f64));  // 2x·g
  check_values(x.grad(), {2, 40, 600});
}

TEST_CASE("backward with a grad_output of the wrong shape throws ShapeError naming both shapes") {
  Variable x = leaf({1, 2, 3});
  CHECK_THROWS_WITH_AS((x * x).backward(tensor({1, 2}, f64)),
                       "backward: grad_output (2,) f64 does not match the output (3,) f64", ShapeError);
}

TEST_CASE("backward on a variable that depends on no leaf requiring grad throws ValueError") {
  Variable c(tensor({1, 2}, f64));
  CHECK_THROWS_WITH_AS(sum(c * 2.0).backward(), doctest::Contains("backward: the variable does not require grad"),
                       ValueError);
}

TEST_CASE("the engine rejects an op's backward that returns gradients not fitting its inputs, naming the op") {
  Variable x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  auto op = [&](const char* name, Grads g) {
    return sum(record(name, x.value() * 2.0, {x}, [g](const Variable&, const Variable&) { return g; }));
  };
  SUBCASE("a shape that does not fit") {
    CHECK_THROWS_WITH_AS(op("bad_shape", {Variable(ones({4, 3}, f64))}).backward(),
                         "bad_shape backward: gradient of shape (4, 3) does not fit input (2, 3)", ShapeError);
  }
  SUBCASE("a count that differs from the inputs'") {
    Variable g(ones({2, 3}, f64));
    CHECK_THROWS_WITH_AS(op("bad_count", {g, g}).backward(), "backward of bad_count: returned 2 gradients for 1 inputs",
                         Error);
  }
  SUBCASE("a dtype that is not floating (another float one is converted, as for promoted operands)") {
    CHECK_THROWS_WITH_AS(op("bad_dtype", {Variable(ones({2, 3}, i64))}).backward(),
                         "backward of bad_dtype: gradient dtype i64 for input of dtype f64", DTypeError);
  }
}

TEST_CASE("a second backward through a freed graph throws naming the op and retain_graph") {
  Variable x = leaf({1, 2});
  Variable h = x * x;
  sum(h).backward();
  Variable y = sum(h * 3.0);  // a fresh root over h's freed node
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("backward of mul: the graph was already freed"), ValueError);
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("retain_graph = true"), ValueError);
}

TEST_CASE("retain_graph keeps the graph for a second backward") {
  Variable x = leaf({1, 2});
  Variable y = sum(exp(x) * x);  // dy/dx = eˣ(1 + x)
  y.backward({.retain_graph = true});
  y.backward();
  check_values(x.grad(), {2 * std::exp(1.0) * 2, 2 * std::exp(2.0) * 3});
  CHECK_THROWS_AS(y.backward(), ValueError);  // the second one freed it
}

// split's pieces leave their gradients to the joint, which runs after all of them and empties the slots.
TEST_CASE("split joins its pieces' gradients, zeros for an unused piece, in each backward of a retained graph") {
  Variable x = leaf({1, 2, 3, 4, 5});
  std::vector<Variable> p = split(x, {2, 1, 2}, 0);  // p[1] unused
  Variable y = sum(p[0] * p[0]) + sum(p[2] * 3.0) + sum(x);  // x on another path too
  y.backward({.retain_graph = true});
  check_values(x.grad(), {3, 5, 1, 4, 4});
  y.backward();
  check_values(x.grad(), {6, 10, 2, 8, 8});
}

TEST_CASE("split names the shape when the sizes do not add up") {
  CHECK_THROWS_WITH_AS(split(leaf({1, 2, 3}), {1, 1}, 0), doctest::Contains("sizes add up to 2, dim 0 of (3,) has 3"),
                       ShapeError);
}

TEST_CASE("masked_scale names the mask and the element count when the mask does not fit") {
  CHECK_THROWS_WITH_AS(masked_scale(leaf({1, 2, 3}), zeros({2}, i64), 2.0),
                       doctest::Contains("masked_scale: packed mask (2,) i64 does not hold 3 elements"), ShapeError);
}

TEST_CASE("modifying a saved input in place before backward throws naming the op") {
  Variable a = leaf({1, 2}), b = leaf({3, 4});
  Variable y = sum(a * b);
  Tensor storage_of_a = a.value();
  storage_of_a.add_(scalar_tensor(1, f64));
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("backward of mul: input 0 (shape (2,)) was modified in place"),
                       ValueError);
}

TEST_CASE("modifying an input that the op did not save is allowed, as in PyTorch") {
  // torch: (a + b).sum(); a.detach().add_(1); backward() gives ones; (a * b) refuses (the test above).
  Variable a = leaf({1, 2}), b = leaf({3, 4});
  Variable y = sum(a + b);  // add's backward reads neither a nor b
  Tensor storage_of_a = a.value();
  storage_of_a.add_(scalar_tensor(1, f64));
  y.backward();
  check_values(a.grad(), {1, 1});
  check_values(b.grad(), {1, 1});
}

TEST_CASE("modifying a kept output in place before backward throws naming the op") {
  Variable x = leaf({0.5, 1});
  Variable y = tanh(x);  // keeps y for dx = dy·(1 - y²)
  Tensor storage_of_y = y.value();
  storage_of_y.mul_(2.0);
  CHECK_THROWS_WITH_AS(y.backward(ones({2}, f64)), doctest::Contains("backward of tanh: its output was modified"),
                       ValueError);
}

TEST_CASE("NoGradGuard stops recording, nests, and restores the previous mode") {
  Variable x = leaf({1, 2});
  CHECK(grad_mode_enabled());
  {
    NoGradGuard no_grad;
    Variable y = x * 2.0;
    check_values(y.value(), {2, 4});
    CHECK_FALSE(y.requires_grad());
    CHECK(y.grad_fn() == nullptr);
    {
      GradModeGuard on(true);
      CHECK((x * 2.0).requires_grad());
      {
        NoGradGuard inner;
        CHECK_FALSE((x * 2.0).requires_grad());
      }
      CHECK(grad_mode_enabled());
    }
    CHECK_FALSE(grad_mode_enabled());
  }
  CHECK(grad_mode_enabled());
  CHECK((x * 2.0).requires_grad());
}

TEST_CASE("requires_grad_ switches a leaf on and off") {
  Variable x = leaf({1, 2});
  x.requires_grad_(false);
  CHECK_FALSE(x.requires_grad());
  CHECK_FALSE((x * 2.0).requires_grad());
  x.requires_grad_(true);
  CHECK((x * 2.0).requires_grad());
}

TEST_CASE("requires_grad_ on an op's output throws ValueError naming the op") {
  Variable y = leaf({1, 2}) * 2.0;
  CHECK_THROWS_WITH_AS(y.requires_grad_(false), doctest::Contains("this is the output of mul"), ValueError);
}

TEST_CASE("retain_grad keeps a non-leaf's gradient; other non-leaves keep none") {
  Variable x = leaf({1, 2});
  Variable h = x * 3.0, k = h * 1.0;
  h.retain_grad();
  sum(k * k).backward();  // y = Σ(3x)²: dy/dh = 2h, dy/dx = 18x
  check_values(h.grad(), {6, 12});
  check_values(x.grad(), {18, 36});
  CHECK_FALSE(k.grad().defined());
}

TEST_CASE("detach cuts the graph but shares the value") {
  Variable x = leaf({2, 3});
  Variable d = x.detach();
  CHECK_FALSE(d.requires_grad());
  CHECK(d.value().storage() == x.value().storage());
  sum(d * x).backward();  // only the attached factor is differentiated: d, not 2x
  check_values(x.grad(), {2, 3});
}

TEST_CASE("tg::grad returns gradients and leaves every .grad untouched") {
  Variable x = leaf({1, 2}), w = leaf({5, 6});
  x.set_grad(tensor({7, 7}, f64));
  std::vector<Variable> g = grad({sum(x * x * w)}, {x});
  check_values(g[0].value(), {10, 24});  // 2x·w
  check_values(x.grad(), {7, 7});
  CHECK_FALSE(w.grad().defined());
}

TEST_CASE("tg::grad returns gradients for non-leaf inputs") {
  Variable x = leaf({1, 2});
  Variable h = x * 3.0;
  std::vector<Variable> g = grad({sum(h * h)}, {h, x});
  check_values(g[0].value(), {6, 12});   // 2h
  check_values(g[1].value(), {18, 36});  // 18x
}

TEST_CASE("tg::grad throws for an unused input unless allow_unused, which gives an undefined gradient") {
  Variable x = leaf({1, 2}), z = leaf({3, 4});
  CHECK_THROWS_WITH_AS(grad({sum(x * x)}, {x, z}),
                       "grad: input 1 (shape (2,)) was not used to compute the outputs; pass allow_unused",
                       ValueError);
  std::vector<Variable> g = grad({sum(x * x)}, {x, z}, {}, {.allow_unused = true});
  check_values(g[0].value(), {2, 4});
  CHECK_FALSE(g[1].defined());
}

TEST_CASE("create_graph gives a differentiable gradient: d²/dx² x³ = 6x") {
  Variable x = leaf({1, 2, -3});
  SUBCASE("through backward and grad_variable") {
    sum(pow(x, 3.0)).backward({.create_graph = true});
    Variable g = x.grad_variable();
    CHECK(g.requires_grad());
    check_values(g.value(), {3, 12, 27});
    x.zero_grad();  // also breaks the cycle x -> grad -> graph -> x
    sum(g).backward();
    check_values(x.grad(), {6, 12, -18});
  }
  SUBCASE("through tg::grad twice") {
    Variable g = grad({sum(pow(x, 3.0))}, {x}, {}, {.create_graph = true})[0];
    check_values(grad({sum(g)}, {x})[0].value(), {6, 12, -18});
    CHECK_FALSE(x.grad().defined());
  }
}

TEST_CASE("a Hessian-vector product through tg::grad with create_graph") {
  // f = (x·x)².  ∇f = 4s·x with s = x·x;  H = 4s·I + 8·x xᵀ, so Hv = 4s·v + 8x(x·v).
  // x = (1, 2, 3), v = (1, 0, -1): s = 14, x·v = -2, Hv = 56v - 16x = (40, -32, -104).
  Variable x = leaf({1, 2, 3});
  Variable g = grad({pow(sum(x * x), 2.0)}, {x}, {}, {.create_graph = true})[0];
  check_values(g.value(), {56, 112, 168});
  Variable hv = grad({g}, {x}, {tensor({1, 0, -1}, f64)})[0];
  check_values(hv.value(), {40, -32, -104});
}

TEST_CASE("AnomalyGuard throws naming the op whose forward gives NaN") {
  Variable x = leaf({-1});
  AnomalyGuard anomaly;
  CHECK_THROWS_WITH_AS(log(x), doctest::Contains("anomaly: forward of log produced NaN or inf"), ValueError);
}

TEST_CASE("AnomalyGuard throws naming the op whose backward gives inf") {
  Variable x = leaf({0, 4});  // d√x/dx = 1/(2√x) is inf at 0
  Variable y = sum(sqrt(x));
  AnomalyGuard anomaly;
  CHECK_THROWS_WITH_AS(y.backward(), doctest::Contains("anomaly: backward of sqrt produced NaN or inf"), ValueError);
}

TEST_CASE("without AnomalyGuard NaN and inf pass through silently") {
  CHECK_FALSE(anomaly_mode_enabled());
  Variable x = leaf({-1});
  CHECK(std::isnan(log(x).item()));
  Variable z = leaf({0, 4});
  sum(sqrt(z)).backward();
  check_values(z.grad(), {INFINITY, 0.25});
  {
    AnomalyGuard on;
    CHECK(anomaly_mode_enabled());
  }
  CHECK_FALSE(anomaly_mode_enabled());
}

TEST_CASE("to_dot names every op with its output shape, and the shape of every leaf") {
  Variable x = leaf({1, 2, 3, 4, 5, 6}, {2, 3}), w = leaf({1, 2, 3});
  std::string dot = to_dot(sum(tanh(x * w)));
  CHECK(dot.rfind("digraph", 0) == 0);
  for (const char* s : {"\"sum\\n()\"", "\"tanh\\n(2, 3)\"", "\"mul\\n(2, 3)\"", "leaf (2, 3)", "leaf (3,)",
                        "output ()"}) {
    CAPTURE(s);
    CHECK(dot.find(s) != std::string::npos);
  }
}

TEST_CASE("to_dot labels a leaf with its name when given one, and the others 'leaf'") {
  Variable x = leaf({1, 2, 3, 4, 5, 6}, {2, 3}), w = leaf({1, 2, 3});
  const std::string dot = to_dot(sum(x * w), {{"layer.weight", w}});
  CHECK(dot.find("label=\"layer.weight (3,)\\nrequires_grad\"") != std::string::npos);
  CHECK(dot.find("label=\"leaf (2, 3)\\nrequires_grad\"") != std::string::npos);
}
