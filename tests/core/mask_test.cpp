// Packed masks (core/cpu/ops/mask.cpp): dropout's one-pass forward draws the stream bernoulli() draws and
// gives the values the float mask gave; the bits of relu's output; masked_scale and unpack_mask read them
// back.
// dropout_softmax_backward fuses masked_scale into softmax's gradient with their bits.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <iterator>
#include <vector>

#include "core/error.h"
#include "core/ops.h"
#include "core/random.h"

using namespace tg;

TEST_CASE("dropout keeps what bernoulli(1 - p) draws from the same seed, and scales as x·(m / (1-p)) did") {
  Generator a(21), b(21);
  const Tensor x = randn({7, 13});  // 91 elements: one full 64-bit word and a partial one
  DropoutResult r = dropout(x, 0.3, &a);
  const Tensor m = bernoulli({7, 13}, 0.7, f32, &b);
  CHECK(unpack_mask(r.keep, {7, 13}).to_vector<bool>() == ne(m, 0.0).to_vector<bool>());
  CHECK(r.output.to_vector<float>() == (x * (m / 0.7)).to_vector<float>());
  CHECK(r.scale == double(1.0f / 0.7f));
  CHECK(a.next() == b.next());  // both streams moved by one draw per element
}

TEST_CASE("dropout at p = 1 drops everything, at p = 0 keeps everything, and neither draws") {
  Generator a(3), b(3);
  DropoutResult r = dropout(ones({5}, f64), 1.0, &a);
  CHECK(r.output.to_vector<double>() == std::vector<double>(5, 0.0));
  CHECK(r.scale == 0);
  const Tensor x = randn({70});
  r = dropout(x, 0.0, &a);
  CHECK(r.output.to_vector<float>() == x.to_vector<float>());
  CHECK(unpack_mask(r.keep, {70}).to_vector<bool>() == std::vector<bool>(70, true));
  CHECK(a.next() == b.next());
}

TEST_CASE("dropout reads a transposed input in row-major order of its shape") {
  Generator a(8), b(8);
  const Tensor x = randn({6, 70}, f64);
  CHECK(dropout(x.mT(), 0.5, &a).output.to_vector<double>() ==
        dropout(x.mT().contiguous(), 0.5, &b).output.to_vector<double>());
}

TEST_CASE("pack_positive, unpack_mask and masked_scale round-trip a mask of the positive elements") {
  const Tensor x = tensor({-1.0, 2.0, 0.0, 3.5, -0.5}, f64);
  const Tensor bits = pack_positive(x);
  CHECK(bits.shape() == Shape{1});
  CHECK(unpack_mask(bits, {5}).to_vector<bool>() == std::vector<bool>{false, true, false, true, false});
  const Tensor dy = tensor({10.0, 20.0, 30.0, 40.0, 50.0}, f64);
  CHECK(masked_scale(dy, bits, 0.5).to_vector<double>() == std::vector<double>{0, 10, 0, 20, 0});
}

TEST_CASE("masked_scale refuses bits that do not hold its input") {
  const Tensor bits = pack_positive(ones({64}));
  CHECK_THROWS_WITH_AS(masked_scale(ones({65}), bits, 1.0),
                       doctest::Contains("masked_scale: packed mask (1,) i64 does not hold 65 elements"), ShapeError);
  CHECK_THROWS_AS(unpack_mask(bits, {2, 40}), ShapeError);
}

TEST_CASE("dropout_softmax_backward gives the bits of masked_scale then softmax_backward, on any line length") {
  // Line lengths that start blocks mid-word (25, 33, 100), on one (1, 32) and on several words (64); a
  // transposed dy; f64 through the two ops.
  for (int64_t n : {1, 25, 32, 33, 64, 100}) {
    for (DType dt : {f32, f64}) {
      CAPTURE(n);
      CAPTURE(dt);
      Generator gen{uint64_t(n)};
      const Tensor y = softmax(randn({3, 5, n}, dt, &gen), -1), dy = randn({3, n, 5}, dt, &gen).mT();
      const DropoutResult r = dropout(y, 0.3, &gen);
      const Tensor want = softmax_backward(masked_scale(dy, r.keep, r.scale), y, -1);
      const Tensor got = dropout_softmax_backward(dy, y, r.keep, r.scale);
      CHECK(got.shape() == want.shape());
      if (dt == f32) CHECK(got.to_vector<float>() == want.to_vector<float>());
      else CHECK(got.to_vector<double>() == want.to_vector<double>());
    }
  }
}

TEST_CASE("dropout_softmax_backward names the shapes and dtypes that do not fit") {
  const Tensor keep = dropout(ones({4, 8}), 0.5).keep;
  CHECK_THROWS_WITH_AS(dropout_softmax_backward(ones({4, 8}), ones({8, 4}), keep, 2.0),
                       doctest::Contains("dropout_softmax_backward: dy (4, 8) and y (8, 4)"), ShapeError);
  CHECK_THROWS_WITH_AS(dropout_softmax_backward(ones({4, 8}), ones({4, 8}, f64), keep, 2.0),
                       doctest::Contains("dropout_softmax_backward: dtypes differ: f32 vs f64"), DTypeError);
  CHECK_THROWS_AS(dropout_softmax_backward(ones({8, 9}), ones({8, 9}), keep, 2.0), ShapeError);  // 72 bits needed
}

