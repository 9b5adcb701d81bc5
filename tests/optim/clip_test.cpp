// Gradient clipping against torch 1.13 (optim.json "clip_grad_norm", "clip_grad_value"), including the
// f32 gradients of 1e20 where we deliberately return the true norm instead of torch's overflowed inf.
#include <cmath>

#include "core/error.h"
#include "core/ops.h"
#include "optim/clip.h"
#include "optim/fixture.h"

using namespace tg;
using namespace tg::optim;
using tg::test::json;

namespace {

const json& clip_case(const std::string& name) {
  for (const json& c : tg::test::optim_fixture().at("clip_grad_norm"))
    if (c.at("name") == name) return c;
  throw std::runtime_error("no clip case " + name);
}

// Parameters (zeros) whose gradients are the case's grads, in the case's dtype.
std::vector<Variable> with_grads(const json& c) {
  const DType dtype = c.at("dtype") == "float32" ? f32 : f64;
  std::vector<Variable> params;
  for (size_t i = 0; i < c.at("shapes").size(); ++i) {
    Tensor g = tg::test::flat_tensor(c["grads"][i], c["shapes"][i], dtype);
    params.emplace_back(zeros_like(g), true);
    params.back().set_grad(g);
  }
  return params;
}

}  // namespace

TEST_CASE("clip_grad_norm matches torch's total and clipped gradients") {
  for (const char* name : {"l2_clipped", "l2_not_clipped", "inf_norm_clipped"}) {
    CAPTURE(name);
    const json& c = clip_case(name);
    std::vector<Variable> params = with_grads(c);
    const double total = clip_grad_norm(params, c.at("max_norm"), tg::test::number(c.at("norm_type")));
    const double expected = tg::test::number(c.at("total_norm"));
    if (std::isnan(expected)) CHECK(std::isnan(total));
    else if (std::isinf(expected)) CHECK(total == expected);
    else CHECK(std::fabs(total - tg::test::number(c.at("exact_total_norm_f64"))) <= 1e-14 * expected);
    double worst = 0;
    for (size_t i = 0; i < params.size(); ++i) {
      const double err = tg::test::max_abs_diff(params[i].grad(), tg::test::numbers(c["clipped_grads"][i]));
      CAPTURE(i);
      CHECK(err <= 1e-15);
      worst = std::max(worst, err);
    }
    if (std::getenv("TG_OPTIM_REPORT"))
      fmt::print("{:28} total {:.3g}  grads {:.3g}\n", name, std::fabs(total - expected), worst);
  }
}

TEST_CASE("clip_grad_norm of f32 gradients of 1e20 is the true norm, not torch 1.13's overflowed inf") {
  const json& c = clip_case("f32_huge_1e20");
  REQUIRE(c.at("total_norm") == "inf");  // what torch returns: it squares in float32
  std::vector<Variable> params = with_grads(c);
  const double total = clip_grad_norm(params, 1.0);
  const double exact = c.at("exact_total_norm_f64");
  CHECK(std::fabs(total - exact) <= 1e-15 * exact);
  // torch zeroes every gradient here; we scale to norm 1, the same direction as the f64 l2_clipped case
  const json& same_direction = clip_case("l2_clipped");
  for (size_t i = 0; i < params.size(); ++i) {
    CHECK(params[i].grad().dtype() == f32);
    CHECK(tg::test::max_abs_diff(params[i].grad(), tg::test::numbers(same_direction["clipped_grads"][i])) <= 1e-7);
  }
}

TEST_CASE("clip_grad_norm never scales by a non-finite total: it throws, or leaves the gradients alone") {
  // torch 1.13 (the fixture's clipped_grads) writes NaN into every gradient here, or zeros for an inf total
  for (const char* name : {"grad_with_inf", "grad_with_nan", "grad_with_inf_and_nan"}) {
    CAPTURE(name);
    const json& c = clip_case(name);
    std::vector<Variable> params = with_grads(c);
    std::vector<Tensor> before;
    for (const Variable& p : params) before.push_back(p.grad().clone());
    const std::string total = c.at("total_norm");  // "nan" or "inf", torch's total too
    const std::string message = "clip_grad_norm: the total norm of order 2 of the gradients is non-finite: " + total;
    CHECK_THROWS_WITH_AS(clip_grad_norm(params, c.at("max_norm")), doctest::Contains(message.c_str()), ValueError);
    const double kept = clip_grad_norm(params, c.at("max_norm"), 2.0, /*error_if_nonfinite=*/false);
    CHECK(fmt::format("{}", kept) == total);
    for (size_t i = 0; i < params.size(); ++i) CHECK(tg::test::bit_equal(params[i].grad(), before[i]));
  }
}

TEST_CASE("clip_grad_norm skips parameters without a gradient and p-norms scale too") {
  Variable a(zeros({2}, f64), true), b(zeros({3}, f64), true);
  a.set_grad(tensor({3e200, -4e200}, f64));  // squares overflow even in f64; scaling avoids it
  CHECK(clip_grad_norm({a, b}, 1e300) == doctest::Approx(5e200).epsilon(1e-15));
  CHECK(clip_grad_norm({a, b}, 1e300, 1.0) == doctest::Approx(7e200).epsilon(1e-15));
  CHECK_FALSE(b.grad().defined());
  CHECK(clip_grad_norm({b}, 1.0) == 0.0);
  CHECK_THROWS_WITH_AS(clip_grad_norm({a}, 1.0, 0.0), doctest::Contains("invalid norm_type: 0"), ValueError);
  CHECK_THROWS_WITH_AS(clip_grad_norm({a}, -1.0), doctest::Contains("invalid max_norm: -1"), ValueError);
}

TEST_CASE("clip_grad_value clamps every element as torch") {
  const json& c = tg::test::optim_fixture().at("clip_grad_value").at(0);
  std::vector<Variable> params = with_grads(c);
  params.emplace_back(zeros({2}, f64), true);  // no gradient: skipped
  clip_grad_value(params, c.at("clip_value"));
  for (size_t i = 0; i < c.at("shapes").size(); ++i)
    CHECK(tg::test::max_abs_diff(params[i].grad(), tg::test::numbers(c["clipped_grads"][i])) == 0);
  CHECK_FALSE(params.back().grad().defined());
  CHECK_THROWS_WITH_AS(clip_grad_value(params, -0.5), doctest::Contains("invalid clip_value: -0.5"), ValueError);
}
