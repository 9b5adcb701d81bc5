// Our small f32 GEMM on every Highway target compiled for this CPU (AVX-512, AVX2, SSE4, scalar here), over a
// sweep of shapes and all four transpositions: the bits of its documented order (each element summed over k in
// order, one multiply-add a term), and within the stated bound of a double-precision product and of
// cblas_sgemm (on whichever OpenBLAS core runs).
#include <doctest/doctest.h>
#include <cblas.h>
#include <hwy/targets.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "core/cpu/kernels.h"
#include "core/ops.h"
#include "core/random.h"
#include "core/targets.h"

using namespace tg::cpu;
using tg::test::for_each_target;

namespace {

struct Case {
  bool trans_a, trans_b;
  int64_t M, N, K;
};

// A case's operands, with leading dims padded as views give them, and sgemm_small's product of them.
struct Product {
  Case c;
  int64_t lda, ldb;
  std::vector<float> a, b, got;
  float at_a(int64_t i, int64_t k) const { return c.trans_a ? a[size_t(k * lda + i)] : a[size_t(i * lda + k)]; }
  float at_b(int64_t k, int64_t j) const { return c.trans_b ? b[size_t(j * ldb + k)] : b[size_t(k * ldb + j)]; }
};

template <class Fill>
Product run(const Case& c, Fill&& fill) {
  Product p{c, (c.trans_a ? c.M : c.K) + 3, (c.trans_b ? c.K : c.N) + 1, {}, {}, {}};
  p.a.resize(size_t(p.lda * (c.trans_a ? c.K : c.M)));
  p.b.resize(size_t(p.ldb * (c.trans_b ? c.N : c.K)));
  for (float& x : p.a) x = fill();
  for (float& x : p.b) x = fill();
  p.got.assign(size_t(c.M * c.N), 5.0f);
  const int64_t zero = 0;
  sgemm_small_batched(c.trans_a, c.trans_b, c.M, c.N, c.K, p.a.data(), p.lda, &zero, p.b.data(), p.ldb, &zero,
                      p.got.data(), &zero, c.N, 1);
  return p;
}

// Whether the target running now fuses its multiply-adds: 1·(-1) then (1 + 2^-12)² summed in order is
// 2^-11 + 2^-24 with an FMA, 2^-11 when the product is rounded first.
bool fuses() {
  const float a[2] = {1.0f, 1.0f + 0x1p-12f}, b[2] = {-1.0f, 1.0f + 0x1p-12f};
  float c = 0;
  const int64_t zero = 0;
  sgemm_small_batched(false, false, 1, 1, 2, a, 2, &zero, b, 1, &zero, &c, &zero, 1, 1);
  return c == 0x1p-11f + 0x1p-24f;
}

// The documented order: element (i, j) summed over k in order from +0, one multiply-add a term.
float in_order(const Product& p, int64_t i, int64_t j, bool fused) {
  float sum = 0.0f;
  for (int64_t k = 0; k < p.c.K; ++k)
    sum = fused ? std::fma(p.at_a(i, k), p.at_b(k, j), sum) : p.at_a(i, k) * p.at_b(k, j) + sum;
  return sum;
}

bool same(float x, float y) { return std::isnan(x) ? std::isnan(y) : std::memcmp(&x, &y, sizeof x) == 0; }

// Normal values at several scales, a sixth of them zero (ReLU outputs, masked attention weights), drawn
// once and dealt out in turn.
struct Pool {
  std::vector<float> values;
  size_t next = 0;
  explicit Pool(unsigned seed) : values(100003) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> normal;
    for (float& x : values) {
      const int scale = int(gen() % 6);
      x = scale == 0 ? 0.0f : normal(gen) * float(scale);
    }
  }
  float operator()() { return values[next++ % values.size()]; }
};

}  // namespace

