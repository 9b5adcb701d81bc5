// Our small f32 GEMM, bit for bit, over a sweep of shapes and all four transpositions: on OpenBLAS's SkylakeX
// core against cblas_sgemm (every published result was computed with OpenBLAS's sums, so the kernel may take
// only the shapes for which it gives the same bits: core/sgemm_small.cpp says which and why), on other cores
// against each element's sum over k in order, one fma a term.
#include <doctest/doctest.h>
#include <cblas.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/cpu/kernels.h"
#include "core/ops.h"
#include "core/random.h"

using namespace tg::cpu;

namespace {

struct Case {
  bool trans_a, trans_b;
  int64_t M, N, K;
};

// C = op(A) @ op(B) as sgemm_small must give it here: cblas_sgemm's where it gives OpenBLAS's bits, else every
// element summed over k in order, one fma a term, from +0. A's rows (or columns, if trans_a) are lda apart,
// B's ldb, C's ldc.
void reference(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
               const float* b, int64_t ldb, float* c, int64_t ldc) {
  if (sgemm_small_gives_blas_bits()) {
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, int(M),
                int(N), int(K), 1.0f, a, int(lda), b, int(ldb), 0.0f, c, int(ldc));
    return;
  }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float sum = 0.0f;
      for (int64_t k = 0; k < K; ++k)
        sum = std::fma(trans_a ? a[k * lda + i] : a[i * lda + k], trans_b ? b[j * ldb + k] : b[k * ldb + j], sum);
      c[i * ldc + j] = sum;
    }
}

// The reference and sgemm_small on the same operands (leading dims padded, as views give them); true when
// their C's bits are equal. `fill` draws A's and B's elements.
template <class Fill>
bool same_bits(const Case& c, Fill&& fill) {
  const int64_t lda = (c.trans_a ? c.M : c.K) + 3, ldb = (c.trans_b ? c.K : c.N) + 1;
  std::vector<float> a(size_t(lda * (c.trans_a ? c.K : c.M))), b(size_t(ldb * (c.trans_b ? c.N : c.K)));
  for (float& x : a) x = fill();
  for (float& x : b) x = fill();
  std::vector<float> want(size_t(c.M * c.N), 7.0f), got(size_t(c.M * c.N), 5.0f);
  reference(c.trans_a, c.trans_b, c.M, c.N, c.K, a.data(), lda, b.data(), ldb, want.data(), c.N);
  const int64_t zero = 0;
  sgemm_small_batched(c.trans_a, c.trans_b, c.M, c.N, c.K, a.data(), lda, &zero, b.data(), ldb, &zero, got.data(),
                      &zero, c.N, 1);
  return std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0;
}

bool active() { return sgemm_small_takes(false, false, 64, 64, 64); }
std::string off_message() {
  return std::string("sgemm_small is off here (OpenBLAS core ") + openblas_get_corename() + "): nothing to compare";
}

}  // namespace

TEST_CASE("sgemm_small gives the reference's bits on every shape it takes") {
  if (!active()) {
    MESSAGE(off_message());
    return;
  }
  const int64_t dims[] = {1, 2, 3, 5, 8, 9, 15, 16, 17, 24, 25, 31, 32, 33, 48, 63, 64, 65, 100, 128, 129, 1024};
  const int64_t ks[] = {1, 2, 3, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 128, 255, 447, 448};
  // Normal values at several scales, a sixth of them zero (ReLU outputs, masked attention weights), drawn
  // once and dealt out in turn (drawing each element took most of the test's time).
  std::mt19937 gen(7);
  std::normal_distribution<float> normal;
  std::vector<float> pool(100003);
  for (float& x : pool) {
    const int scale = int(gen() % 6);
    x = scale == 0 ? 0.0f : normal(gen) * float(scale);
  }
  size_t next = 0;
  auto fill = [&] { return pool[next++ % pool.size()]; };
  // One OpenBLAS thread: with more, products it would spread over them stay on it (see the last test).
  const int threads = openblas_get_num_threads();
  openblas_set_num_threads(1);
  int taken = 0;
  // Every transposition of (M, N, K) that sgemm_small takes (up to `max_flops`) must give the reference's bits.
  auto sweep = [&](auto&& ms, auto&& ns, auto&& k_values, double max_flops) {
    for (int t = 0; t < 4; ++t)
      for (int64_t M : ms)
        for (int64_t N : ns)
          for (int64_t K : k_values) {
            const Case c{(t & 1) != 0, (t & 2) != 0, M, N, K};
            if (double(M) * double(N) * double(K) > max_flops || !sgemm_small_takes(c.trans_a, c.trans_b, M, N, K))
              continue;
            ++taken;
            CAPTURE(c.trans_a);
            CAPTURE(c.trans_b);
            CAPTURE(M);
            CAPTURE(N);
            CAPTURE(K);
            REQUIRE(same_bits(c, fill));
          }
  };
  sweep(dims, dims, ks, 1.5e6);
  // Beyond one K block (448): the level-3 driver's blocks.
  sweep(std::vector<int64_t>{1, 16, 17, 64, 65}, std::vector<int64_t>{1, 16, 31, 64, 128},
        std::vector<int64_t>{449, 500, 896, 897, 1024, 1536}, 1e300);
  openblas_set_num_threads(threads);
  CHECK(taken > 4400);
}

