// Indexing and joining against loops over multi-indices: index_select / index_add (repeated indices
// accumulate), embedding bags (sums of rows, padding left out, and their adjoint), gather / scatter_add
// (checked as adjoints), cat and stack, and the errors that name the
// offending index and the size it had to fit.
#include <doctest/doctest.h>

#include "core/error.h"
#include "core/ops.h"
#include "reference.h"

using namespace tg;
using namespace tg::test;

TEST_CASE("index_select along each dim, with repeated indices, on every layout") {
  const Shape shape = {3, 4, 2};
  const std::vector<int64_t> picks = {2, 3, 0, 2, 0, 1};
  for (DType dt : {f32, f64, i64})
    for (const Layout& l : layouts(sample(24, 5.0, 1), shape, dt))
      for (int64_t dim : {0, 1, 2, -1}) {
        CAPTURE(dt);
        CAPTURE(l.name);
        CAPTURE(dim);
        const int64_t d = dim < 0 ? dim + 3 : dim;
        std::vector<int64_t> idx;
        for (int64_t p : picks)
          if (p < shape[d]) idx.push_back(p);
        Shape out = shape;
        out[d] = int64_t(idx.size());
        std::vector<double> want;
        for (const Index& i : indices(out)) {
          Index src = i;
          src[d] = idx[i[d]];
          want.push_back(at(l.t, src));
        }
        Tensor got = index_select(l.t, dim, index_tensor(idx, {int64_t(idx.size())}));
        CHECK(got.dtype() == dt);
        check_tensor(got, out, want, 0, 0);
      }
}

TEST_CASE("index_select with an empty or 0-d index, and on bool data") {
  Tensor x = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  check_tensor(index_select(x, 1, index_tensor({}, {0})), {2, 0}, {});
  check_tensor(index_select(x, 0, index_tensor({1}, {})), {1, 3}, {4, 5, 6});
  check_tensor(index_select(tensor({1, 0, 1}, boolean), 0, index_tensor({1, 2}, {2})), {2}, {0, 1});
  check_tensor(index_select(scalar_tensor(5), 0, index_tensor({0}, {1})), {}, {5});
}

TEST_CASE("index_add accumulates repeated indices into a copy") {
  Tensor x = zeros({3, 2}, f64);
  Tensor src = tensor({1, 2, 10, 20, 100, 200, 1000, 2000}, {4, 2}, f64);
  Tensor out = index_add(x, 0, index_tensor({2, 0, 2, 2}, {4}), src);
  check_tensor(out, {3, 2}, {10, 20, 0, 0, 1101, 2202});  // row 2 receives rows 0, 2 and 3
  check_tensor(x, {3, 2}, std::vector<double>(6, 0.0));   // the input is untouched
  CHECK(out.storage() != x.storage());
  // along dim 1, from a transposed source into a strided input
  Tensor base = tensor({1, 1, 1, 1, 1, 1}, {2, 3}).mT();  // (3, 2)
  Tensor s = tensor({5, 6, 7, 8, 9, 10}, {2, 3}).mT();    // (3, 2): rows (5, 8) (6, 9) (7, 10)
  check_tensor(index_add(base, 1, index_tensor({1, 1}, {2}), s), {3, 2}, {1, 14, 1, 16, 1, 18});
  Tensor k = index_add(zeros({2}, i64), 0, index_tensor({0, 0, 0}, {3}), tensor({1, 2, 3}, i64));
  check_tensor(k, {2}, {6, 0}, 0, 0);
}

TEST_CASE("index_add is the adjoint of index_select") {
  // <index_select(x, d, i), y> == <x, index_add(0, d, i, y)> for any x, y
  Tensor x = tensor(sample(24, 1.0, 1), {2, 3, 4}, f64);
  Tensor idx = index_tensor({3, 0, 3, 1, 2}, {5});
  Tensor y = tensor(sample(30, 1.0, 2), {2, 3, 5}, f64);
  double lhs = sum(mul(index_select(x, 2, idx), y)).item();
  double rhs = sum(mul(x, index_add(zeros_like(x), 2, idx, y))).item();
  CHECK(lhs == doctest::Approx(rhs).epsilon(1e-12));
}

