// Packed masks (core/mask.cpp): dropout's one-pass forward draws the stream bernoulli() draws and gives the
// values the float mask gave; the bits of relu's output; masked_scale and unpack_mask read them back.
#include <doctest/doctest.h>

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
