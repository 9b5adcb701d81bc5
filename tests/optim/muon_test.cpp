// Muon against the transcription of torch.optim.Muon (PyTorch 2.9) in optim.json, its checks, f32, and
// resuming from a saved state.
#include <cstdio>
#include <filesystem>

#include <unistd.h>

#include "core/error.h"
#include "core/ops.h"
#include "optim/optim.h"
#include "optim/fixture.h"

using namespace tg;
using namespace tg::optim;
using tg::test::bit_equal;
using tg::test::json;

namespace {

const json& muon_fixture() { return tg::test::optim_fixture().at("muon"); }

std::vector<Variable> muon_params(DType dtype = f64) {
  std::vector<Variable> params;
  for (size_t i = 0; i < 2; ++i)
    params.emplace_back(tg::test::flat_tensor(muon_fixture()["initial"][i], muon_fixture()["shapes"][i], dtype), true);
  return params;
}

void set_grads(std::vector<Variable>& params, size_t t) {
  for (size_t i = 0; i < params.size(); ++i)
    params[i].set_grad(tg::test::flat_tensor(muon_fixture()["grads"][t][i], muon_fixture()["shapes"][i],
                                             params[i].dtype()));
}

MuonOptions options_of(const json& kw) {
  return {.lr = kw.at("lr"), .weight_decay = kw.value("weight_decay", 0.1), .momentum = kw.value("momentum", 0.95),
          .nesterov = kw.value("nesterov", true), .ns_steps = kw.value("ns_steps", int64_t(5)),
          .adjust_lr = kw.value("adjust_lr_fn", std::string("original")) == "match_rms_adamw"
                           ? MuonLrAdjust::match_rms_adamw : MuonLrAdjust::original};
}

}  // namespace

TEST_CASE("Muon follows torch.optim.Muon's trajectory and momentum buffers to 1e-10 in f64") {
  for (const json& c : muon_fixture().at("cases")) {
    const std::string name = c.at("name");
    CAPTURE(name);
    std::vector<Variable> params = muon_params();
    Muon opt(params, options_of(c.at("kwargs")));
    for (size_t t = 0; t < tg::test::optim_fixture().at("steps"); ++t) {
      set_grads(params, t);
      opt.step();
      for (size_t i = 0; i < 2; ++i) {
        CAPTURE(t);
        CAPTURE(i);
        CHECK(tg::test::max_abs_diff(params[i].value(), tg::test::numbers(c["params_after_step"][t][i])) <= 1e-10);
      }
    }
    const OptimizerState state = opt.state_dict();
    for (size_t i = 0; i < 2; ++i)
      CHECK(tg::test::max_abs_diff(state.tensors.at(fmt::format("{}.momentum_buffer", i)),
                                   tg::test::numbers(c["final_state"][i]["momentum_buffer"])) <= 1e-10);
  }
}

TEST_CASE("Muon on f32 parameters stays within 1e-5 of the f64 trajectory") {
  const json& c = muon_fixture().at("cases").at(0);
  std::vector<Variable> params = muon_params(f32);
  Muon opt(params, options_of(c.at("kwargs")));
  for (size_t t = 0; t < 20; ++t) {
    set_grads(params, t);
    opt.step();
  }
  CHECK(params[0].dtype() == f32);
  for (size_t i = 0; i < 2; ++i)
    CHECK(tg::test::max_abs_diff(params[i].value(), tg::test::numbers(c["params_after_step"][19][i])) <= 1e-5);
}