TEST_CASE("sgemm_small keeps the sign of a zero sum as the reference does (OpenBLAS on each of its paths)") {
  if (!active()) {
    MESSAGE(off_message());
    return;
  }
  // Every product underflows to -0: the small-matrix kernels store the sum's -0, the level-3 path adds it
  // to a zeroed C and stores +0. Shapes on both sides of M·N·K = 100^3.
  const int threads = openblas_get_num_threads();
  openblas_set_num_threads(1);
  std::mt19937 gen(3);
  auto tiny = [&] { return (gen() % 2 ? 1e-30f : -1e-30f) * (gen() % 2 ? 1.0f : -1.0f); };
  for (const Case& c : {Case{false, false, 16, 16, 16}, Case{true, false, 64, 64, 200}, Case{false, true, 1024, 64, 64},
                        Case{false, false, 1024, 64, 64}, Case{true, true, 33, 17, 5}}) {
    CAPTURE(c.M);
    CAPTURE(c.N);
    CAPTURE(c.K);
    REQUIRE(sgemm_small_takes(c.trans_a, c.trans_b, c.M, c.N, c.K));
    CHECK(same_bits(c, tiny));
  }
  openblas_set_num_threads(threads);
}

TEST_CASE("sgemm_small refuses empty and large products, and on SkylakeX those OpenBLAS sums in another order") {
  CHECK_FALSE(sgemm_small_takes(false, false, 0, 8, 8));
  CHECK_FALSE(sgemm_small_takes(false, false, 256, 256, 256));  // large: OpenBLAS's blocking wins
  if (!active()) return;
  // Small-matrix kernels that sum in 16 lanes: A @ B with N % 16 in 1..8 and K >= 32; A @ Bᵀ with M·N <= 1200.
  CHECK(sgemm_small_takes(false, false, 4, 8, 32) == !sgemm_small_gives_blas_bits());
  CHECK(sgemm_small_takes(false, false, 32, 17, 64) == !sgemm_small_gives_blas_bits());
  CHECK(sgemm_small_takes(false, true, 25, 25, 32) == !sgemm_small_gives_blas_bits());
  const int threads = openblas_get_num_threads();
  openblas_set_num_threads(1);
  CHECK(sgemm_small_takes(false, false, 32, 16, 32));
  CHECK(sgemm_small_takes(false, true, 32, 32, 16));
  CHECK(sgemm_small_takes(false, true, 1024, 64, 64));
  CHECK(sgemm_small_takes(true, false, 64, 64, 1536));
  // With two OpenBLAS threads: K over one block (448) is split by the thread count, and OpenBLAS spreads
  // products over M·N·K = 2^18 over its threads, so both stay on it on SkylakeX; small ones still come here.
  openblas_set_num_threads(2);
  if (openblas_get_num_threads() == 2 && sgemm_small_gives_blas_bits()) {
    CHECK_FALSE(sgemm_small_takes(true, false, 64, 64, 1536));
    CHECK_FALSE(sgemm_small_takes(false, true, 1024, 64, 64));
    CHECK(sgemm_small_takes(false, true, 32, 32, 16));
    CHECK(sgemm_small_takes(true, false, 64, 64, 64));
  }
  openblas_set_num_threads(threads);
}

