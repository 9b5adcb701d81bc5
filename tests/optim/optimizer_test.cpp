// Optimizer behaviour beyond the fixture trajectories: validation messages, parameters without a gradient,
// param groups, and resuming from a saved state bit-exactly.
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>

#include <unistd.h>

#include "core/error.h"
#include "core/ops.h"
#include "autograd/functions.h"
#include "optim/optim.h"
#include "optim/fixture.h"

using namespace tg;
using namespace tg::optim;
using tg::test::bit_equal;
using tg::test::json;

namespace {

// The fixture's parameters w (3, 4) and b (5,), fresh leaves in f64.
std::vector<Variable> fixture_params() {
  const json& fx = tg::test::optim_fixture();
  std::vector<Variable> params;
  for (size_t i = 0; i < 2; ++i)
    params.emplace_back(tg::test::flat_tensor(fx["params"]["initial"][i], fx["params"]["shapes"][i]), true);
  return params;
}

void set_fixture_grads(std::vector<Variable>& params, size_t t) {
  const json& fx = tg::test::optim_fixture();
  for (size_t i = 0; i < params.size(); ++i)
    params[i].set_grad(tg::test::flat_tensor(fx["grads"][t % 20][i], fx["params"]["shapes"][i]));
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / fmt::format("tg_optim_{}_{}", ::getpid(), name)).string();
}

}  // namespace

// ---- validation ----

TEST_CASE("invalid hyper-parameters throw ValueError naming the value") {
  auto params = fixture_params();
  CHECK_THROWS_WITH_AS(Adam(params, {.lr = -0.1}), doctest::Contains("Adam: invalid lr: -0.1"), ValueError);
  CHECK_THROWS_WITH_AS(Adam(params, {.lr = INFINITY}), doctest::Contains("Adam: invalid lr: inf"), ValueError);
  CHECK_THROWS_WITH_AS(Adam(params, {.betas = {1.0, 0.999}}),
                       doctest::Contains("Adam: invalid betas[0]: 1 (expected a finite value in [0, 1))"), ValueError);
  CHECK_THROWS_WITH_AS(Adam(params, {.betas = {0.9, -0.5}}), doctest::Contains("invalid betas[1]: -0.5"), ValueError);
  CHECK_THROWS_WITH_AS(Adam(params, {.eps = -1e-8}), doctest::Contains("Adam: invalid eps: -1e-08"), ValueError);
  // 0 would make a parameter whose gradient has been 0 so far 0/0 = NaN (torch 1.13 does that)
  CHECK_THROWS_WITH_AS(AdamW(params, {.eps = 0}), doctest::Contains("AdamW: invalid eps: 0 (expected > 0"), ValueError);
  CHECK_THROWS_WITH_AS(Adam(params, {.weight_decay = NAN}), doctest::Contains("invalid weight_decay: nan"), ValueError);
  CHECK_THROWS_WITH_AS(AdamW(params, {.weight_decay = -0.01}), doctest::Contains("AdamW: invalid weight_decay: -0.01"),
                       ValueError);
  CHECK_THROWS_WITH_AS(SGD(params, {.lr = 0.1, .momentum = -0.9}), doctest::Contains("SGD: invalid momentum: -0.9"),
                       ValueError);
  CHECK_THROWS_WITH_AS(SGD(params, {.lr = 0.1, .dampening = NAN}), doctest::Contains("invalid dampening: nan"),
                       ValueError);
}

TEST_CASE("nesterov without momentum, or with dampening, is a ValueError") {
  auto params = fixture_params();
  CHECK_THROWS_WITH_AS(SGD(params, {.lr = 0.1, .nesterov = true}),
                       doctest::Contains("nesterov needs momentum > 0 and dampening 0, got momentum 0"), ValueError);
  CHECK_THROWS_WITH_AS(SGD(params, {.lr = 0.1, .momentum = 0.9, .dampening = 0.1, .nesterov = true}),
                       doctest::Contains("dampening 0.1"), ValueError);
}

TEST_CASE("a group's own lr is validated and names the group") {
  auto p = fixture_params();
  CHECK_THROWS_WITH_AS(SGD(std::vector<ParamGroup>{{.params = {p[0]}}, {.params = {p[1]}, .lr = -1.0}}),
                       doctest::Contains("SGD: invalid param group 1: lr: -1"), ValueError);
  SGD opt(p, {.lr = 0.1});
  CHECK_THROWS_WITH_AS(opt.set_lr(0, NAN), doctest::Contains("SGD: invalid lr: nan"), ValueError);
  CHECK_THROWS_AS(opt.set_lr(1, 0.1), IndexError);
}

