// Composite f64 expressions against PyTorch 1.13 (tests/fixtures/autograd.json, made by gen_autograd.py):
// the same expression written with tg functions must give torch's value and gradients to 1e-10, including
// torch's choices at kinks (relu at 0, where at a tie of its condition, clamp at its bounds), and the same
// Hessian-vector product through tg::grad with create_graph.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "autograd/check.h"
#include "autograd/functions.h"

using namespace tg;
using json = nlohmann::json;

namespace {

constexpr double kTol = 1e-10;

const json& fixture() {
  static const json j = [] {
    std::ifstream in(TG_FIXTURES_DIR "/autograd.json");
    REQUIRE_MESSAGE(in, "cannot open " TG_FIXTURES_DIR "/autograd.json");
    return json::parse(in);
  }();
  return j;
}

const json& fixture_case(const std::string& name) {
  for (const json& c : fixture().at("cases"))
    if (c.at("name") == name) return c;
  throw std::runtime_error("autograd.json has no case " + name);
}

// A fixture tensor {"shape", "data"} in f64 (this file holds finite numbers only).
Tensor from_json(const json& t) {
  return tensor(t.at("data").get<std::vector<double>>(), t.at("shape").get<std::vector<int64_t>>(), f64);
}

// Largest |a - b|; CHECKs the shapes match.
double max_error(const Tensor& a, const Tensor& b) {
  REQUIRE(a.defined());
  CHECK(a.shape() == b.shape());
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

using Named = std::map<std::string, Variable>;

// Every fixture expression, spelled with tg functions. Inputs that torch differentiated are leaves that
// require grad; the others (hvp's v) are constants.
const std::map<std::string, std::function<Variable(const Named&)>>& expressions() {
  static const std::map<std::string, std::function<Variable(const Named&)>> k = {
      {"tanh_matmul_mul", [](const Named& in) { return sum(tanh(matmul(in.at("a"), in.at("b"))) * in.at("c")); }},
      {"softmax_log_mean", [](const Named& in) { return mean(log(softmax(in.at("a"), -1))); }},
      {"logsumexp_dim1", [](const Named& in) { return sum(logsumexp(in.at("a"), {1})); }},
      {"var_plus_mean", [](const Named& in) { return sum(var(in.at("a"), {0}, 1) + mean(in.at("a"))); }},
      {"layer_norm_cubed",
       [](const Named& in) { return sum(pow(layer_norm(in.at("a"), {4}, in.at("w"), in.at("b"), 1e-5), 3.0)); }},
      {"gelu_erf", [](const Named& in) { return sum(gelu(in.at("a"))); }},
      {"gelu_tanh", [](const Named& in) { return sum(gelu(in.at("a"), true)); }},
      {"silu", [](const Named& in) { return sum(silu(in.at("a"))); }},
      {"sigmoid_mul_relu", [](const Named& in) { return sum(sigmoid(in.at("a")) * relu(in.at("b"))); }},
      {"where_gt0",
       [](const Named& in) { return sum(where(gt(in.at("a").value(), 0.0), in.at("a"), in.at("b") * 2.0)); }},
      {"max_dim1", [](const Named& in) { return sum(max(in.at("a"), 1).values); }},
      {"clamp", [](const Named& in) { return sum(clamp(in.at("a"), -0.5, 0.5)); }},
      {"hvp_tanh_sq", [](const Named& in) { return sum(pow(tanh(in.at("x")), 2.0)); }},
  };
  return k;
}

// A case's inputs: leaves for the names in "grads", constants for the rest.
Named inputs_of(const json& c) {
  Named in;
  for (const auto& [name, t] : c.at("inputs").items()) in[name] = Variable(from_json(t), c.at("grads").contains(name));
  return in;
}

struct Evaluated {
  Variable value;
  std::map<std::string, Variable> grads;
};

// The case's expression and its gradients with respect to every leaf, through tg::grad.
Evaluated evaluate(const json& c) {
  const std::string name = c.at("name");
  Named in = inputs_of(c);
  Evaluated e{expressions().at(name)(in), {}};
  std::vector<Variable> leaves;
  for (const auto& [n, unused] : c.at("grads").items()) leaves.push_back(in.at(n));
  std::vector<Variable> g = grad({e.value}, leaves);
  size_t i = 0;
  for (const auto& [n, unused] : c.at("grads").items()) e.grads[n] = g[i++];
  return e;
}

}  // namespace

TEST_CASE("composite f64 expressions match PyTorch 1.13 in value and gradients to 1e-10") {
  double worst = 0;
  int cases = 0;
  for (const json& c : fixture().at("cases")) {
    const std::string name = c.at("name");
    CAPTURE(name);
    REQUIRE_MESSAGE(expressions().count(name), "no tg expression for fixture case ", name);
    Evaluated e = evaluate(c);
    const double value_error = std::abs(e.value.item() - c.at("value").get<double>());
    CHECK(value_error <= kTol);
    worst = std::max(worst, value_error);
    for (const auto& item : c.at("grads").items()) {  // CAPTURE can't take a structured binding (clang 14)
      const std::string input = item.key();
      CAPTURE(input);
      const double err = max_error(e.grads.at(input).value(), from_json(item.value()));
      CHECK(err <= kTol);
      worst = std::max(worst, err);
    }
    ++cases;
  }
  CHECK(cases == int(expressions().size()));
  CHECK(worst <= kTol);
}

TEST_CASE("the Hessian-vector product of sum(tanh(x)²) matches PyTorch to 1e-10") {
  const json& c = fixture_case("hvp_tanh_sq");
  Named in = inputs_of(c);
  Variable x = in.at("x");
  Variable g = grad({sum(pow(tanh(x), 2.0))}, {x}, {}, {.create_graph = true})[0];
  CHECK(max_error(g.value(), from_json(c.at("grads").at("x"))) <= kTol);
  Variable hv = grad({g}, {x}, {in.at("v").value()})[0];
  CHECK(max_error(hv.value(), from_json(c.at("hvp"))) <= kTol);
}

TEST_CASE("relu's gradient at exactly 0 is 0, as PyTorch's") {
  const json& c = fixture_case("sigmoid_mul_relu");
  REQUIRE(c.at("inputs").at("b").at("data")[3].get<double>() == 0.0);
  Evaluated e = evaluate(c);
  CHECK(e.grads.at("b").value().to_vector<double>()[3] == 0.0);
  CHECK(c.at("grads").at("b").at("data")[3].get<double>() == 0.0);
}

TEST_CASE("where(a > 0, a, 2b) at a == 0 sends the gradient to b, as PyTorch") {
  const json& c = fixture_case("where_gt0");
  REQUIRE(c.at("inputs").at("a").at("data")[7].get<double>() == 0.0);
  Evaluated e = evaluate(c);
  CHECK(e.grads.at("a").value().to_vector<double>()[7] == 0.0);
  CHECK(e.grads.at("b").value().to_vector<double>()[7] == 2.0);
  CHECK(c.at("grads").at("b").at("data")[7].get<double>() == 2.0);
}

TEST_CASE("clamp's gradient is 1 at its bounds and 0 strictly outside, as PyTorch's") {
  const json& c = fixture_case("clamp");
  const std::vector<double> a = c.at("inputs").at("a").at("data").get<std::vector<double>>();
  REQUIRE(a[0] == 0.5);
  REQUIRE(a[5] == -0.5);
  const std::vector<double> g = evaluate(c).grads.at("a").value().to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(g[i] == (std::abs(a[i]) <= 0.5 ? 1.0 : 0.0));
  }
}

TEST_CASE("max(x, dim) gives values, first-occurrence indices, and the whole gradient at that index") {
  // Row 0 ties at columns 1 and 2: torch picks column 1 and gives it the whole gradient (amax would
  // split it 1/2, 1/2).
  Variable x = tg::test::leaf({1, 3, 3, 2, 0, -1}, {2, 3});
  VariableIndices m = max(x, 1);
  tg::test::check_values(m.values.value(), {3, 2});
  CHECK(m.indices.to_vector<int64_t>() == std::vector<int64_t>{1, 0});
  sum(m.values * Variable(tensor({10, 100}, f64))).backward();
  tg::test::check_values(x.grad(), {0, 10, 0, 100, 0, 0});
  VariableIndices k = min(x, 0, true);
  CHECK(k.values.shape() == Shape{1, 3});
  CHECK(k.indices.to_vector<int64_t>() == std::vector<int64_t>{0, 1, 1});
}
