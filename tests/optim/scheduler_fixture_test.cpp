// LambdaLR, MultiStepLR, OneCycleLR and CosineAnnealingWarmRestarts against torch 1.13's lr and momentum
// sequences (schedulers.json, 31 values each: after construction and after each of 30 steps), resuming from
// their state_dicts, and their option checks.
#include <fstream>
#include <memory>

#include "core/error.h"
#include "optim/fixture.h"
#include "optim/optim.h"

using namespace tg;
using namespace tg::optim;
using tg::test::json;

namespace {

const json& fixture() {
  static const json j = [] {
    std::ifstream in(std::string(TG_FIXTURES_DIR) + "/schedulers.json");
    REQUIRE(in);
    return json::parse(in);
  }();
  return j;
}

// The optimizer of a case: SGD(lr 0.1, momentum 0.9) or Adam(lr 0.1) over one parameter without gradient.
struct Setup {
  explicit Setup(const std::string& optimizer) {
    if (optimizer.find("Adam") != std::string::npos)
      opt = std::make_unique<Adam>(std::vector<Variable>{p}, AdamOptions{.lr = 0.1});
    else
      opt = std::make_unique<SGD>(std::vector<Variable>{p}, SGDOptions{.lr = 0.1, .momentum = 0.9});
  }
  double momentum() const { return opt->option("momentum") ? *opt->option("momentum") : *opt->option("betas.0"); }
  Variable p{zeros({1}, f64), true};
  std::unique_ptr<Optimizer> opt;
};

// The scheduler of each fixture case, built as its "call".
std::unique_ptr<LRScheduler> make(const std::string& name, Optimizer& opt) {
  using A = OneCycleLROptions::Anneal;
  if (name == "LambdaLR_warmup")
    return std::make_unique<LambdaLR>(opt, std::vector<LambdaLR::Lambda>{[](int64_t e) {
                                        return std::min(1.0, double(e + 1) / 5) *
                                               std::pow(0.9, double(std::max<int64_t>(0, e - 4)));
                                      }});
  if (name == "MultiStepLR") return std::make_unique<MultiStepLR>(opt, MultiStepLROptions{{5, 12, 12, 20}, 0.5});
  if (name == "OneCycleLR_sgd")
    return std::make_unique<OneCycleLR>(opt, OneCycleLROptions{.max_lr = {1.0}, .total_steps = 30});
  if (name == "OneCycleLR_adam")
    return std::make_unique<OneCycleLR>(opt, OneCycleLROptions{.max_lr = {0.01}, .total_steps = 30});
  if (name == "OneCycleLR_linear_three_phase")
    return std::make_unique<OneCycleLR>(opt, OneCycleLROptions{.max_lr = {0.5},
                                                               .epochs = 3,
                                                               .steps_per_epoch = 10,
                                                               .pct_start = 0.25,
                                                               .anneal_strategy = A::linear,
                                                               .base_momentum = 0.8,
                                                               .max_momentum = 0.9,
                                                               .div_factor = 10,
                                                               .final_div_factor = 4,
                                                               .three_phase = true});
  if (name == "OneCycleLR_no_momentum")
    return std::make_unique<OneCycleLR>(opt,
                                        OneCycleLROptions{.max_lr = {1.0}, .total_steps = 30, .cycle_momentum = false});
  if (name == "CosineAnnealingWarmRestarts")
    return std::make_unique<CosineAnnealingWarmRestarts>(
        opt, CosineAnnealingWarmRestartsOptions{.T_0 = 4, .eta_min = 0.001});
  REQUIRE(name == "CosineAnnealingWarmRestarts_T_mult");
  return std::make_unique<CosineAnnealingWarmRestarts>(
      opt, CosineAnnealingWarmRestartsOptions{.T_0 = 3, .T_mult = 2, .eta_min = 0.01});
}

}  // namespace

TEST_CASE("LambdaLR, MultiStepLR, OneCycleLR, warm restarts follow PyTorch's lr and momentum to 1e-12") {
  REQUIRE(fixture().at("cases").size() == 8);
  for (const json& c : fixture().at("cases")) {
    const std::string name = c.at("name");
    CAPTURE(name);
    const std::vector<double> lrs = tg::test::numbers(c.at("lrs")), momenta = tg::test::numbers(c.at("momenta"));
    Setup s(c.at("optimizer"));
    auto sched = make(name, *s.opt);
    for (size_t t = 0; t < lrs.size(); ++t) {
      CAPTURE(t);
      if (t > 0) sched->step();
      CHECK(std::fabs(s.opt->lr() - lrs[t]) <= 1e-12);
      CHECK(std::fabs(s.momentum() - momenta[t]) <= 1e-12);
      CHECK(sched->get_last_lr()[0] == s.opt->lr());
    }
  }
}

