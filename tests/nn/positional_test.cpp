// Positional encodings: the sinusoid table against Vaswani et al.'s formula, what forward adds, the
// learned table's parameter, initialisation and gradient, and the errors.
#include <doctest/doctest.h>

#include <cmath>

#include "nn/fixture.h"
#include "nn/positional.h"

using namespace tg;
using namespace tg::nn;

TEST_CASE("SinusoidalPositionalEncoding holds sin and cos of pos / 10000^(2i/d) in the buffer pe") {
  SinusoidalPositionalEncoding pe({.d_model = 6, .max_len = 10, .dtype = f64});
  const Tensor t = pe.pe();
  REQUIRE(t.shape() == Shape{10, 6});
  CHECK(test::max_abs_diff(t.select(0, 0), tensor({0, 1, 0, 1, 0, 1}, f64)) == 0);
  for (int64_t pos : {1, 7}) {
    for (int64_t i = 0; i < 3; ++i) {
      const double angle = double(pos) / std::pow(10000.0, 2.0 * double(i) / 6.0);
      CHECK(t.select(0, pos).select(0, 2 * i).item() == doctest::Approx(std::sin(angle)).epsilon(1e-15));
      CHECK(t.select(0, pos).select(0, 2 * i + 1).item() == doctest::Approx(std::cos(angle)).epsilon(1e-15));
    }
  }
  CHECK(pe.named_parameters().empty());  // saved, not trained
  CHECK(pe.state_dict().count("pe") == 1);
}

TEST_CASE("SinusoidalPositionalEncoding adds the first S rows to every sequence, gradient 1 to x") {
  SinusoidalPositionalEncoding pe({.d_model = 4, .max_len = 8});
  Variable x(randn({2, 3, 4}), true);
  Variable y = pe(x);
  CHECK(test::max_abs_diff(y.value(), x.value() + pe.pe().slice(0, 0, 3)) == 0);
  sum(y).backward();
  CHECK(test::max_abs_diff(x.grad(), ones({2, 3, 4})) == 0);
}

TEST_CASE("SinusoidalPositionalEncoding with an odd d_model ends on a sine") {
  SinusoidalPositionalEncoding pe({.d_model = 5, .max_len = 4, .dtype = f64});
  CHECK(pe.pe().select(0, 2).select(0, 4).item() == doctest::Approx(std::sin(2.0 / std::pow(10000.0, 0.8))));
}

TEST_CASE("LearnedPositionalEncoding is a trained table 'weight' (max_len, d_model), N(0, std²) at start") {
  manual_seed(0);
  LearnedPositionalEncoding pe({.d_model = 64, .max_len = 128});
  const auto params = pe.named_parameters();
  REQUIRE(params.size() == 1);
  CHECK(params[0].first == "weight");
  CHECK(params[0].second.shape() == Shape{128, 64});
  const Tensor w = pe.weight().value();
  CHECK(std::abs(mean(w).item()) < 0.05);
  CHECK(std::sqrt(var(w).item()) == doctest::Approx(1.0).epsilon(0.05));
  LearnedPositionalEncoding small({.d_model = 64, .max_len = 128, .std = 0.02});
  CHECK(std::sqrt(var(small.weight().value()).item()) == doctest::Approx(0.02).epsilon(0.05));
}

TEST_CASE("LearnedPositionalEncoding adds weight[:S]; only those rows get a gradient, summed over the batch") {
  LearnedPositionalEncoding pe({.d_model = 4, .max_len = 6});
  Variable x(randn({2, 3, 4}));
  Variable y = pe(x);
  CHECK(test::max_abs_diff(y.value(), x.value() + pe.weight().value().slice(0, 0, 3)) == 0);
  sum(y).backward();
  CHECK(test::max_abs_diff(pe.weight().grad().slice(0, 0, 3), full({3, 4}, 2.0)) == 0);
  CHECK(test::max_abs_diff(pe.weight().grad().slice(0, 3, 6), zeros({3, 4})) == 0);
}

TEST_CASE("positional encodings refuse a sequence longer than max_len and a wrong width") {
  SinusoidalPositionalEncoding sinusoidal({.d_model = 4, .max_len = 5});
  LearnedPositionalEncoding learned({.d_model = 4, .max_len = 5});
  CHECK_THROWS_WITH_AS(sinusoidal(Variable(randn({2, 6, 4}))),
                       doctest::Contains("sequence length 6 exceeds max_len 5"), ValueError);
  CHECK_THROWS_WITH_AS(learned(Variable(randn({2, 6, 4}))), doctest::Contains("sequence length 6 exceeds max_len 5"),
                       ValueError);
  CHECK_THROWS_WITH_AS(sinusoidal(Variable(randn({2, 3, 5}))), doctest::Contains("x must be (B, S, 4), got (2, 3, 5)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(LearnedPositionalEncoding({.d_model = 0}), doctest::Contains("must be positive, got 0 and 512"),
                       ValueError);
}

TEST_CASE("positional encodings from a start position add rows start.., as the full sequence does there") {
  SinusoidalPositionalEncoding sinusoidal({.d_model = 4, .max_len = 8});
  LearnedPositionalEncoding learned({.d_model = 4, .max_len = 8});
  const Variable x(randn({2, 6, 4}));
  const Variable tail = x.slice(1, 4, 6);  // positions 4 and 5 of x, as cached decoding feeds them
  CHECK(test::max_abs_diff(sinusoidal.forward(tail, 4).value(), sinusoidal(x).value().slice(1, 4, 6)) == 0);
  CHECK(test::max_abs_diff(learned.forward(tail, 4).value(), learned(x).value().slice(1, 4, 6)) == 0);
  sum(learned.forward(tail, 4)).backward();
  CHECK(test::max_abs_diff(learned.weight().grad().slice(0, 4, 6), full({2, 4}, 2.0)) == 0);
  CHECK(test::max_abs_diff(learned.weight().grad().slice(0, 0, 4), zeros({4, 4})) == 0);
  CHECK_THROWS_WITH_AS(sinusoidal.forward(tail, 7), doctest::Contains("sequence length 2 exceeds max_len 8 from start "
                                                                      "position 7"), ValueError);
  CHECK_THROWS_WITH_AS(learned.forward(tail, -1), doctest::Contains("start position must be >= 0, got -1"), ValueError);
}
