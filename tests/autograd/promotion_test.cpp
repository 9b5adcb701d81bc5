// Type promotion (issue 25) against PyTorch 1.13 (tests/fixtures/promotion.json, made by gen_promotion.py): the
// result dtype and values of the binary ops, comparisons and where over every pair of f32, f64, i64 and bool
// operands, with dims and 0-dim, and with scalars; and the gradients, each in its input's own dtype.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <string>

#include "autograd/functions.h"
#include "nn/fixture.h"

using namespace tg;
using json = nlohmann::json;

namespace {

DType dtype_named(const std::string& name) {
  return name == "f32" ? f32 : name == "f64" ? f64 : name == "i64" ? i64 : boolean;
}
const char* kind_of(DType t) { return is_floating(t) ? "float" : t == i64 ? "int" : "bool"; }

// A (2, 3) or `shape` tensor of `dtype` from a fixture list of numbers ("inf", "-inf" and "nan" as strings).
Tensor values(const json& list, const Shape& shape, DType dtype) {
  std::vector<double> v;
  for (const json& x : list) v.push_back(test::fixture_number(x));
  return tensor(v, shape, dtype);
}

// The fixture's operand `which` ("a" or "b") named like "f64" or "f64_0dim": a (2, 3), b (3,) or 0-dim.
Variable operand(const json& f, const std::string& which, std::string name) {
  const bool zero_dim = name.ends_with("_0dim");
  if (zero_dim) name.resize(name.size() - 5);
  const DType dt = dtype_named(name);
  const Shape shape = zero_dim ? Shape{} : which == "a" ? Shape{2, 3} : Shape{3};
  return Variable(values(f.at(zero_dim ? "zero_dim" : which).at(kind_of(dt)), shape, dt), is_floating(dt));
}

using Binary = std::function<Variable(const Variable&, const Variable&)>;
using WithScalar = std::function<Variable(const Variable&, double)>;

std::map<std::string, Binary> binaries(const Tensor& cond) {
  return {{"add", [](const Variable& a, const Variable& b) { return a + b; }},
          {"sub", [](const Variable& a, const Variable& b) { return a - b; }},
          {"mul", [](const Variable& a, const Variable& b) { return a * b; }},
          {"div", [](const Variable& a, const Variable& b) { return a / b; }},
          {"pow", [](const Variable& a, const Variable& b) { return pow(a, b); }},
          {"minimum", [](const Variable& a, const Variable& b) { return minimum(a, b); }},
          {"maximum", [](const Variable& a, const Variable& b) { return maximum(a, b); }},
          {"lt", [](const Variable& a, const Variable& b) { return Variable(lt(a.value(), b.value())); }},
          {"eq", [](const Variable& a, const Variable& b) { return Variable(eq(a.value(), b.value())); }},
          {"where", [cond](const Variable& a, const Variable& b) { return where(cond, a, b); }}};
}

const std::map<std::string, WithScalar>& with_scalars() {
  static const std::map<std::string, WithScalar> k = {
      {"add", [](const Variable& t, double s) { return t + s; }},
      {"sub", [](const Variable& t, double s) { return t - s; }},
      {"mul", [](const Variable& t, double s) { return t * s; }},
      {"div", [](const Variable& t, double s) { return t / s; }},
      {"pow", [](const Variable& t, double s) { return pow(t, s); }},
      {"lt", [](const Variable& t, double s) { return Variable(lt(t.value(), s)); }},
      {"eq", [](const Variable& t, double s) { return Variable(eq(t.value(), s)); }},
      {"radd", [](const Variable& t, double s) { return s + t; }},
      {"rsub", [](const Variable& t, double s) { return s - t; }},
      {"rmul", [](const Variable& t, double s) { return s * t; }},
      {"rdiv", [](const Variable& t, double s) { return s / t; }}};
  return k;
}

// Where PyTorch gives a result and tensorgrad refuses (README, "Type promotion"): arithmetic on two bools
// (PyTorch's add and mul act as logical or / and there, minimum / maximum likewise).
bool we_refuse(const json& c) {
  const std::string op = c.at("op"), dtype = c.at("dtype");
  return dtype == "bool" && op != "lt" && op != "eq" && op != "where";
}

void check_output(const Variable& y, const json& c) {
  const DType dt = dtype_named(c.at("dtype"));
  REQUIRE(y.dtype() == dt);
  const Tensor want = values(c.at("output"), {2, 3}, dt);
  if (is_floating(dt))
    test::check_close(y.value(), want, test::fixture_tolerance(dt, want), "output");
  else
    CHECK(y.value().to(i64).to_vector<int64_t>() == want.to(i64).to_vector<int64_t>());
}

// The gradients of (y·R).sum(), each input's in its own dtype, computed in y's (f32's rounding when either is).
void check_grads(const Variable& y, const std::vector<Variable>& inputs, const json& c, const json& f) {
  if (!c.contains("grads")) return;
  sum(y * Variable(values(f.at("R"), {2, 3}, y.dtype()))).backward();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const json& g = c.at("grads").at(i);
    if (g.is_null()) continue;
    const Tensor dx = inputs[i].grad();
    REQUIRE(dx.defined());
    CHECK(dx.dtype() == inputs[i].dtype());
    const Tensor want = values(g, inputs[i].shape(), inputs[i].dtype());
    const DType rounding = y.dtype() == f32 ? f32 : dx.dtype();
    test::check_close(dx, want, test::fixture_tolerance(rounding, want), "grad " + std::to_string(i));
  }
}

}  // namespace