TEST_CASE("empty, duplicate, non-leaf and integer parameters are refused") {
  auto p = fixture_params();
  CHECK_THROWS_WITH_AS(Adam(std::vector<Variable>{}), doctest::Contains("Adam: got an empty parameter list"),
                       ValueError);
  CHECK_THROWS_WITH_AS(Adam({p[0], p[1], p[0]}), doctest::Contains("parameter 2 appears twice (also parameter 0)"),
                       ValueError);
  CHECK_THROWS_WITH_AS(Adam({p[0] * 2.0}), doctest::Contains("parameter 0 is not a leaf"), ValueError);
  CHECK_THROWS_WITH_AS(SGD({Variable(index_tensor({1, 2}, {2}))}), doctest::Contains("has dtype i64"), DTypeError);
}

// ---- parameters without a gradient ----

TEST_CASE("parameters without a gradient are skipped: no update, no state, no step count") {
  auto p = fixture_params();
  const Tensor b0 = p[1].value().clone();
  Adam opt(p, {.lr = 0.01});
  p[0].set_grad(ones({3, 4}, f64));
  opt.step();
  CHECK(bit_equal(p[1].value(), b0));
  OptimizerState s = opt.state_dict();
  CHECK(s.values.at("0.step") == "1");
  CHECK(s.values.at("1.step") == "0");
  CHECK(s.tensors.count("0.exp_avg") == 1);
  CHECK(s.tensors.count("1.exp_avg") == 0);

  // b's first real step is Adam's first step (t = 1), as for a fresh optimizer
  auto q = fixture_params();
  Adam fresh({q[1]}, {.lr = 0.01});
  p[1].set_grad(full({5}, 0.5, f64));
  q[1].set_grad(full({5}, 0.5, f64));
  p[0].zero_grad();
  opt.step();
  fresh.step();
  CHECK(bit_equal(p[1].value(), q[1].value()));
  CHECK(opt.state_dict().values.at("0.step") == "1");
}

TEST_CASE("zero_grad drops every parameter's gradient") {
  auto p = fixture_params();
  SGD opt(p, {.lr = 0.1});
  set_fixture_grads(p, 0);
  opt.zero_grad();
  CHECK_FALSE(p[0].grad().defined());
  CHECK_FALSE(p[1].grad().defined());
}

// ---- param groups ----

TEST_CASE("param groups use their own lr and weight decay") {
  auto p = fixture_params();
  const Tensor w0 = p[0].value().clone(), b0 = p[1].value().clone();
  SGD opt(std::vector<ParamGroup>{{.params = {p[0]}}, {.params = {p[1]}, .lr = 0.01, .weight_decay = 0.5}},
          {.lr = 0.1});
  CHECK(opt.lr(0) == 0.1);
  CHECK(opt.lr(1) == 0.01);
  CHECK(*opt.param_groups()[0].weight_decay == 0.0);
  set_fixture_grads(p, 0);
  const Tensor gw = p[0].grad(), gb = p[1].grad();
  opt.step();
  CHECK(tg::test::max_abs_diff(p[0].value(), (w0 - 0.1 * gw).to_vector<double>()) == 0);
  CHECK(tg::test::max_abs_diff(p[1].value(), (b0 - 0.01 * (gb + 0.5 * b0)).to_vector<double>()) <= 1e-16);
}

TEST_CASE("Adam over two groups equals two Adams over one group each") {
  auto p = fixture_params(), q = fixture_params();
  Adam grouped(std::vector<ParamGroup>{{.params = {p[0]}, .lr = 0.1}, {.params = {p[1]}}},
               {.lr = 0.01, .weight_decay = 0.1, .amsgrad = true});
  Adam first({q[0]}, {.lr = 0.1, .weight_decay = 0.1, .amsgrad = true});
  Adam second({q[1]}, {.lr = 0.01, .weight_decay = 0.1, .amsgrad = true});
  for (size_t t = 0; t < 5; ++t) {
    set_fixture_grads(p, t);
    set_fixture_grads(q, t);
    grouped.step();
    first.step();
    second.step();
  }
  CHECK(bit_equal(p[0].value(), q[0].value()));
  CHECK(bit_equal(p[1].value(), q[1].value()));
}

// ---- resuming ----

namespace {

struct Run {
  std::vector<Variable> params;
  std::unique_ptr<Optimizer> opt;
  std::unique_ptr<LRScheduler> sched;
};
using Factory = std::function<std::unique_ptr<Optimizer>(std::vector<Variable>)>;

Run start(const Factory& make, const std::vector<Variable>& params) {
  Run r{params, make(params), nullptr};
  r.sched = std::make_unique<CosineAnnealingLR>(*r.opt, CosineAnnealingLROptions{.T_max = 7, .eta_min = 1e-4});
  return r;
}
void train(Run& r, size_t from, size_t to) {
  for (size_t t = from; t < to; ++t) {
    set_fixture_grads(r.params, t);
    r.opt->step();
    r.sched->step();
  }
}

}  // namespace