TEST_CASE("sgemm_small sums each element over k in order, one multiply-add a term, on every target") {
  const int64_t dims[] = {1, 2, 3, 5, 8, 9, 15, 16, 17, 24, 25, 31, 33, 48, 63, 64, 65, 100, 129};
  const int64_t ks[] = {1, 2, 3, 8, 15, 16, 17, 31, 33, 64, 255, 256, 257, 600};
  Pool pool(7);
  for_each_target([&] {
    const bool fused = fuses();
    int compared = 0;
    for (int t = 0; t < 4; ++t)
      for (int64_t M : dims)
        for (int64_t N : dims)
          for (int64_t K : ks) {
            if (double(M) * double(N) * double(K) > 4e5) continue;
            const Case c{(t & 1) != 0, (t & 2) != 0, M, N, K};
            const Product p = run(c, pool);
            bool ok = true;
            for (int64_t i = 0; i < M && ok; ++i)
              for (int64_t j = 0; j < N && ok; ++j) ok = same(p.got[size_t(i * N + j)], in_order(p, i, j, fused));
            CAPTURE(c.trans_a);
            CAPTURE(c.trans_b);
            CAPTURE(M);
            CAPTURE(N);
            CAPTURE(K);
            REQUIRE(ok);
            ++compared;
          }
    CHECK(compared > 2000);
  });
}

TEST_CASE("sgemm_small is within K·eps·Σ|a||b| of the f64 product and 2·K·eps·Σ|a||b| of cblas_sgemm") {
  // The in-order sum's error is at most K·u·Σ|a||b| (u = eps/2) to first order, and so is OpenBLAS's in any
  // of its orders: twice that from the exact product, four times from cblas_sgemm leaves room for the
  // second-order terms.
  const int64_t dims[] = {1, 7, 17, 40, 64};
  const int64_t ks[] = {1, 5, 31, 200, 1000};
  Pool pool(9);
  for_each_target([&] {
    for (int t = 0; t < 4; ++t)
      for (int64_t M : dims)
        for (int64_t N : dims)
          for (int64_t K : ks) {
            const Case c{(t & 1) != 0, (t & 2) != 0, M, N, K};
            const Product p = run(c, pool);
            std::vector<float> blas(size_t(M * N));
            cblas_sgemm(CblasRowMajor, c.trans_a ? CblasTrans : CblasNoTrans, c.trans_b ? CblasTrans : CblasNoTrans,
                        int(M), int(N), int(K), 1.0f, p.a.data(), int(p.lda), p.b.data(), int(p.ldb), 0.0f,
                        blas.data(), int(N));
            double worst = 0;  // the largest error in units of the bound
            for (int64_t i = 0; i < M; ++i)
              for (int64_t j = 0; j < N; ++j) {
                double exact = 0, magnitude = 0;
                for (int64_t k = 0; k < K; ++k) {
                  exact += double(p.at_a(i, k)) * double(p.at_b(k, j));
                  magnitude += std::abs(double(p.at_a(i, k)) * double(p.at_b(k, j)));
                }
                const double bound = double(K) * FLT_EPSILON * magnitude, got = p.got[size_t(i * N + j)];
                if (bound == 0) {
                  CHECK(got == 0);
                  continue;
                }
                worst = std::max({worst, std::abs(got - exact) / bound, std::abs(got - blas[size_t(i * N + j)]) / (2 * bound)});
              }
            CAPTURE(c.trans_a);
            CAPTURE(c.trans_b);
            CAPTURE(M);
            CAPTURE(N);
            CAPTURE(K);
            REQUIRE(worst <= 1.0);
          }
  });
}

TEST_CASE("sgemm_small propagates inf and NaN as the in-order sum does") {
  const float inf = INFINITY, nan = NAN;
  for_each_target([&] {
    const bool fused = fuses();
    // A row with a NaN, one with inf (against B's signs: ±inf, or NaN where inf meets a zero or -inf), a
    // column of B with -inf, ±0 everywhere else.
    for (const Case& c : {Case{false, false, 5, 19, 7}, Case{true, true, 13, 33, 40}}) {
      CAPTURE(c.trans_a);
      std::mt19937 gen(1);
      int64_t n = 0;
      const Product p = run(c, [&] {
        ++n;
        if (n == 3) return nan;
        if (n == 20 || n == 25) return inf;
        if (n == 300) return -inf;
        return gen() % 3 == 0 ? (gen() % 2 ? 0.0f : -0.0f) : float(int(gen() % 9) - 4);
      });
      int specials = 0;
      for (int64_t i = 0; i < c.M; ++i)
        for (int64_t j = 0; j < c.N; ++j) {
          const float got = p.got[size_t(i * c.N + j)];
          specials += !std::isfinite(got);
          CHECK(same(got, in_order(p, i, j, fused)));
        }
      CHECK(specials > c.N);  // NaN's row at least
    }
  });
}

