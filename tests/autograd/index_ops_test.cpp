// The indexing, einsum and ordering functions (autograd/functions/index.cpp, einsum.cpp, order.cpp) against
// PyTorch 1.13 (tests/fixtures/index_ops.json, made by gen_index_ops.py): values, indices and the gradients of
// (output·R).sum(); then what PyTorch leaves open (repeated scatter positions, ties) and the errors.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "autograd/check.h"
#include "autograd/functions.h"
#include "nn/fixture.h"

using namespace tg;
using json = nlohmann::json;

namespace {

struct Result {
  Variable output;
  Tensor indices;  // sort and topk
};

// The case's call in tg, on leaves made of its inputs (`in`, by name).
Result run_case(const json& c, std::map<std::string, Variable>& in) {
  const std::string op = c.at("op");
  const json& a = c.at("args");
  const int64_t dim = a.value("dim", int64_t(0));
  auto index = [&] { return test::fixture_tensor(a.at("index"), i64); };
  if (op == "gather") return {gather(in["x"], dim, index())};
  if (op == "scatter") return {scatter(in["x"], dim, index(), in["src"])};
  if (op == "scatter_value") return {scatter(in["x"], dim, index(), a.at("value").get<double>())};
  if (op == "scatter_add") return {scatter_add(in["x"], dim, index(), in["src"])};
  if (op == "index_add") return {index_add(in["x"], dim, index(), in["source"])};
  if (op == "einsum") {
    std::vector<Variable> operands;
    for (size_t i = 0; i < in.size(); ++i) operands.push_back(in["op" + std::to_string(i)]);
    return {einsum(a.at("equation"), operands)};
  }
  if (op == "sort") {
    VariableIndices r = sort(in["x"], dim, a.at("descending"));
    return {r.values, r.indices};
  }
  if (op == "topk") {
    VariableIndices r = topk(in["x"], a.at("k"), dim, a.at("largest"));
    return {r.values, r.indices};
  }
  if (op == "argsort") return {Variable(argsort(in["x"], dim, a.at("descending")))};
  if (op == "argmax") return {Variable(argmax(in["x"], dim, a.at("keepdim")))};
  REQUIRE(op == "argmin");
  return {Variable(argmin(in["x"], dim, a.at("keepdim")))};
}

void check_indices(const Tensor& got, const json& want, const std::string& what) {
  REQUIRE(got.dtype() == i64);
  CHECK_MESSAGE(got.shape() == Shape(want.at("shape").get<std::vector<int64_t>>()), what);
  CHECK_MESSAGE(got.to_vector<int64_t>() == want.at("data").get<std::vector<int64_t>>(), what);
}

}  // namespace

TEST_CASE("indexing, einsum and ordering match PyTorch's values, indices and gradients") {
  const json f = test::load_fixture("index_ops.json");
  int ran = 0;
  for (const json& c : f.at("cases")) {
    const std::string name = c.at("name");
    CAPTURE(name);
    std::map<std::string, Variable> in;
    for (const auto& item : c.at("inputs").items())
      in[item.key()] = Variable(test::fixture_tensor(item.value(), f64), c.contains("grads"));
    const Result r = run_case(c, in);
    if (r.output.dtype() == i64) {
      check_indices(r.output.value(), c.at("output"), name + " output");
    } else {
      const Tensor want = test::fixture_tensor(c.at("output"), f64);
      test::check_close(r.output.value(), want, test::fixture_tolerance(f64, want), name + " output");
    }
    if (c.contains("indices")) check_indices(r.indices, c.at("indices"), name + " indices");
    if (c.contains("grads")) {
      sum(r.output * Variable(test::fixture_tensor(c.at("R"), f64))).backward();
      for (const auto& item : c.at("grads").items()) {
        const Tensor want = test::fixture_tensor(item.value(), f64);
        test::check_close(in[item.key()].grad(), want, test::fixture_tolerance(f64, want), name + " d/d" + item.key());
      }
    }
    ++ran;
  }
  CHECK(ran == 44);
}