TEST_CASE("Newton-Schulz moves the singular values towards 1 and keeps the singular vectors") {
  // x = U·diag(s)·Vᵀ with orthonormal U (4x2 columns of a Hadamard matrix) and V = I: the result is
  // U·diag(f(s / ‖s‖)), f the quintic iterated 5 times, so each column stays U's column scaled.
  const double h = 0.5;
  const Tensor U = tensor({h, h, h, -h, h, h, h, -h}, {4, 2}, f64);
  const Tensor x = U * tensor({3.0, 0.3}, {1, 2}, f64);
  const Tensor o = zeropower_via_newton_schulz(x, {3.4445, -4.7750, 2.0315}, 5, 1e-7);
  const Tensor scale = sum(o * U, {0});  // the column scales: o = U·diag(scale) if the vectors are kept
  CHECK(tg::test::max_abs_diff(o, (U * scale.reshape({1, 2})).to_vector<double>()) < 1e-12);
  for (double s : scale.to_vector<double>()) {
    CHECK(s > 0.5);
    CHECK(s < 1.5);
  }
  // the tall (4, 2) and the wide (2, 4) orientations give transposed results
  const Tensor ot = zeropower_via_newton_schulz(x.mT(), {3.4445, -4.7750, 2.0315}, 5, 1e-7);
  CHECK(tg::test::max_abs_diff(ot, o.mT().contiguous().to_vector<double>()) < 1e-14);
  CHECK_THROWS_WITH_AS(zeropower_via_newton_schulz(zeros({3}), {1, 0, 0}, 1, 1e-7),
                       "zeropower_via_newton_schulz: expected a 2-D matrix, got shape (3,)", ShapeError);
}

TEST_CASE("Muon refuses parameters that are not 2-D and invalid options, naming them") {
  std::vector<Variable> params = muon_params();
  params.emplace_back(zeros({5}), true);
  CHECK_THROWS_WITH_AS(Muon(params, MuonOptions{}), doctest::Contains("parameter 2 has shape (5,); Muon takes 2-D weights only"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(Muon(muon_params(), {.momentum = 1.0}),
                       "Muon: invalid momentum: 1 (expected a finite value in [0, 1))", ValueError);
  CHECK_THROWS_WITH_AS(Muon(muon_params(), {.ns_steps = 0}), "Muon: invalid ns_steps: 0 (expected 1 to 99)",
                       ValueError);
  CHECK_THROWS_WITH_AS(Muon(muon_params(), {.eps = 0}), doctest::Contains("Muon: invalid eps: 0"), ValueError);
  CHECK_THROWS_WITH_AS(Muon(muon_params(), {.lr = -1}), doctest::Contains("Muon: invalid lr: -1"), ValueError);
}

TEST_CASE("Muon saved after 9 steps and loaded into a fresh optimizer continues bit-exactly") {
  const MuonOptions o{.lr = 0.02};
  std::vector<Variable> whole = muon_params();
  Muon a(whole, o);
  for (size_t t = 0; t < 20; ++t) set_grads(whole, t), a.step();

  std::vector<Variable> first = muon_params();
  Muon b(first, o);
  for (size_t t = 0; t < 9; ++t) set_grads(first, t), b.step();
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("tg_muon_{}.safetensors", ::getpid())).string();
  b.save(path);
  std::vector<Variable> resumed, stateless;
  for (const Variable& p : first) resumed.emplace_back(p.value().clone(), true), stateless.emplace_back(p.value().clone(), true);
  Muon c(resumed, o), d(stateless, o);
  c.load(path);
  std::remove(path.c_str());
  for (size_t t = 9; t < 20; ++t) set_grads(resumed, t), c.step(), set_grads(stateless, t), d.step();
  for (size_t i = 0; i < 2; ++i) CHECK(bit_equal(resumed[i].value(), whole[i].value()));
  CHECK_FALSE(bit_equal(stateless[0].value(), whole[0].value()));  // the momentum buffers matter
}

TEST_CASE("MuonWithAdamW updates each parameter as Muon or AdamW alone would, bit for bit, and resumes") {
  // Muon's two matrices, and the AdamW fixture's w (3, 4) and b (5,)
  const json& fx = tg::test::optim_fixture();
  auto adam_params = [&fx] {
    std::vector<Variable> p;
    for (size_t i = 0; i < 2; ++i) p.emplace_back(tg::test::flat_tensor(fx["params"]["initial"][i], fx["params"]["shapes"][i]), true);
    return p;
  };
  auto set_adam_grads = [&fx](std::vector<Variable>& p, size_t t) {
    for (size_t i = 0; i < 2; ++i) p[i].set_grad(tg::test::flat_tensor(fx["grads"][t][i], fx["params"]["shapes"][i]));
  };
  const MuonOptions mo{.lr = 0.02, .weight_decay = 0.01};
  const AdamWOptions ao{.lr = 0.01, .betas = {0.9, 0.95}};
  std::vector<Variable> m1 = muon_params(), a1 = adam_params(), m2 = muon_params(), a2 = adam_params();
  Muon muon(m1, mo);
  AdamW adamw({{.params = {a1[0]}}, {.params = {a1[1]}, .weight_decay = 0.0}}, ao);
  MuonWithAdamW both({{.params = m2}}, mo, {{.params = {a2[0]}}, {.params = {a2[1]}, .weight_decay = 0.0}}, ao);
  CHECK(both.param_groups().size() == 3);
  CHECK(both.lr(0) == 0.02);
  CHECK(both.lr(2) == 0.01);
  CHECK(*both.param_groups()[2].weight_decay == 0.0);
  for (size_t t = 0; t < 9; ++t) {
    set_grads(m1, t), set_adam_grads(a1, t), set_grads(m2, t), set_adam_grads(a2, t);
    muon.step(), adamw.step(), both.step();
  }
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("tg_muon_adamw_{}.safetensors", ::getpid())).string();
  both.save(path);
  std::vector<Variable> m3, a3;
  for (const Variable& p : m2) m3.emplace_back(p.value().clone(), true);
  for (const Variable& p : a2) a3.emplace_back(p.value().clone(), true);
  MuonWithAdamW resumed({{.params = m3}}, mo, {{.params = {a3[0]}}, {.params = {a3[1]}, .weight_decay = 0.0}}, ao);
  resumed.load(path);
  std::remove(path.c_str());
  for (size_t t = 9; t < 20; ++t) {
    set_grads(m1, t), set_adam_grads(a1, t), set_grads(m3, t), set_adam_grads(a3, t);
    muon.step(), adamw.step(), resumed.step();
  }
  for (size_t i = 0; i < 2; ++i) {
    CHECK(bit_equal(m3[i].value(), m1[i].value()));
    CHECK(bit_equal(a3[i].value(), a1[i].value()));
  }
  // and the AdamW half is the fixture's AdamW (betas 0.9/0.95 aside): it moved
  CHECK_FALSE(bit_equal(a3[0].value(), adam_params()[0].value()));
}