TEST_CASE("save, load into a fresh optimizer and continue is bit-exact with an uninterrupted run") {
  const std::vector<std::pair<std::string, Factory>> kinds = {
      {"Adam amsgrad", [](auto p) { return std::make_unique<Adam>(
           std::vector<ParamGroup>{{.params = {p[0]}}, {.params = {p[1]}, .lr = 0.05, .weight_decay = 0.0}},
           AdamOptions{.lr = 0.01, .betas = {0.8, 0.99}, .weight_decay = 0.1, .amsgrad = true}); }},
      {"AdamW", [](auto p) { return std::make_unique<AdamW>(p, AdamWOptions{.lr = 0.01}); }},
      {"SGD nesterov", [](auto p) { return std::make_unique<SGD>(
           p, SGDOptions{.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true}); }},
  };
  for (const auto& kind : kinds) {  // CAPTURE can't take a structured binding (clang 14)
    const std::string& name = kind.first;
    const Factory& make = kind.second;
    CAPTURE(name);
    Run whole = start(make, fixture_params());
    train(whole, 0, 20);

    Run first = start(make, fixture_params());
    train(first, 0, 9);
    const std::string path = temp_path("resume.safetensors");
    first.opt->save(path);
    const SchedulerState sched_state = first.sched->state_dict();

    // a new process: parameters restored (as Layer::load would), new optimizer and scheduler, then the state
    std::vector<Variable> params;
    for (const Variable& p : first.params) params.emplace_back(p.value().clone(), true);
    Run resumed = start(make, params);
    resumed.opt->load(path);
    resumed.sched->load_state_dict(sched_state);
    std::remove(path.c_str());
    train(resumed, 9, 20);
    for (size_t i = 0; i < 2; ++i) CHECK(bit_equal(resumed.params[i].value(), whole.params[i].value()));
    CHECK(resumed.opt->lr(0) == whole.opt->lr(0));

    // the check can fail: without the state the continuation differs
    std::vector<Variable> again;
    for (const Variable& p : first.params) again.emplace_back(p.value().clone(), true);
    Run stateless = start(make, again);
    train(stateless, 9, 20);
    CHECK_FALSE(bit_equal(stateless.params[0].value(), whole.params[0].value()));
  }
}

TEST_CASE("state_dict holds exact hyper-parameters and step counts as strings") {
  auto p = fixture_params();
  Adam opt(p, {.lr = 0.1, .betas = {0.8, 0.99}, .eps = 1e-6});
  set_fixture_grads(p, 0);
  opt.step();
  opt.set_lr(0, 1.0 / 3);
  const OptimizerState s = opt.state_dict();
  CHECK(s.values.at("optimizer") == "Adam");
  CHECK(s.values.at("group.0.lr") == "0.3333333333333333");
  CHECK(s.values.at("betas.0") == "0.8");
  CHECK(s.values.at("eps") == "1e-06");
  CHECK(s.values.at("amsgrad") == "false");
  CHECK(s.values.at("1.step") == "1");
  CHECK(s.values.at("1.shape") == "(5,)");
  CHECK(s.tensors.size() == 4);  // exp_avg and exp_avg_sq of w and b
}