TEST_CASE("embedding_bag_sum adds each bag's rows, leaving out padding_idx; from a transposed weight") {
  Tensor w = tensor({1, 2, 10, 20, 100, 200, 1000, 2000}, {4, 2}, f64);
  Tensor bags = index_tensor({1, 3, 1, 0, 2, 0, 0, 0, 0}, {3, 3});  // row 1 twice; a bag of padding only
  check_tensor(embedding_bag_sum(w, bags, 0), {3, 2}, {1020, 2040, 100, 200, 0, 0});
  check_tensor(embedding_bag_sum(w, bags, -1), {3, 2}, {1020, 2040, 102, 204, 3, 6});  // row 0 counted
  Tensor wt = tensor({1, 10, 100, 1000, 2, 20, 200, 2000}, {2, 4}).mT();  // (4, 2), strided
  check_tensor(embedding_bag_sum(wt, bags, 0), {3, 2}, {1020, 2040, 100, 200, 0, 0});
}

TEST_CASE("embedding_bag_sum_backward adds each bag's dy at its rows and is the adjoint of embedding_bag_sum") {
  Tensor bags = index_tensor({1, 3, 1, 0, 2, 0}, {2, 3});
  Tensor dy = tensor({1, 2, 10, 20}, {2, 2}, f64);
  check_tensor(embedding_bag_sum_backward(dy, bags, 4, 0), {4, 2}, {0, 0, 2, 4, 10, 20, 1, 2});  // row 0 left out
  // <embedding_bag_sum(w, i), y> == <w, embedding_bag_sum_backward(y, i)> for any w, y
  Tensor w = tensor(sample(8, 1.0, 1), {4, 2}, f64), y = tensor(sample(4, 1.0, 2), {2, 2}, f64);
  double lhs = sum(mul(embedding_bag_sum(w, bags, 0), y)).item();
  double rhs = sum(mul(w, embedding_bag_sum_backward(y, bags, 4, 0))).item();
  CHECK(lhs == doctest::Approx(rhs).epsilon(1e-12));
}