TEST_CASE("binary ops, comparisons and where promote dtypes and give PyTorch's values and gradients") {
  const json f = test::load_fixture("promotion.json");
  const Tensor cond = values(f.at("cond"), {2, 3}, boolean);
  const auto ops = binaries(cond);
  int tensor_cases = 0, scalar_cases = 0, refused = 0;
  for (const json& c : f.at("cases")) {
    const std::string name = c.at("op").get<std::string>() + " " + c.dump();
    CAPTURE(name);
    std::vector<Variable> inputs = {operand(f, "a", c.at("a"))};
    std::function<Variable()> run;
    if (c.contains("b")) {
      inputs.push_back(operand(f, "b", c.at("b")));
      run = [&] { return ops.at(c.at("op"))(inputs[0], inputs[1]); };
      ++tensor_cases;
    } else {
      const double s = c.at("scalar");
      run = [&, s] { return with_scalars().at(c.at("op"))(inputs[0], s); };
      ++scalar_cases;
    }
    if (c.contains("torch_refuses") || we_refuse(c)) {
      CHECK_THROWS_AS(run(), DTypeError);
      ++refused;
      continue;
    }
    const Variable y = run();
    check_output(y, c);
    if (!c.contains("torch_backward_refuses")) check_grads(y, inputs, c, f);
  }
  CHECK(tensor_cases == 10 * 16 * 2);
  CHECK(scalar_cases == 11 * 4 * 3);
  CHECK(refused == 24 + 8);  // PyTorch refuses 24 (bool subtraction and powers, negative integer powers); we 8
}

TEST_CASE("promote_types and result_type follow torch.promote_types and torch.result_type") {
  CHECK(promote_types(f32, f64) == f64);
  CHECK(promote_types(i64, f32) == f32);
  CHECK(promote_types(boolean, i64) == i64);
  CHECK(promote_types(boolean, boolean) == boolean);
  const Tensor x32 = ones({3}), x64 = ones({3}, f64), n = ones({3}, i64);
  CHECK(result_type(x32, x64) == f64);
  CHECK(result_type(x32, scalar_tensor(1, f64)) == f32);   // a 0-dim tensor of the same category does not widen
  CHECK(result_type(n, scalar_tensor(1, f64)) == f64);     // of a higher one, it does, to its own dtype
  CHECK(result_type(scalar_tensor(1), scalar_tensor(1, f64)) == f64);  // 0-dim with 0-dim: promote_types
  CHECK(result_type(x32, 0.5) == f32);
  CHECK(result_type(x64, 0.5) == f64);
  CHECK(result_type(n, 0.5) == f32);  // PyTorch's default float dtype
  CHECK(result_type(n, 2.0) == i64);  // an integer double is a Python int
  CHECK(result_type(ones({3}, boolean), 2.0) == i64);
}

TEST_CASE("a mixed-dtype backward hands each input its gradient in its own dtype") {
  Variable a(tensor({1.5, 2.0}, {2}, f32), true), b(tensor({0.5, -1.0}, {2}, f64), true);
  Variable y = a * b;
  CHECK(y.dtype() == f64);
  sum(y).backward();
  CHECK(a.grad().dtype() == f32);
  CHECK(b.grad().dtype() == f64);
  CHECK(a.grad().to_vector<float>() == std::vector<float>{0.5f, -1.0f});
  CHECK(b.grad().to_vector<double>() == std::vector<double>{1.5, 2.0});
}

TEST_CASE("cat and stack of mixed dtypes promote, and hand each input its gradient in its own dtype") {
  Variable a(tensor({1.5, 2.0}, {2}, f32), true), b(tensor({0.25}, {1}, f64), true);
  const Variable y = cat({a, b}, 0);
  CHECK(y.dtype() == f64);
  CHECK(y.value().to_vector<double>() == std::vector<double>{1.5, 2.0, 0.25});
  sum(y * Variable(tensor({1, 2, 3}, {3}, f64))).backward();
  CHECK(a.grad().dtype() == f32);
  CHECK(a.grad().to_vector<float>() == std::vector<float>{1, 2});
  CHECK(b.grad().to_vector<double>() == std::vector<double>{3});
  const Variable s = stack({Variable(tensor({1, 2}, {2}, i64)), a}, 0);
  CHECK(s.dtype() == f32);
  CHECK(s.value().to_vector<float>() == std::vector<float>{1, 2, 1.5, 2});
}
