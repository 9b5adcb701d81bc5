// Random numbers: seeding reproduces draws, generators are independent, state round-trips, and each
// distribution has the range and moments it promises (loose statistical bounds, several sigma wide).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <thread>

#include "core/error.h"
#include "core/ops.h"
#include "core/random.h"
#include "reference.h"

using namespace tg;

namespace {

struct Moments {
  double mean, std;
};
Moments moments(const Tensor& t) {
  std::vector<double> v = t.to_vector<double>();
  double m = 0, ss = 0;
  for (double x : v) m += x;
  m /= double(v.size());
  for (double x : v) ss += (x - m) * (x - m);
  return {m, std::sqrt(ss / double(v.size()))};
}

}  // namespace

TEST_CASE("manual_seed makes the default generator reproducible") {
  manual_seed(123);
  std::vector<float> a = randn({50}).to_vector<float>();
  std::vector<double> u = rand({5}, f64).to_vector<double>();
  manual_seed(123);
  CHECK(randn({50}).to_vector<float>() == a);
  CHECK(rand({5}, f64).to_vector<double>() == u);
  manual_seed(124);
  CHECK(randn({50}).to_vector<float>() != a);
}

TEST_CASE("an explicit Generator is independent of the default one") {
  Generator g(7), h(7);
  std::vector<double> a = randn({20}, f64, &g).to_vector<double>();
  manual_seed(7);
  randn({1000});  // draws from the default generator only
  CHECK(randn({20}, f64, &h).to_vector<double>() == a);
  std::vector<double> b = randn({20}, f64, &g).to_vector<double>();
  CHECK(b != a);  // the stream moved on
  g.manual_seed(7);
  CHECK(randn({20}, f64, &g).to_vector<double>() == a);
}

TEST_CASE("DefaultGeneratorGuard makes a generator the default on its thread only, until it ends") {
  manual_seed(5);
  const std::vector<double> plain = rand({8}, f64).to_vector<double>();
  Generator g(11), expected(11);
  const std::vector<double> from_g = rand({8}, f64, &expected).to_vector<double>();
  manual_seed(5);
  std::vector<double> other_thread;
  {
    DefaultGeneratorGuard guard(g);
    CHECK(&default_generator() == &g);
    CHECK(rand({8}, f64).to_vector<double>() == from_g);
    std::thread([&] { other_thread = rand({8}, f64).to_vector<double>(); }).join();  // the process-wide one
    {
      Generator inner(3);
      DefaultGeneratorGuard nested(inner);
      CHECK(&default_generator() == &inner);
    }
    CHECK(&default_generator() == &g);  // nested guards restore the previous one
  }
  CHECK(other_thread == plain);
  CHECK(&default_generator() != &g);
  CHECK(rand({8}, f64).to_vector<double>() != plain);  // the other thread's draws moved the process-wide stream on
}

TEST_CASE("get_state/set_state resume a stream exactly, also in another generator") {
  Generator g(99);
  randn({10}, f32, &g);
  const std::string state = g.get_state();
  std::vector<double> next = rand({30}, f64, &g).to_vector<double>();
  std::vector<int64_t> ints = randint(0, 1000, {30}, &g).to_vector<int64_t>();
  g.set_state(state);
  CHECK(rand({30}, f64, &g).to_vector<double>() == next);
  CHECK(randint(0, 1000, {30}, &g).to_vector<int64_t>() == ints);
  Generator other(1);
  other.set_state(state);
  CHECK(rand({30}, f64, &other).to_vector<double>() == next);
  const std::string before = other.get_state();
  CHECK_THROWS_WITH_AS(other.set_state("garbage"), doctest::Contains("Generator::set_state: not a generator state (7 bytes)"),
                       ValueError);
  CHECK(other.get_state() == before);  // a bad state leaves the generator as it was
}

TEST_CASE("randn has mean 0 and std 1 over 100k samples, in f32 and f64") {
  Generator g(2024);
  for (DType dt : {f32, f64}) {
    CAPTURE(dt);
    Tensor x = randn({100000}, dt, &g);
    CHECK(x.dtype() == dt);
    CHECK(all_finite(x));
    Moments m = moments(x);
    CHECK(std::abs(m.mean) < 0.02);  // sigma of the mean is 0.003
    CHECK(std::abs(m.std - 1) < 0.02);
    // about 68.3% within one sigma
    double inside = sum(le(abs(x), 1.0)).item() / 100000.0;
    CHECK(std::abs(inside - 0.6827) < 0.01);
  }
  CHECK(randn({2, 0, 3}, f32, &g).shape() == Shape{2, 0, 3});
}

TEST_CASE("rand is uniform in [low, high)") {
  Generator g(5);
  Tensor x = rand({100000}, f64, &g, -2, 3);
  CHECK(amin(x).item() >= -2);
  CHECK(amax(x).item() < 3);
  Moments m = moments(x);
  CHECK(std::abs(m.mean - 0.5) < 0.03);
  CHECK(std::abs(m.std - 5 / std::sqrt(12.0)) < 0.03);
  CHECK(rand({4}, f32, &g, 1, 1).to_vector<float>() == std::vector<float>(4, 1.0f));
}

TEST_CASE("randint stays in [low, high) and hits every value") {
  Generator g(11);
  Tensor k = randint(-3, 4, {7000}, &g);
  CHECK(k.dtype() == i64);
  std::vector<int64_t> v = k.to_vector<int64_t>();
  std::vector<int> count(7, 0);
  int64_t outside = 0;
  for (int64_t x : v) {
    if (x < -3 || x >= 4) ++outside;
    else ++count[x + 3];
  }
  CHECK(outside == 0);
  for (int c : count) CHECK(std::abs(c - 1000) < 150);  // sigma about 29
  CHECK(randint(5, 6, {10}, &g).to_vector<int64_t>() == std::vector<int64_t>(10, 5));
  // the full int64 range does not overflow
  Tensor wide = randint(INT64_MIN, INT64_MAX, {1000}, &g);
  CHECK(amin(wide).item() < -1e18);
  CHECK(amax(wide).item() > 1e18);
}