TEST_CASE("embedding_bag_sum names an index or padding_idx out of range and an index that is not (M, N)") {
  Tensor w = zeros({4, 2});
  CHECK_THROWS_WITH_AS(embedding_bag_sum(w, index_tensor({1, 4}, {1, 2}), 0),
                       doctest::Contains("embedding_bag_sum: index 4 is out of range [0, 4)"), IndexError);
  CHECK_THROWS_WITH_AS(embedding_bag_sum(w, index_tensor({1, 2}, {1, 2}), 4),
                       doctest::Contains("padding_idx 4 is out of range for 4 rows"), IndexError);
  CHECK_THROWS_WITH_AS(embedding_bag_sum(w, index_tensor({1, 2}, {2}), 0), doctest::Contains("must be (M, N), got (2,)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(embedding_bag_sum_backward(zeros({3, 2}), index_tensor({1, 2}, {1, 2}), 4, 0),
                       doctest::Contains("(3, 2) vs (1, 2)"), ShapeError);
  CHECK_THROWS_WITH_AS(embedding_bag_sum(zeros({4}), index_tensor({1, 2}, {1, 2}), 0),
                       doctest::Contains("embedding_bag_sum: weight must be (V, D), got (4,)"), ShapeError);
  CHECK_THROWS_WITH_AS(embedding_bag_sum_backward(zeros({1, 2}), index_tensor({0, 0}, {1, 2}), 0, -1),
                       doctest::Contains("num_embeddings must be >= 1, got 0"), ValueError);
}

TEST_CASE("gather picks along a dim by a same-rank index, from any layout") {
  for (const Layout& l : layouts({0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23}, {3, 4}, f64)) {
    CAPTURE(l.name);
    Tensor i1 = index_tensor({3, 0, 1, 1, 3, 2}, {3, 2});  // two picks per row
    check_tensor(gather(l.t, 1, i1), {3, 2}, {3, 0, 11, 11, 23, 22}, 0, 0);
    Tensor i0 = index_tensor({2, 0, 1}, {1, 3});  // one pick per column, first 3 columns
    check_tensor(gather(l.t, 0, i0), {1, 3}, {20, 1, 12}, 0, 0);
  }
  // picking the label's logit, as cross-entropy does
  Tensor logits = tensor(sample(12, 2.0, 3), {4, 3});
  Tensor labels = index_tensor({2, 0, 1, 2}, {4, 1});
  Tensor picked = gather(logits, 1, labels);
  for (int64_t r = 0; r < 4; ++r) CHECK(at(picked, {r, 0}) == at(logits, {r, labels.to_vector<int64_t>()[r]}));
  check_tensor(gather(scalar_tensor(4), 0, index_tensor({0}, {})), {}, {4});
  check_tensor(gather(zeros({2, 3}), 1, index_tensor({}, {2, 0})), {2, 0}, {});
}

TEST_CASE("scatter_add accumulates into a copy and is the adjoint of gather") {
  Tensor x = zeros({2, 3}, f64);
  Tensor idx = index_tensor({0, 0, 2, 1, 1, 1}, {2, 3});
  Tensor src = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, f64);
  check_tensor(scatter_add(x, 1, idx, src), {2, 3}, {3, 0, 3, 0, 15, 0});
  check_tensor(scatter_add(x, 0, index_tensor({1, 1, 0}, {1, 3}), tensor({7, 8, 9}, {1, 3}, f64)), {2, 3},
               {0, 0, 9, 7, 8, 0});
  check_tensor(x, {2, 3}, std::vector<double>(6, 0.0));
  // <gather(a, d, i), y> == <a, scatter_add(0, d, i, y)>
  Tensor a = tensor(sample(12, 1.0, 4), {3, 4}, f64);
  Tensor gi = index_tensor({0, 2, 2, 1, 2, 1, 0, 0}, {2, 4}).mT();  // (4, 2), non-contiguous
  Tensor y = tensor(sample(8, 1.0, 5), {4, 2}, f64).mT().mT();
  for (int64_t d : {0, 1}) {
    Tensor i = d == 1 ? gi.narrow(0, 0, 3) : gi.narrow(0, 0, 3).mT();  // (3, 2) or (2, 3) index
    Tensor yy = d == 1 ? y.narrow(0, 0, 3).contiguous() : y.narrow(0, 0, 3).mT().contiguous();
    double lhs = sum(mul(gather(a, d, i), yy)).item();
    double rhs = sum(mul(a, scatter_add(zeros_like(a), d, i, yy))).item();
    CAPTURE(d);
    CHECK(lhs == doctest::Approx(rhs).epsilon(1e-12));
  }
}

TEST_CASE("scatter writes a source or a value into a copy, the last repeat winning, from a larger source") {
  const Tensor x = tensor({1, 2, 3, 4, 5, 6}, {2, 3}, f64);
  const Tensor idx = index_tensor({2, 0, 2, 1}, {2, 2});  // row 0 writes column 2, then 0; row 1 column 2, then 1
  const Tensor src = tensor({10, 20, 99, 30, 40, 99}, {2, 3}, f64);  // column 2 lies outside the index
  check_tensor(scatter(x, 1, idx, src), {2, 3}, {20, 2, 10, 4, 40, 30}, 0, 0);
  check_tensor(scatter(x, 1, index_tensor({1, 1}, {1, 2}), src), {2, 3}, {1, 20, 3, 4, 5, 6}, 0, 0);  // 20 wins
  check_tensor(scatter(x, 0, index_tensor({1, 0}, {1, 2}), -1.0), {2, 3}, {1, -1, 3, -1, 5, 6}, 0, 0);
  check_tensor(scatter(index_tensor({1, 2, 3}, {3}), 0, index_tensor({2}, {1}), 7.0), {3}, {1, 2, 7}, 0, 0);  // i64
  check_tensor(scatter_add(x, 1, index_tensor({0, 0}, {1, 2}), src), {2, 3}, {31, 2, 3, 4, 5, 6}, 0, 0);
  check_tensor(x, {2, 3}, {1, 2, 3, 4, 5, 6}, 0, 0);
  CHECK_THROWS_WITH_AS(scatter(x, 1, index_tensor({0, 1, 2, 0}, {1, 4}), src),
                       "scatter: index shape (1, 4) exceeds source shape (2, 3)", ShapeError);
  CHECK_THROWS_WITH_AS(scatter(x, 1, index_tensor({3}, {1, 1}), 0.0), "scatter: index 3 is out of range [0, 3)",
                       IndexError);
}