TEST_CASE("scatter: the last of repeated positions wins, and only it gets the source's gradient") {
  const Variable x = test::leaf({1, 2, 3, 4}, {1, 4}), src = test::leaf({10, 20, 30}, {1, 3});
  const Variable y = scatter(x, 1, index_tensor({2, 0, 2}, {1, 3}), src);  // 10 and then 30 written at 2
  test::check_values(y.value(), {20, 2, 30, 4});
  y.backward(tensor({1, 2, 3, 4}, {1, 4}, f64));
  test::check_values(x.grad(), {0, 2, 0, 4});   // the written positions lose their gradient
  test::check_values(src.grad(), {0, 1, 3});    // 10 was overwritten: 0 (PyTorch would give it 3)
}

TEST_CASE("gather's gradient adds up at repeated indices, and a larger source's unread part gets 0") {
  const Variable x = test::leaf({1, 2, 3}, {3});
  gather(x, 0, index_tensor({2, 2, 0, 2}, {4})).backward(tensor({1, 10, 100, 1000}, f64));
  test::check_values(x.grad(), {100, 0, 1011});
  const Variable s = test::leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  sum(scatter_add(Variable(zeros({2, 2}, f64)), 1, index_tensor({1, 1}, {1, 2}), s)).backward();
  test::check_values(s.grad(), {1, 1, 0, 0, 0, 0});
}

TEST_CASE("sort and topk order ties by index (stable) and put NaN above every number") {
  const Tensor x = tensor({2, NAN, 1, 2, -INFINITY, 2}, f64);
  CHECK(argsort(x).to_vector<int64_t>() == std::vector<int64_t>{4, 2, 0, 3, 5, 1});
  CHECK(argsort(x, 0, true).to_vector<int64_t>() == std::vector<int64_t>{1, 0, 3, 5, 2, 4});
  CHECK(topk(x, 3).indices.to_vector<int64_t>() == std::vector<int64_t>{1, 0, 3});  // PyTorch's tie order may differ
  CHECK(topk(x, 2, 0, false).indices.to_vector<int64_t>() == std::vector<int64_t>{4, 2});
  CHECK(sort(index_tensor({3, 1, 2}, {3})).values.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 3});  // i64
  CHECK(sort(scalar_tensor(5.0, f64)).indices.item() == 0);  // a 0-d tensor is one line of one
  CHECK(topk(zeros({2, 3}), 0).values.shape() == Shape{2, 0});
  CHECK(argmin(tensor({3, 1, 1, 2}), 0).item() == 1);
  CHECK(argmax(tensor({1, 3, 3, 2}), 0).item() == 1);
}

TEST_CASE("einsum of two operands sharing a summed index goes through matmul") {
  Generator gen(4);
  const Variable a(randn({2, 5, 7}, f32, &gen)), b(randn({7, 6}, f32, &gen));
  CHECK(test::max_abs_diff(einsum("bij,jk->bik", {a, b}).value(), matmul(a.value(), b.value())) == 0);
  CHECK(test::max_abs_diff(einsum("bij,kj->bki", {a, Variable(b.value().mT())}).value(),
                           matmul(a.value(), b.value()).mT()) == 0);
}

