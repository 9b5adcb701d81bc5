// LR schedules against torch 1.13's sequences (optim.json "lr_schedulers", 21 lrs each), their option
// checks, and resuming a schedule from its state_dict.
#include <functional>
#include <memory>

#include "core/error.h"
#include "optim/optim.h"
#include "optim/fixture.h"

using namespace tg;
using namespace tg::optim;
using tg::test::json;

namespace {

// As the fixture: SGD over one parameter (that never gets a gradient) with lr 0.1.
struct Setup {
  Variable p{zeros({1}, f64), true};
  SGD opt{std::vector<Variable>{p}, {.lr = 0.1}};
};

// A scheduler driven like the fixture: step() or, for ReduceLROnPlateau, step(metric).
struct Driver {
  std::function<void(size_t t)> step;
  std::function<double()> lr;
  std::function<SchedulerState()> state;
  std::function<void(const SchedulerState&)> load;
};

template <class S>
Driver drive(std::shared_ptr<S> s) {
  return {[s](size_t) { s->step(); }, [s] { return s->get_last_lr()[0]; }, [s] { return s->state_dict(); },
          [s](const SchedulerState& st) { s->load_state_dict(st); }};
}

Driver make_scheduler(const std::string& name, Optimizer& opt) {
  if (name == "StepLR") return drive(std::make_shared<StepLR>(opt, StepLROptions{.step_size = 3, .gamma = 0.5}));
  if (name == "ExponentialLR") return drive(std::make_shared<ExponentialLR>(opt, ExponentialLROptions{.gamma = 0.9}));
  if (name == "LinearLR")
    return drive(std::make_shared<LinearLR>(opt, LinearLROptions{.start_factor = 0.1, .total_iters = 5}));
  if (name == "CosineAnnealingLR")
    return drive(std::make_shared<CosineAnnealingLR>(opt, CosineAnnealingLROptions{.T_max = 10, .eta_min = 0.001}));
  if (name == "SequentialLR") {
    auto warm = std::make_shared<LinearLR>(opt, LinearLROptions{.start_factor = 0.1, .total_iters = 3});
    auto cos = std::make_shared<CosineAnnealingLR>(opt, CosineAnnealingLROptions{.T_max = 12});
    return drive(std::make_shared<SequentialLR>(opt, std::vector<std::shared_ptr<LRScheduler>>{warm, cos},
                                                std::vector<int64_t>{3}));
  }
  REQUIRE(name == "ReduceLROnPlateau");
  auto s = std::make_shared<ReduceLROnPlateau>(opt, ReduceLROnPlateauOptions{.factor = 0.5, .patience = 2});
  std::vector<double> metrics = tg::test::numbers(tg::test::optim_fixture()["lr_schedulers"][5]["metrics"]);
  return {[s, metrics](size_t t) { s->step(metrics[t]); }, [s] { return s->get_last_lr()[0]; },
          [s] { return s->state_dict(); }, [s](const SchedulerState& st) { s->load_state_dict(st); }};
}

}  // namespace

TEST_CASE("every LR schedule follows PyTorch's lr sequence to 1e-12") {
  for (const json& c : tg::test::optim_fixture().at("lr_schedulers")) {
    const std::string name = c.at("name");
    CAPTURE(name);
    const std::vector<double> lrs = tg::test::numbers(c.at("lrs"));
    Setup s;
    Driver d = make_scheduler(name, s.opt);
    double worst = std::fabs(s.opt.lr() - lrs[0]);
    CHECK(d.lr() == s.opt.lr());
    for (size_t t = 0; t < 20; ++t) {
      s.opt.step();
      d.step(t);
      CAPTURE(t);
      CHECK(std::fabs(s.opt.lr() - lrs[t + 1]) <= 1e-12);
      CHECK(d.lr() == s.opt.lr());
      worst = std::max(worst, std::fabs(s.opt.lr() - lrs[t + 1]));
    }
    if (std::getenv("TG_OPTIM_REPORT")) fmt::print("{:28} lr {:.3g}\n", name, worst);
  }
}

TEST_CASE("CosineAnnealingLR stays within 1e-12 of the closed form") {
  const json& c = tg::test::optim_fixture()["lr_schedulers"][3];
  REQUIRE(c["name"] == "CosineAnnealingLR");
  const std::vector<double> closed = tg::test::numbers(c["lrs_closed_form"]);
  Setup s;
  CosineAnnealingLR sched(s.opt, {.T_max = 10, .eta_min = 0.001});
  for (size_t k = 0; k <= 20; ++k) {
    CAPTURE(k);
    CHECK(std::fabs(s.opt.lr() - closed[k]) <= 1e-12);
    sched.step();
  }
}

TEST_CASE("a schedule resumed from its state_dict and the optimizer's continues exactly") {
  for (const json& c : tg::test::optim_fixture().at("lr_schedulers")) {
    const std::string name = c.at("name");
    CAPTURE(name);
    Setup whole, first;
    Driver a = make_scheduler(name, whole.opt), b = make_scheduler(name, first.opt);
    for (size_t t = 0; t < 20; ++t) a.step(t);
    for (size_t t = 0; t < 7; ++t) b.step(t);
    const OptimizerState opt_state = first.opt.state_dict();
    const SchedulerState sched_state = b.state();

    Setup resumed;  // construct optimizer and scheduler, then load both
    Driver r = make_scheduler(name, resumed.opt);
    resumed.opt.load_state_dict(opt_state);
    r.load(sched_state);
    for (size_t t = 7; t < 20; ++t) r.step(t);
    CHECK(resumed.opt.lr() == whole.opt.lr());
    CHECK(r.lr() == a.lr());
  }
}