TEST_CASE("bernoulli at p = 0, p = 1 and in between, in each dtype") {
  Generator g(3);
  CHECK(sum(bernoulli({1000}, 0.0, f32, &g)).item() == 0);
  CHECK(sum(bernoulli({1000}, 1.0, f32, &g)).item() == 1000);
  Tensor b = bernoulli({100000}, 0.3, f64, &g);
  CHECK(std::abs(mean(b).item() - 0.3) < 0.01);
  std::vector<double> v = b.to_vector<double>();
  CHECK(std::all_of(v.begin(), v.end(), [](double x) { return x == 0 || x == 1; }));
  CHECK(bernoulli({3}, 1.0, boolean, &g).to_vector<bool>() == std::vector<bool>{true, true, true});
  CHECK(bernoulli({3}, 0.0, i64, &g).to_vector<int64_t>() == std::vector<int64_t>{0, 0, 0});
}

// bits_below draws long runs in 8 lanes started by jumps along the stream: every bit, and the state it leaves,
// must be those of drawing one at a time. Sizes around the blocks (8 lanes × 2048 draws and up), with a tail.
TEST_CASE("bits_below gives the bits and the final state of one next() per draw") {
  for (int64_t n : {0, 1, 63, 64, 65, 16383, 16384, 16385, 3 * 16384 + 77, 300001}) {
    for (uint64_t threshold : {uint64_t(1) << 63, uint64_t(0xE666666666666800)}) {  // p = 0.5, 0.1
      CAPTURE(n);
      CAPTURE(threshold);
      Generator fast(11), slow(11);
      std::vector<uint64_t> got(size_t((n + 63) / 64) + 1, 0xDEADBEEF), want(got.size(), 0xDEADBEEF);
      fast.bits_below(threshold, got.data(), n);
      for (int64_t i = 0; i < n; ++i) want[size_t(i / 64)] &= ~(uint64_t(1) << (i % 64));  // clear, then set
      for (int64_t k = 0; k * 64 < n; ++k) want[size_t(k)] = 0;
      for (int64_t i = 0; i < n; ++i) want[size_t(i / 64)] |= uint64_t(slow.next() < threshold) << (i % 64);
      CHECK(got == want);  // the word after the last is untouched
      CHECK(fast.next() == slow.next());
      CHECK(fast.get_state() == slow.get_state());
    }
  }
}

TEST_CASE("randperm is a permutation of 0..n-1, and shuffles") {
  Generator g(8);
  Tensor p = randperm(1000, &g);
  CHECK(p.dtype() == i64);
  std::vector<int64_t> v = p.to_vector<int64_t>();
  std::vector<int64_t> sorted = v;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(1000);
  for (int64_t i = 0; i < 1000; ++i) iota[i] = i;
  CHECK(sorted == iota);
  CHECK(v != iota);
  int64_t fixed = 0;
  for (int64_t i = 0; i < 1000; ++i) fixed += v[i] == i;
  CHECK(fixed < 10);  // about 1 expected
  CHECK(randperm(0, &g).shape() == Shape{0});
  CHECK(randperm(1, &g).to_vector<int64_t>() == std::vector<int64_t>{0});
  // every ordering of 3 shows up
  std::set<std::vector<int64_t>> seen;
  for (int i = 0; i < 200; ++i) seen.insert(randperm(3, &g).to_vector<int64_t>());
  CHECK(seen.size() == 6);
}

TEST_CASE("Generator draws: uniform in [0, 1), below(n) uniform, normal finite") {
  Generator g(0);
  std::vector<int> count(3, 0);
  int bad = 0;
  for (int i = 0; i < 30000; ++i) {
    double u = g.uniform();
    uint64_t b = g.below(3);
    bad += u < 0 || u >= 1 || b >= 3 || !std::isfinite(g.normal());
    if (b < 3) ++count[b];
  }
  CHECK(bad == 0);
  for (int c : count) CHECK(std::abs(c - 10000) < 400);  // sigma about 82
}

TEST_CASE("random factories name the bad argument") {
  CHECK_THROWS_WITH_AS(randn({2}, i64), doctest::Contains("randn: expected f32 or f64, got i64"), DTypeError);
  CHECK_THROWS_WITH_AS(rand({2}, boolean), doctest::Contains("rand: expected f32 or f64, got bool"), DTypeError);
  CHECK_THROWS_WITH_AS(rand({2}, f32, nullptr, 3, 1), doctest::Contains("rand: need finite low <= high, got [3, 1)"), ValueError);
  CHECK_THROWS_WITH_AS(rand({2}, f32, nullptr, 0, INFINITY), doctest::Contains("got [0, inf)"), ValueError);
  CHECK_THROWS_WITH_AS(randint(4, 4, {2}), doctest::Contains("randint: need low < high, got [4, 4)"), ValueError);
  CHECK_THROWS_WITH_AS(bernoulli({2}, 1.5), doctest::Contains("bernoulli: probability must be in [0, 1], got 1.5"), ValueError);
  CHECK_THROWS_WITH_AS(bernoulli({2}, NAN), doctest::Contains("got nan"), ValueError);
  CHECK_THROWS_WITH_AS(randperm(-1), doctest::Contains("randperm: n must be >= 0, got -1"), ValueError);
}