TEST_CASE("loading the state of other parameters names the mismatch and changes nothing") {
  auto p = fixture_params();
  Adam saved(p, {.lr = 0.01});
  set_fixture_grads(p, 0);
  saved.step();
  const OptimizerState s = saved.state_dict();

  Adam one({p[0]});
  CHECK_THROWS_WITH_AS(one.load_state_dict(s),
                       doctest::Contains("Adam.load_state_dict: parameter count differs: 2 in the state vs 1 here"),
                       ValueError);
  Adam other_shape({p[0], Variable(zeros({6}, f64), true)}, {.lr = 0.5});
  CHECK_THROWS_WITH_AS(other_shape.load_state_dict(s),
                       doctest::Contains("parameter 1 shape differs: (5,) in the state vs (6,) here"), ShapeError);
  CHECK(other_shape.lr() == 0.5);
  CHECK(other_shape.state_dict().tensors.empty());

  SGD sgd(p);
  CHECK_THROWS_WITH_AS(sgd.load_state_dict(s),
                       doctest::Contains("SGD.load_state_dict: the state is of another optimizer: Adam vs SGD"), ValueError);
  Adam ams(p, {.amsgrad = true});
  CHECK_THROWS_WITH_AS(ams.load_state_dict(s), doctest::Contains("amsgrad differs: false in the state vs true here"),
                       ValueError);

  OptimizerState bad = s;
  bad.tensors["1.exp_avg"] = zeros({4}, f64);
  Adam fresh(p, {.lr = 0.5});
  CHECK_THROWS_WITH_AS(fresh.load_state_dict(bad),
                       doctest::Contains("'1.exp_avg' has shape (4,) but parameter 1 has shape (5,)"), ShapeError);
  bad = s;
  bad.tensors["1.exp_avg"] = zeros({5}, f32);
  CHECK_THROWS_AS(fresh.load_state_dict(bad), DTypeError);
  bad = s;
  bad.tensors["7.momentum"] = zeros({5}, f64);
  CHECK_THROWS_WITH_AS(fresh.load_state_dict(bad), doctest::Contains("unexpected tensor '7.momentum'"), ValueError);
  bad = s;
  bad.values["group.0.lr"] = "fast";
  CHECK_THROWS_WITH_AS(fresh.load_state_dict(bad), doctest::Contains("'group.0.lr' is not a number: 'fast'"),
                       ValueError);
  bad = s;
  bad.values["1.step"] = "-1";  // Adam's next t would be 0: a bias correction of 0 and lr / 0
  CHECK_THROWS_WITH_AS(fresh.load_state_dict(bad), doctest::Contains("'1.step' must be >= 0, got -1"), ValueError);
  bad = s;
  bad.values["betas.1"] = "1.5";
  CHECK_THROWS_WITH_AS(fresh.load_state_dict(bad), doctest::Contains("invalid betas.1: 1.5"), ValueError);
  CHECK(fresh.lr() == 0.5);
  CHECK(fresh.state_dict().tensors.empty());
}

TEST_CASE("load of a missing file throws ValueError naming it") {
  auto p = fixture_params();
  SGD opt(p);
  CHECK_THROWS_WITH_AS(opt.load("/nonexistent/opt.safetensors"), doctest::Contains("/nonexistent/opt.safetensors"),
                       ValueError);
}

TEST_CASE("an SGD state without tensors round-trips through a file") {
  auto p = fixture_params();
  SGD opt(p, {.lr = 0.25});
  const std::string path = temp_path("sgd.safetensors");
  opt.save(path);
  SGD other(p, {.lr = 0.1});
  other.load(path);
  std::remove(path.c_str());
  CHECK(other.lr() == 0.25);
}

// ---- the f32 update's roundings ----

TEST_CASE("Adam and AdamW update f32 parameters with torch's op-by-op roundings, bit for bit") {
  // The roundings adam.cpp documents, as a scalar loop in this file's build: the library runs them on 8
  // lanes (its AVX-512 clone) or 2 (SSE), which must not move a bit. 1003 elements: vector bodies and tails.
  const int64_t n = 1003;
  const double lr = 1e-3, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  for (int kind = 0; kind < 3; ++kind) {  // Adam, Adam with L2 decay, AdamW
    CAPTURE(kind);
    const double wd = kind == 0 ? 0.0 : 0.01;
    const Tensor p0 = randn({n});
    Variable p(p0.clone(), true);
    std::unique_ptr<Optimizer> opt;
    if (kind == 2) opt = std::make_unique<AdamW>(std::vector<Variable>{p}, AdamWOptions{.lr = lr, .weight_decay = wd});
    else opt = std::make_unique<Adam>(std::vector<Variable>{p}, AdamOptions{.lr = lr, .weight_decay = wd});
    std::vector<float> w = p0.to_vector<float>(), m(n), v(n);
    for (int t = 1; t <= 3; ++t) {
      const Tensor g = randn({n});
      p.set_grad(g);
      opt->step();
      const std::vector<float> gv = g.to_vector<float>();
      const float sbc2 = float(std::sqrt(1 - std::pow(b2, t)));
      const double neg_step = -(lr / (1 - std::pow(b1, t)));
      for (int64_t i = 0; i < n; ++i) {
        float gi = gv[i];
        if (kind == 2) w[i] = w[i] * float(1 - lr * wd);
        if (kind == 1) gi = float(gi + wd * w[i]);
        m[i] = float(m[i] * float(b1) + (1 - b1) * gi);
        v[i] = float(float(v[i] * float(b2)) + (1 - b2) * gi * gi);
        const float denom = float(std::sqrt(v[i]) / sbc2) + float(eps);
        w[i] = float(w[i] + neg_step * m[i] / denom);
      }
      CAPTURE(t);
      CHECK(bit_equal(p.value(), tensor(std::vector<double>(w.begin(), w.end()), {n}, f32)));
    }
  }
}