TEST_CASE("SequentialLR keeps its schedulers' states under scheduler.<k>.") {
  Setup s;
  auto warm = std::make_shared<LinearLR>(s.opt, LinearLROptions{.start_factor = 0.1, .total_iters = 3});
  auto cos = std::make_shared<CosineAnnealingLR>(s.opt, CosineAnnealingLROptions{.T_max = 12});
  SequentialLR seq(s.opt, {warm, cos}, {3});
  for (int t = 0; t < 5; ++t) seq.step();
  const SchedulerState st = seq.state_dict();
  CHECK(st.at("last_epoch") == 5);
  CHECK(st.at("scheduler.0.last_epoch") == 2);  // the warmup stopped at the milestone
  CHECK(st.at("scheduler.1.last_epoch") == 2);  // the cosine restarted at epoch 3
  SchedulerState bad = st;
  bad["scheduler.2.last_epoch"] = 1;
  CHECK_THROWS_WITH_AS(seq.load_state_dict(bad), doctest::Contains("unexpected key 'scheduler.2.last_epoch'"),
                       ValueError);
}

TEST_CASE("a scheduler applies to every param group from its own base lr") {
  Variable w(zeros({2}, f64), true), b(zeros({2}, f64), true);
  SGD opt(std::vector<ParamGroup>{{.params = {w}}, {.params = {b}, .lr = 0.01}}, {.lr = 0.1});
  StepLR sched(opt, {.step_size = 1, .gamma = 0.5});
  sched.step();
  CHECK(opt.lr(0) == 0.05);
  CHECK(opt.lr(1) == 0.005);
  CHECK(sched.get_last_lr() == std::vector<double>{0.05, 0.005});
  CHECK(*opt.param_groups()[1].initial_lr == 0.01);
}

TEST_CASE("ReduceLROnPlateau in max mode with cooldown and min_lr") {
  Setup s;
  using O = ReduceLROnPlateauOptions;
  ReduceLROnPlateau sched(s.opt, {.mode = O::Mode::max, .factor = 0.1, .patience = 0, .threshold = 0.01,
                                  .threshold_mode = O::ThresholdMode::abs, .cooldown = 1, .min_lr = 0.002});
  sched.step(0.5);    // best 0.5
  CHECK(s.opt.lr() == 0.1);
  sched.step(0.505);  // not better than 0.5 + 0.01: reduce to 0.01, cooldown 1
  CHECK(s.opt.lr() == doctest::Approx(0.01).epsilon(1e-15));
  sched.step(0.4);    // in cooldown: not counted
  CHECK(s.opt.lr() == doctest::Approx(0.01).epsilon(1e-15));
  sched.step(0.4);    // bad: reduce, but not below min_lr
  CHECK(s.opt.lr() == 0.002);
  sched.step(0.3);
  sched.step(0.3);
  CHECK(s.opt.lr() == 0.002);
}

// best·(1 - threshold) was inf·0 = NaN before the first metric, so no metric was ever better (as torch 1.13).
TEST_CASE("ReduceLROnPlateau in rel mode with threshold 1: the first metric beats the initial inf") {
  Setup s;
  ReduceLROnPlateau sched(s.opt, {.factor = 0.5, .patience = 0, .threshold = 1.0});
  sched.step(0.5);  // best 0.5, not a bad epoch
  CHECK(s.opt.lr() == 0.1);
  sched.step(0.4);  // rel with threshold 1 needs a < 0: bad, reduce
  CHECK(s.opt.lr() == 0.05);
}

TEST_CASE("invalid scheduler options throw ValueError naming the value") {
  Setup s;
  CHECK_THROWS_WITH_AS(StepLR(s.opt, {.step_size = 0}), doctest::Contains("StepLR: invalid step_size: 0"), ValueError);
  CHECK_THROWS_WITH_AS(ExponentialLR(s.opt, {.gamma = -1}), doctest::Contains("ExponentialLR: invalid gamma: -1"),
                       ValueError);
  CHECK_THROWS_WITH_AS(LinearLR(s.opt, {.start_factor = 0}), doctest::Contains("invalid start_factor: 0"), ValueError);
  CHECK_THROWS_WITH_AS(LinearLR(s.opt, {.end_factor = 1.5}), doctest::Contains("invalid end_factor: 1.5"), ValueError);
  CHECK_THROWS_WITH_AS(CosineAnnealingLR(s.opt, {.T_max = 0}), doctest::Contains("invalid T_max: 0"), ValueError);
  CHECK_THROWS_WITH_AS(ReduceLROnPlateau(s.opt, {.factor = 1.0}), doctest::Contains("invalid factor: 1"), ValueError);
  CHECK_THROWS_WITH_AS(ReduceLROnPlateau(s.opt, {.patience = -1}), doctest::Contains("invalid patience: -1"),
                       ValueError);
  auto warm = std::make_shared<LinearLR>(s.opt);
  CHECK_THROWS_WITH_AS(SequentialLR(s.opt, {warm}, {3}), doctest::Contains("1 schedulers vs 1 milestones"),
                       ValueError);
  Setup other;
  auto foreign = std::make_shared<LinearLR>(other.opt);
  CHECK_THROWS_WITH_AS(SequentialLR(s.opt, {warm, foreign}, {3}), doctest::Contains("belongs to another optimizer"),
                       ValueError);
  auto cos = std::make_shared<CosineAnnealingLR>(s.opt, CosineAnnealingLROptions{.T_max = 5});
  CHECK_THROWS_WITH_AS(SequentialLR(s.opt, {warm, cos, cos}, {3, 3}),
                       doctest::Contains("milestones must be positive and increasing: milestone 1 is 3"), ValueError);
}