TEST_CASE("sgemm_small_batched gives the reference's bits on every head of attention's (B, H, S, d) views") {
  if (!active()) {
    MESSAGE(off_message());
    return;
  }
  // x and y are (B, S, H·d) projections; head (b, h) of each is the (S x d) matrix at b·S·H·d + h·d with row
  // stride H·d. The products of attention's forward and backward: x @ yᵀ, x @ y (as (S x S) @ (S x d) with
  // a (B, H, S, S) first operand, its C written as the heads of a (B, S, H·d) tensor, as the backward's dq
  // and the forward's output are), xᵀ @ y.
  const int64_t B = 3, H = 4, S = 25, d = 16, E = H * d;
  std::mt19937 gen(11);
  std::normal_distribution<float> normal;
  std::vector<float> x(size_t(B * S * E)), y(size_t(B * S * E)), p(size_t(B * H * S * S));
  for (std::vector<float>* v : {&x, &y, &p})
    for (float& e : *v) e = normal(gen);
  std::vector<int64_t> head_at, square_at;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) head_at.push_back(b * S * E + h * d), square_at.push_back((b * H + h) * S * S);
  struct Product {
    bool ta, tb;
    int64_t M, N, K, lda, ldb;
    const std::vector<float>& a;
    const std::vector<int64_t>& a_at;
    bool heads_out;  // C is (S x d) at head_at with row stride E, else packed
  };
  const int threads = openblas_get_num_threads();
  openblas_set_num_threads(1);
  for (const Product& q : {Product{false, true, S, S, d, E, E, x, head_at, false},
                           Product{false, false, S, d, S, S, E, p, square_at, true},
                           Product{true, false, d, d, S, E, E, x, head_at, false}}) {
    CAPTURE(q.ta);
    CAPTURE(q.tb);
    REQUIRE(sgemm_small_takes(q.ta, q.tb, q.M, q.N, q.K));
    std::vector<float> want(size_t(B * H * q.M * q.N)), got(want.size(), 3.0f);
    std::vector<int64_t> c_at;
    for (size_t i = 0; i < head_at.size(); ++i) c_at.push_back(q.heads_out ? head_at[i] : int64_t(i) * q.M * q.N);
    const int64_t ldc = q.heads_out ? E : q.N;
    for (size_t i = 0; i < head_at.size(); ++i)
      reference(q.ta, q.tb, q.M, q.N, q.K, q.a.data() + q.a_at[i], q.lda, y.data() + head_at[i], q.ldb,
                want.data() + c_at[i], ldc);
    sgemm_small_batched(q.ta, q.tb, q.M, q.N, q.K, q.a.data(), q.lda, q.a_at.data(), y.data(), q.ldb, head_at.data(),
                        got.data(), c_at.data(), ldc, int64_t(head_at.size()));
    CHECK(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
  }
  openblas_set_num_threads(threads);
}

TEST_CASE("linear gives the bits of matmul then add: bias in our kernel's store, or under OpenBLAS's product") {
  if (!active()) {
    MESSAGE(off_message());
    return;
  }
  // A Dense layer's shapes on the level-3 path (one K block, and K over one block: the bias goes onto the
  // last), on the small-matrix kernels, column tails, and a -0 bias; one row per (B, S) position. The last
  // three are beyond our kernel: OpenBLAS adds the product onto the prefilled bias (one K block), or the
  // bias is added afterwards (K = 600).
  struct Dense {
    tg::Shape x;
    int64_t out;
  };
  const int threads = openblas_get_num_threads();
  openblas_set_num_threads(1);
  tg::Generator gen(5);
  for (const Dense& d : {Dense{{32, 32, 64}, 128}, Dense{{32, 32, 128}, 64}, Dense{{1024, 64}, 2}, Dense{{7, 5, 33}, 17},
                         Dense{{300, 600}, 20}, Dense{{4, 16}, 24}, Dense{{64}, 5}, Dense{{16, 128, 256}, 1000},
                         Dense{{2048, 448}, 33}, Dense{{64, 600}, 512}}) {
    CAPTURE(d.x);
    CAPTURE(d.out);
    const tg::Tensor x = tg::relu(tg::randn(d.x, tg::f32, &gen)), w = tg::randn({d.out, d.x.back()}, tg::f32, &gen);
    const tg::Tensor b = tg::where(tg::lt(tg::randn({d.out}, tg::f32, &gen), 0.0), tg::scalar_tensor(-0.0, tg::f32),
                                   tg::randn({d.out}, tg::f32, &gen));
    const tg::Tensor want = tg::add(tg::matmul(x, w.mT()), b), got = tg::linear(x, w, b);
    REQUIRE(got.shape() == want.shape());
    CHECK(std::memcmp(want.data<float>(), got.data<float>(), size_t(want.numel()) * sizeof(float)) == 0);
  }
  // Products that underflow to -0 sum to -0, which lands on OpenBLAS's zeroed C as +0: plus a -0 bias, +0.
  const tg::Tensor x = tg::full({512, 256}, 1e-30), w = tg::full({128, 256}, -1e-30), b = tg::full({128}, -0.0);
  const tg::Tensor want = tg::add(tg::matmul(x, w.mT()), b), got = tg::linear(x, w, b);
  CHECK(std::signbit(want.data<float>()[0]) == false);
  CHECK(std::memcmp(want.data<float>(), got.data<float>(), size_t(want.numel()) * sizeof(float)) == 0);
  openblas_set_num_threads(threads);
}