TEST_CASE("indexing ops name the bad index and the size, or both shapes") {
  const Variable x(zeros({3, 4}, f64), true);
  CHECK_THROWS_WITH_AS(gather(x, 1, index_tensor({0, 4}, {1, 2})), "gather: index 4 is out of range [0, 4)",
                       IndexError);
  CHECK_THROWS_WITH_AS(gather(x, 1, index_tensor({0, -1}, {1, 2})), "gather: index -1 is out of range [0, 4)",
                       IndexError);
  CHECK_THROWS_WITH_AS(scatter(x, 0, index_tensor({0, 3}, {1, 2}), 1.0), "scatter: index 3 is out of range [0, 3)",
                       IndexError);
  CHECK_THROWS_WITH_AS(scatter_add(x, 1, index_tensor({0, 1, 2}, {1, 3}), Variable(zeros({1, 2}, f64))),
                       "scatter_add: index shape (1, 3) exceeds source shape (1, 2)", ShapeError);
  CHECK_THROWS_WITH_AS(scatter(x, 1, index_tensor({0, 1, 2, 0, 1}, {5, 1}), Variable(zeros({5, 1}, f64))),
                       "scatter: index shape (5, 1) exceeds input shape (3, 4) at dim 0", ShapeError);
  CHECK_THROWS_WITH_AS(gather(x, 0, index_tensor({0}, {1})),
                       "gather: index shape (1,) and input shape (3, 4) differ in ndim", ShapeError);
  CHECK_THROWS_WITH_AS(scatter(x, 0, index_tensor({0}, {1, 1}), Variable(zeros({1, 1}))),
                       "scatter: dtypes differ: f64 vs f32", DTypeError);
  CHECK_THROWS_WITH_AS(index_add(x, 0, index_tensor({5}, {1}), Variable(zeros({1, 4}, f64))),
                       "index_add: index 5 is out of range [0, 3)", IndexError);
  CHECK_THROWS_AS(gather(x, 2, index_tensor({0}, {1, 1})), IndexError);  // the dim
}

TEST_CASE("ordering ops refuse a bad k, dim or dtype") {
  CHECK_THROWS_WITH_AS(topk(zeros({2, 3}), 4), "topk: k = 4 is out of range [0, 3] for dim 1 of shape (2, 3)",
                       IndexError);
  CHECK_THROWS_WITH_AS(topk(zeros({2, 3}), -1, 0), "topk: k = -1 is out of range [0, 2] for dim 0 of shape (2, 3)",
                       IndexError);
  CHECK_THROWS_AS(sort(zeros({2, 3}), 2), IndexError);
  CHECK_THROWS_WITH_AS(sort(zeros({2}, boolean)), doctest::Contains("sort: not defined for bool"), DTypeError);
  CHECK_THROWS_WITH_AS(argmin(zeros({2, 0}), 1), doctest::Contains("argmin: cannot reduce over an empty dim"),
                       IndexError);
}

TEST_CASE("einsum names the equation and the operand shapes in its errors") {
  const Variable a(zeros({2, 3})), b(zeros({4, 5}));
  const auto fails = [&](const std::string& eq, const std::vector<Variable>& ops, const std::string& what) {
    CAPTURE(eq);
    CHECK_THROWS_WITH(einsum(eq, ops), doctest::Contains(what.c_str()));
  };
  fails("ij,jk", {a}, "einsum: 2 terms for 1 operands in equation 'ij,jk' for operands of shapes (2, 3)");
  fails("ij,jk->ik", {a, b}, "einsum: subscript j has sizes 3 and 4 in equation 'ij,jk->ik' for operands of shapes "
                             "(2, 3), (4, 5)");
  fails("ijk", {a}, "einsum: term 'ijk' has 3 subscripts for an operand of 2 dims");
  fails("i", {a}, "term 'i' has 1 subscripts for an operand of 2 dims");
  fails("i1", {a}, "invalid subscript '1' in term 'i1'");
  fails("i....", {a}, "invalid subscript '.' in term 'i....'");
  fails("...i...", {a}, "'...' appears twice in term '...i...'");
  fails("ij->iz", {a}, "output subscript z does not appear in the inputs");
  fails("ij->ii", {a}, "output subscript i appears more than once");
  fails("ii", {a}, "subscript i is repeated in an operand with sizes 2 and 3");
  fails("...i,...i", {Variable(zeros({2, 3})), Variable(zeros({4, 3}))}, "subscript ... has sizes 2 and 4");
  fails("", {}, "einsum: no operands in equation ''");
  CHECK_THROWS_AS(einsum("ij,jk->ik", {a, b}), ShapeError);
  CHECK_THROWS_AS(einsum("i1", {a}), ValueError);
}