TEST_CASE("cat along each dim, from strided, zero-size and i64/bool pieces") {
  Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 3}), b = tensor({7, 8, 9}, {1, 3});
  check_tensor(cat({a, b}, 0), {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  check_tensor(cat({a, b.mT().mT(), a.narrow(0, 0, 0)}, 0), {3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  check_tensor(cat({a.mT(), a.mT()}, 1), {3, 4}, {1, 4, 1, 4, 2, 5, 2, 5, 3, 6, 3, 6});
  check_tensor(cat({a, a.slice(1, 0, 3, 2)}, -1), {2, 5}, {1, 2, 3, 1, 3, 4, 5, 6, 4, 6});
  Tensor c = cat({a}, 0);
  CHECK(c.storage() != a.storage());
  CHECK(c.version() == 0);
  check_tensor(cat({tensor({1, 2}, i64), tensor({3}, i64)}, 0), {3}, {1, 2, 3}, 0, 0);
  check_tensor(cat({tensor({1}, boolean), tensor({0}, boolean)}, 0), {2}, {1, 0});
  check_tensor(cat({zeros({0, 2}), zeros({0, 2})}, 0), {0, 2}, {});
}

// torch.cat([torch.tensor([[1, 2]]), torch.tensor([[0.5, 1.5]]), torch.tensor([[True, False]])]) is f32.
TEST_CASE("cat and stack promote dtypes as PyTorch") {
  const Tensor n = tensor({1, 2}, {1, 2}, i64), h = tensor({0.5, 1.5}, {1, 2}, f32), b = tensor({1, 0}, {1, 2}, boolean);
  const Tensor y = cat({n, h, b}, 0);
  CHECK(y.dtype() == f32);
  check_tensor(y, {3, 2}, {1, 2, 0.5, 1.5, 1, 0});
  CHECK(cat({b, n}, 1).dtype() == i64);
  check_tensor(cat({b, n}, 1), {1, 4}, {1, 0, 1, 2});
  CHECK(cat({b, b}, 0).dtype() == boolean);
  const Tensor s = stack({h, tensor({0.25, 3}, {1, 2}, f64)}, 0);
  CHECK(s.dtype() == f64);
  check_tensor(s, {2, 1, 2}, {0.5, 1.5, 0.25, 3});
}

TEST_CASE("stack adds a new dim at any position") {
  Tensor a = tensor({1, 2, 3}), b = tensor({4, 5, 6});
  check_tensor(stack({a, b}, 0), {2, 3}, {1, 2, 3, 4, 5, 6});
  check_tensor(stack({a, b}, 1), {3, 2}, {1, 4, 2, 5, 3, 6});
  check_tensor(stack({a, b}, -1), {3, 2}, {1, 4, 2, 5, 3, 6});
  check_tensor(stack({a.slice(0, 0, 3, 2), b.slice(0, 1, 3)}, 0), {2, 2}, {1, 3, 5, 6});
  check_tensor(stack({scalar_tensor(1), scalar_tensor(2), scalar_tensor(3)}, 0), {3}, {1, 2, 3});
  Tensor m = tensor({1, 2, 3, 4}, {2, 2});
  check_tensor(stack({m, m.mT()}, 1), {2, 2, 2}, {1, 2, 1, 3, 3, 4, 2, 4});
}

TEST_CASE("out-of-range indices name the op, the index and the size") {
  Tensor x = ones({3, 4});
  CHECK_THROWS_WITH_AS(index_select(x, 0, index_tensor({0, 3}, {2})),
                       doctest::Contains("index_select: index 3 is out of range [0, 3)"), IndexError);
  CHECK_THROWS_WITH_AS(index_select(x, 1, index_tensor({-5}, {1})),
                       doctest::Contains("index_select: index -5 is out of range [0, 4)"), IndexError);
  CHECK_THROWS_WITH_AS(index_add(x, 0, index_tensor({7}, {1}), ones({1, 4})),
                       doctest::Contains("index_add: index 7 is out of range [0, 3)"), IndexError);
  CHECK_THROWS_WITH_AS(gather(x, 1, index_tensor({0, 4}, {1, 2})), doctest::Contains("gather: index 4 is out of range [0, 4)"),
                       IndexError);
  CHECK_THROWS_WITH_AS(scatter_add(x, 0, index_tensor({-4}, {1, 1}), ones({1, 1})),
                       doctest::Contains("scatter_add: index -4 is out of range [0, 3)"), IndexError);
  // -1 counts from nowhere: refused as PyTorch 1.13 refuses it, rather than read as the last entry
  CHECK_THROWS_WITH_AS(index_select(x, 0, index_tensor({-1}, {1})),
                       doctest::Contains("index_select: index -1 is out of range [0, 3)"), IndexError);
  CHECK_THROWS_WITH_AS(gather(x, 1, index_tensor({-1}, {1, 1})), doctest::Contains("gather: index -1 is out of range [0, 4)"),
                       IndexError);
  CHECK_THROWS_WITH_AS(index_select(x, 2, index_tensor({0}, {1})),
                       doctest::Contains("index_select: dim 2 out of range for a 2-d tensor"), IndexError);
  CHECK_THROWS_WITH_AS(index_select(scalar_tensor(5), 0, index_tensor({0, 0}, {2})),
                       doctest::Contains("index_select: a 0-d input takes exactly one index, got 2"), IndexError);
  CHECK_THROWS_WITH_AS(index_add(scalar_tensor(5), 0, index_tensor({0, 0}, {2}), scalar_tensor(1)),
                       doctest::Contains("index_add: a 0-d input takes exactly one index, got 2"), IndexError);
}

TEST_CASE("index and join errors name the shapes and dtypes") {
  Tensor x = ones({3, 4});
  CHECK_THROWS_WITH_AS(index_select(x, 0, tensor({0})), doctest::Contains("index_select: indices must be i64, got f32"),
                       DTypeError);
  CHECK_THROWS_WITH_AS(index_select(x, 0, index_tensor({0, 1}, {1, 2})),
                       doctest::Contains("index_select: index must be 1-D, got shape (1, 2)"), ShapeError);
  CHECK_THROWS_WITH_AS(index_add(x, 0, index_tensor({0, 1}, {2, 1}), ones({2, 4})),
                       doctest::Contains("index_add: index must be 1-D, got shape (2, 1)"), ShapeError);
  CHECK_THROWS_WITH_AS(index_add(x, 0, index_tensor({0, 1}, {2}), ones({2, 3})),
                       doctest::Contains("index_add: source shape (2, 3) does not match (2, 4) (input (3, 4), 2 indices)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(index_add(x, 0, index_tensor({0}, {1}), ones({1, 4}, f64)),
                       doctest::Contains("index_add: dtypes differ: f32 vs f64"), DTypeError);
  CHECK_THROWS_WITH_AS(gather(x, 0, index_tensor({0}, {1})),
                       doctest::Contains("gather: index shape (1,) and input shape (3, 4) differ in ndim"), ShapeError);
  CHECK_THROWS_WITH_AS(gather(x, 0, index_tensor({0, 0, 0, 0, 0}, {1, 5})),
                       doctest::Contains("gather: index shape (1, 5) exceeds input shape (3, 4) at dim 1"), ShapeError);
  CHECK_THROWS_WITH_AS(scatter_add(x, 0, index_tensor({0, 0, 0}, {1, 3}), ones({1, 2})),  // a larger source is read
                       doctest::Contains("scatter_add: index shape (1, 3) exceeds source shape (1, 2)"), ShapeError);
  CHECK_THROWS_WITH_AS(cat({x, ones({2, 3})}, 0), doctest::Contains("cat: shapes (3, 4) and (2, 3) differ outside dim 0"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(cat({x, ones({4})}, 0), doctest::Contains("cat: shapes (3, 4) and (4,) differ outside dim 0"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(cat({}, 0), doctest::Contains("cat: expected at least one tensor"), ValueError);
  CHECK_THROWS_WITH_AS(cat({scalar_tensor(1)}, 0), doctest::Contains("cat: zero-dimensional tensors cannot be concatenated"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(stack({x, ones({4, 3})}, 0), doctest::Contains("stack: shapes differ: (3, 4) vs (4, 3)"), ShapeError);
  CHECK_THROWS_WITH_AS(stack({x}, 3), doctest::Contains("stack: dim 3 out of range for a 3-d tensor"), IndexError);
}