TEST_CASE("the new schedules resume exactly from their state_dict and the optimizer's") {
  for (const json& c : fixture().at("cases")) {
    const std::string name = c.at("name");
    CAPTURE(name);
    Setup whole(c.at("optimizer")), first(c.at("optimizer")), resumed(c.at("optimizer"));
    auto a = make(name, *whole.opt), b = make(name, *first.opt);
    for (int t = 0; t < 30; ++t) a->step();
    for (int t = 0; t < 11; ++t) b->step();
    auto r = make(name, *resumed.opt);  // construct both, then load both
    resumed.opt->load_state_dict(first.opt->state_dict());
    r->load_state_dict(b->state_dict());
    for (int t = 11; t < 30; ++t) r->step();
    CHECK(resumed.opt->lr() == whole.opt->lr());
    CHECK(resumed.momentum() == whole.momentum());
    CHECK(r->state_dict() == a->state_dict());
  }
}

TEST_CASE("OneCycleLR refuses a step past total_steps, as torch") {
  Setup s("SGD");
  OneCycleLR sched(*s.opt, {.max_lr = {1.0}, .total_steps = 4});
  for (int t = 0; t < 4; ++t) sched.step();
  CHECK_THROWS_WITH_AS(sched.step(), doctest::Contains("tried to step 6 times; the cycle has total_steps 4"),
                       ValueError);
}

TEST_CASE("OneCycleLR clamps torch's negative extrapolation at the last step to 0") {
  Setup s("SGD");  // linear, 1 phase down to max/25/1e4: one step past the end goes below 0
  OneCycleLR sched(*s.opt, {.max_lr = {1.0}, .total_steps = 10, .anneal_strategy = OneCycleLROptions::Anneal::linear});
  for (int t = 0; t < 10; ++t) sched.step();
  CHECK(s.opt->lr() == 0.0);
}

TEST_CASE("CosineAnnealingWarmRestarts.step(epoch) takes fractional epochs as torch") {
  Setup s("SGD");
  CosineAnnealingWarmRestarts sched(*s.opt, {.T_0 = 3, .T_mult = 2, .eta_min = 0.01});
  sched.step(10.5);  // periods [0, 3), [3, 9), [9, 21): T_cur 1.5 of T_i 12
  const double expected = 0.01 + (0.1 - 0.01) * (1 + std::cos(std::numbers::pi * 1.5 / 12)) / 2;
  CHECK(s.opt->lr() == doctest::Approx(expected).epsilon(1e-15));
  CHECK(sched.state_dict().at("T_i") == 12);
  CHECK(sched.last_epoch() == 10);
  CHECK_THROWS_WITH_AS(sched.step(-1.0), doctest::Contains("invalid epoch: -1"), ValueError);
}

TEST_CASE("LambdaLR takes one function per group") {
  Variable w(zeros({2}, f64), true), b(zeros({2}, f64), true);
  SGD opt(std::vector<ParamGroup>{{.params = {w}}, {.params = {b}, .lr = 0.01}}, {.lr = 0.1});
  LambdaLR sched(opt, {[](int64_t e) { return 1.0 / double(e + 1); }, [](int64_t) { return 2.0; }});
  sched.step();
  CHECK(opt.lr(0) == 0.05);
  CHECK(opt.lr(1) == 0.02);
  CHECK_THROWS_WITH_AS(LambdaLR(opt, {{}, {}, {}}), doctest::Contains("expected 1 or 2 lr_lambdas"), ValueError);
}

TEST_CASE("invalid options of the new schedules throw ValueError naming the value") {
  Setup s("SGD");
  CHECK_THROWS_WITH_AS(MultiStepLR(*s.opt, {{3, -1}}), doctest::Contains("invalid milestone: -1"), ValueError);
  CHECK_THROWS_WITH_AS(OneCycleLR(*s.opt, {.max_lr = {1.0}}), doctest::Contains("expected total_steps > 0"),
                       ValueError);
  CHECK_THROWS_WITH_AS(OneCycleLR(*s.opt, {.max_lr = {1.0}, .total_steps = 5, .pct_start = 1.5}),
                       doctest::Contains("invalid pct_start: 1.5"), ValueError);
  CHECK_THROWS_WITH_AS(OneCycleLR(*s.opt, {.max_lr = {1.0, 2.0}, .total_steps = 5}),
                       doctest::Contains("expected 1 or 1 max_lr values"), ValueError);
  CHECK_THROWS_WITH_AS(CosineAnnealingWarmRestarts(*s.opt, {.T_0 = 0}), doctest::Contains("invalid T_0: 0"),
                       ValueError);
  CHECK_THROWS_WITH_AS(CosineAnnealingWarmRestarts(*s.opt, {.T_0 = 2, .T_mult = 0}),
                       doctest::Contains("invalid T_mult: 0"), ValueError);
}