TEST_CASE("sgemm_small takes products of 2 rows or more under 256³ multiply-adds (any size where OpenBLAS's "
          "kernels are narrower than the CPU), on a CPU with vectors") {
  const bool vectors = (hwy::SupportedTargets() & ~(HWY_SCALAR | HWY_EMU128)) != 0;
  CHECK_FALSE(sgemm_small_takes(false, false, 0, 8, 8));
  CHECK_FALSE(sgemm_small_takes(false, true, 1, 384, 1152));  // one row: gemm_batched's matrix-vector product
  CHECK_FALSE(sgemm_small_takes(false, true, 8, 8, 0));
  // large: OpenBLAS's blocking wins, unless its kernels are for narrower vectors than the CPU's
  const bool large = vectors && blas_narrower_than_cpu();
  CHECK(sgemm_small_takes(false, false, 256, 256, 256) == large);
  CHECK(sgemm_small_takes(true, false, 4096, 256, 16) == large);
  for (const Case& c : {Case{false, true, 32, 32, 16}, Case{false, false, 128, 32, 128}, Case{true, false, 64, 64, 1536},
                        Case{false, true, 1024, 192, 64}, Case{false, false, 255, 256, 256}})
    CHECK(sgemm_small_takes(c.trans_a, c.trans_b, c.M, c.N, c.K) == vectors);
  // on every vector target compiled in (SSE4 up, NEON), not on the emulated one (x86's fallback; an aarch64
  // CPU always has NEON, so there the fallback is NEON)
  for_each_target([](int64_t target) {
    CHECK(sgemm_small_takes(false, true, 32, 32, 16) == ((target & (HWY_SCALAR | HWY_EMU128)) == 0));
  });
}

TEST_CASE("sgemm_small_batched gives every head of attention's (B, H, S, d) views the in-order sums") {
  // x and y are (B, S, H·d) projections; head (b, h) of each is the (S x d) matrix at b·S·H·d + h·d with row
  // stride H·d. The products of attention's forward and backward: x @ yᵀ, x @ y (as (S x S) @ (S x d) with
  // a (B, H, S, S) first operand, its C written as the heads of a (B, S, H·d) tensor, as the backward's dq
  // and the forward's output are), xᵀ @ y; each head as a product of its own.
  const int64_t B = 3, H = 4, S = 25, d = 16, E = H * d;
  std::mt19937 gen(11);
  std::normal_distribution<float> normal;
  std::vector<float> x(size_t(B * S * E)), y(size_t(B * S * E)), p(size_t(B * H * S * S));
  for (std::vector<float>* v : {&x, &y, &p})
    for (float& e : *v) e = normal(gen);
  std::vector<int64_t> head_at, square_at;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) head_at.push_back(b * S * E + h * d), square_at.push_back((b * H + h) * S * S);
  struct Heads {
    bool ta, tb;
    int64_t M, N, K, lda, ldb;
    const std::vector<float>& a;
    const std::vector<int64_t>& a_at;
    bool heads_out;  // C is (S x d) at head_at with row stride E, else packed
  };
  for (const Heads& q : {Heads{false, true, S, S, d, E, E, x, head_at, false},
                         Heads{false, false, S, d, S, S, E, p, square_at, true},
                         Heads{true, false, d, d, S, E, E, x, head_at, false}}) {
    CAPTURE(q.ta);
    CAPTURE(q.tb);
    std::vector<float> want(size_t(B * H * q.M * q.N)), got(want.size(), 3.0f);
    std::vector<int64_t> c_at;
    for (size_t i = 0; i < head_at.size(); ++i) c_at.push_back(q.heads_out ? head_at[i] : int64_t(i) * q.M * q.N);
    const int64_t ldc = q.heads_out ? E : q.N;
    for (size_t i = 0; i < head_at.size(); ++i)
      sgemm_small_batched(q.ta, q.tb, q.M, q.N, q.K, q.a.data(), q.lda, &q.a_at[i], y.data(), q.ldb, &head_at[i],
                          want.data(), &c_at[i], ldc, 1);
    sgemm_small_batched(q.ta, q.tb, q.M, q.N, q.K, q.a.data(), q.lda, q.a_at.data(), y.data(), q.ldb, head_at.data(),
                        got.data(), c_at.data(), ldc, int64_t(head_at.size()));
    CHECK(std::memcmp(want.data(), got.data(), want.size() * sizeof(float)) == 0);
    // and those are the in-order sums (spot checks; the sweep above covers every shape)
    const bool fused = fuses();
    for (size_t h : {size_t(0), head_at.size() - 1}) {
      Product one{{q.ta, q.tb, q.M, q.N, q.K}, q.lda, q.ldb, {}, {}, {}};
      one.a.assign(q.a.begin() + q.a_at[h], q.a.end());
      one.b.assign(y.begin() + head_at[h], y.end());
      for (int64_t i = 0; i < q.M; ++i)
        for (int64_t j = 0; j < q.N; ++j) CHECK(same(got[size_t(c_at[h] + i * ldc + j)], in_order(one, i, j, fused)));
    }
  }
}