TEST_CASE("MuonWithAdamW names the part whose parameter or option is wrong") {
  const json& fx = tg::test::optim_fixture();
  const Variable b(tg::test::flat_tensor(fx["params"]["initial"][1], fx["params"]["shapes"][1]), true);
  CHECK_THROWS_WITH_AS(MuonWithAdamW({{.params = {b}}}, {}, {}, {}), doctest::Contains("Muon: parameter 0 has shape (5,)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(MuonWithAdamW({{.params = muon_params()}}, {}, {{.params = {b}}}, {.betas = {1.0, 0.9}}),
                       doctest::Contains("AdamW: invalid betas[0]: 1"), ValueError);
  const std::vector<Variable> w = muon_params();
  CHECK_THROWS_WITH_AS(MuonWithAdamW({{.params = w}}, {}, {{.params = {w[0]}}}, {}),
                       doctest::Contains("MuonWithAdamW: parameter 2 appears twice (also parameter 0)"), ValueError);
}

TEST_CASE("a zero gradient gives a zero update (eps, not 0/0): Muon only decays the weights") {
  std::vector<Variable> params = muon_params();
  const Tensor before = params[0].value().clone();
  Muon opt(params, {.lr = 0.02, .weight_decay = 0.1});
  for (Variable& p : params) p.set_grad(zeros_like(p.value()));
  opt.step();
  CHECK(tg::test::max_abs_diff(params[0].value(), (before * (1 - 0.02 * 0.1)).to_vector<double>()) == 0);
}
