// scaled_dot_product_attention's is_causal path (row blocks that skip the keys above the diagonal) against the
// one call with the causal mask spelled out: the same outputs and gradients to rounding in f64, the same
// layout, with cached keys in front (S_k > S_q) and user masks cut per block.
#include <doctest/doctest.h>

#include "autograd/functions.h"
#include "core/random.h"

using namespace tg;

namespace {

// key j > query i + (S_k - S_q): the future of query i when the queries are the last S_q positions.
Tensor future(int64_t S_q, int64_t S_k) {
  return gt(arange(0, double(S_k), 1, f64).unsqueeze(0), arange(double(S_k - S_q), double(S_k), 1, f64).unsqueeze(1));
}

double max_diff(const Tensor& a, const Tensor& b) { return amax(abs(sub(a, b))).item(); }

struct Run {
  Tensor out, dq, dk, dv;
};

// (out·R).sum() backward through either path, on fresh leaves of the same values.
Run run(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& blocked, const Tensor& added, bool causal) {
  Variable vq(q, true), vk(k, true), vv(v, true);
  const int64_t S_q = q.size(-2), S_k = k.size(-2);
  Tensor mask = causal ? blocked : blocked.defined() ? logical_or(blocked, future(S_q, S_k)) : future(S_q, S_k);
  Variable out = scaled_dot_product_attention(vq, vk, vv, {.blocked = mask, .added = added, .is_causal = causal});
  Generator gen(99);
  sum(out * Variable(randn(out.shape(), q.dtype(), &gen))).backward();
  return {out.value(), vq.grad(), vk.grad(), vv.grad()};
}

void check_same(const Run& fast, const Run& masked, double tol) {
  CHECK(max_diff(fast.out, masked.out) <= tol);
  CHECK(max_diff(fast.dq, masked.dq) <= tol);
  CHECK(max_diff(fast.dk, masked.dk) <= tol);
  CHECK(max_diff(fast.dv, masked.dv) <= tol);
}

}  // namespace

TEST_CASE("causal attention by row blocks equals the masked call in f64, output and gradients") {
  Generator gen(1);
  for (int64_t S : {5, 64, 200, 520}) {  // one block; exactly one; four; eight
    CAPTURE(S);
    const Tensor q = randn({2, 3, S, 8}, f64, &gen), k = randn({2, 3, S, 8}, f64, &gen),
                 v = randn({2, 3, S, 4}, f64, &gen);
    check_same(run(q, k, v, Tensor(), Tensor(), true), run(q, k, v, Tensor(), Tensor(), false), 1e-12);
  }
}

TEST_CASE("causal attention with cached keys in front, a padding mask and an added mask equals the masked call") {
  Generator gen(2);
  const Tensor q = randn({2, 2, 100, 4}, f64, &gen), k = randn({2, 2, 108, 4}, f64, &gen),
               v = randn({2, 2, 108, 4}, f64, &gen);
  const Tensor padding = gt(rand({2, 1, 1, 108}, f64, &gen), 0.8), added = randn({100, 108}, f64, &gen);
  check_same(run(q, k, v, padding, added, true), run(q, k, v, padding, added, false), 1e-12);
  const Tensor q1 = randn({2, 2, 1, 4}, f64, &gen);  // one new token over 108 keys: it sees them all
  check_same(run(q1, k, v, Tensor(), Tensor(), true), run(q1, k, v, Tensor(), Tensor(), false), 1e-12);
}

TEST_CASE("causal attention in f32 agrees with the masked call and keeps q's memory order") {
  Generator gen(3);
  const std::vector<int64_t> heads = {0, 2, 1, 3};  // (B, S, H, d) projections viewed as (B, H, S, d)
  const Tensor q = randn({2, 140, 2, 8}, f32, &gen).permute(heads), k = randn({2, 140, 2, 8}, f32, &gen).permute(heads),
               v = randn({2, 140, 2, 8}, f32, &gen).permute(heads);
  const Run fast = run(q, k, v, Tensor(), Tensor(), true), masked = run(q, k, v, Tensor(), Tensor(), false);
  check_same(fast, masked, 1e-5);
  CHECK(fast.out.strides() == masked.out.strides());
  CHECK(fast.dq.strides() == masked.dq.strides());
}

TEST_CASE("causal attention needs at least as many keys as queries") {
  const Variable q(randn({1, 5, 4})), k(randn({1, 3, 4}));
  CHECK_THROWS_WITH_AS(scaled_dot_product_attention(q, k, k, {.is_causal = true}),
                       doctest::Contains("is_causal needs at least as many keys as queries, got q (1, 5, 4) and k "
                                         "(1, 3, 4)"),
                       ShapeError);
}