TEST_CASE("linear adds the bias to the product: matmul then add's bits on our kernel, else within the bound") {
  // A Dense layer's shapes on our kernel (K over one of its 256-blocks: the bias goes onto the last), column
  // tails, a -0 bias; and beyond it, where OpenBLAS adds the product onto the prefilled bias.
  struct Dense {
    tg::Shape x;
    int64_t out;
  };
  tg::Generator gen(5);
  for (const Dense& d : {Dense{{32, 32, 64}, 128}, Dense{{32, 32, 128}, 64}, Dense{{1024, 64}, 2}, Dense{{7, 5, 33}, 17},
                         Dense{{300, 600}, 20}, Dense{{4, 16}, 24}, Dense{{64}, 5}, Dense{{16, 128, 256}, 1000},
                         Dense{{2048, 448}, 33}, Dense{{64, 600}, 512}}) {
    CAPTURE(d.x);
    CAPTURE(d.out);
    const tg::Tensor x = tg::relu(tg::randn(d.x, tg::f32, &gen)), w = tg::randn({d.out, d.x.back()}, tg::f32, &gen);
    const tg::Tensor b = tg::where(tg::lt(tg::randn({d.out}, tg::f32, &gen), 0.0), tg::scalar_tensor(-0.0, tg::f32),
                                   tg::randn({d.out}, tg::f32, &gen));
    const tg::Tensor got = tg::linear(x, w, b);
    const int64_t K = d.x.back(), rows = x.numel() / K;
    if (sgemm_small_takes(false, true, rows, d.out, K)) {
      const tg::Tensor want = tg::add(tg::matmul(x, w.mT()), b);
      CHECK(std::memcmp(want.data<float>(), got.data<float>(), size_t(want.numel()) * sizeof(float)) == 0);
      continue;
    }
    // |got - exact| <= (K + 1)·eps·(Σ|x||w| + |b|): the sum's bound and the bias's rounding, with room
    const std::vector<double> xs = x.to_vector<double>(), ws = w.to_vector<double>(), bs = b.to_vector<double>();
    const std::vector<double> gs = got.to_vector<double>();
    double worst = 0;
    for (int64_t i = 0; i < rows; i += 7)
      for (int64_t j = 0; j < d.out; ++j) {
        double exact = bs[size_t(j)], magnitude = std::abs(bs[size_t(j)]);
        for (int64_t k = 0; k < K; ++k) {
          exact += xs[size_t(i * K + k)] * ws[size_t(j * K + k)];
          magnitude += std::abs(xs[size_t(i * K + k)] * ws[size_t(j * K + k)]);
        }
        const double error = std::abs(gs[size_t(i * d.out + j)] - exact);
        worst = std::max(worst, magnitude == 0 ? error : error / (double(K + 1) * FLT_EPSILON * magnitude));
      }
    CHECK(worst <= 1.0);
  }
}