namespace {
// The bytes of a contiguous f32 or f64 tensor (NaN == NaN, -0 != +0).
std::vector<uint8_t> bits_of(const Tensor& t) {
  std::vector<uint8_t> out(size_t(t.numel() * dtype_size(t.dtype())));
  if (t.dtype() == f32) std::memcpy(out.data(), t.data<float>(), out.size());
  else std::memcpy(out.data(), t.data<double>(), out.size());
  return out;
}
}  // namespace

// Through the ops, on this CPU's best kernels (mask_kernels_test.cpp runs every target): every length to 200
// (whole and partial vectors and words) against the per-element definitions, bit for bit, with NaN, ±inf, ±0
// and subnormals.
TEST_CASE("f32 masked_scale, dropout and pack_positive give the per-element definitions' bits at every length") {
  const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -1e-40f, 3.5f, -2.25f};
  Generator gen(17);
  for (int64_t n = 1; n <= 200; ++n) {
    CAPTURE(n);
    std::vector<float> xs = randn({n}, f32, &gen).to_vector<float>();
    for (int64_t i = 0; i < n; i += 7) xs[size_t(i)] = specials[size_t(i / 7) % std::size(specials)];
    const Tensor x = tensor(std::vector<double>(xs.begin(), xs.end()), {n}, f32);
    Generator a{static_cast<uint64_t>(n)}, b{static_cast<uint64_t>(n)};
    const DropoutResult r = dropout(x, 0.4, &a);
    const std::vector<bool> keep = unpack_mask(r.keep, {n}).to_vector<bool>();
    CHECK(bernoulli({n}, 0.6, f32, &b).to_vector<float>() == std::vector<float>(keep.begin(), keep.end()));
    const float scale = float(r.scale);
    std::vector<float> dropped(static_cast<size_t>(n)), scaled(static_cast<size_t>(n));
    for (size_t i = 0; i < size_t(n); ++i) {
      dropped[i] = xs[i] * (keep[i] ? scale : 0.0f);
      scaled[i] = keep[i] ? xs[i] * scale : 0.0f;
    }
    CHECK(bits_of(r.output) == bits_of(tensor(std::vector<double>(dropped.begin(), dropped.end()), {n}, f32)));
    CHECK(bits_of(masked_scale(x, r.keep, r.scale)) ==
          bits_of(tensor(std::vector<double>(scaled.begin(), scaled.end()), {n}, f32)));
    std::vector<bool> positive(static_cast<size_t>(n));
    for (size_t i = 0; i < size_t(n); ++i) positive[i] = xs[i] > 0;
    CHECK(unpack_mask(pack_positive(x), {n}).to_vector<bool>() == positive);
  }
}

TEST_CASE("relu_dropout gives dropout(relu(x))'s draws and bits, and keeps the bits of both masks") {
  const float specials[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -1e-40f, 3.5f, -2.25f};
  Generator gen(23);
  for (DType dtype : {f32, f64})
    for (int64_t n : {1, 15, 16, 17, 63, 64, 65, 100, 200, 1000}) {
      CAPTURE(n);
      CAPTURE(dtype);
      std::vector<float> xs = randn({n}, f32, &gen).to_vector<float>();
      for (int64_t i = 0; i < n; i += 5) xs[size_t(i)] = specials[size_t(i / 5) % std::size(specials)];
      const Tensor x = tensor(std::vector<double>(xs.begin(), xs.end()), {n}, dtype);
      for (double p : {0.0, 0.3, 1.0}) {
        Generator a{static_cast<uint64_t>(n)}, b{static_cast<uint64_t>(n)};
        const DropoutResult fused = relu_dropout(x, p, &a);
        const Tensor y = relu(x);
        const DropoutResult apart = dropout(y, p, &b);
        CHECK(bits_of(fused.output) == bits_of(apart.output));
        CHECK(fused.scale == apart.scale);
        const std::vector<bool> keep = unpack_mask(fused.keep, {n}).to_vector<bool>();
        const std::vector<bool> kept = unpack_mask(apart.keep, {n}).to_vector<bool>();
        const std::vector<bool> positive = unpack_mask(pack_positive(y), {n}).to_vector<bool>();
        for (size_t i = 0; i < size_t(n); ++i) CHECK(keep[i] == (kept[i] && positive[i]));
        CHECK(a.get_state() == b.get_state());  // the same number of draws
      }
    }
  CHECK_THROWS_WITH_AS(relu_dropout(ones({2}), 1.5), "relu_dropout: probability must be in [0, 1], got 1.5",
                       ValueError);
}
