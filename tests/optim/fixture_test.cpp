// Every optimizer case of optim.json: 20 steps from the fixture's initial parameters with its per-step
// gradients (set, not accumulated) must reproduce PyTorch 1.13's parameters after each step and its final
// state to 1e-10 in f64. TG_OPTIM_REPORT=1 prints the largest error of each case.
#include <cstdlib>
#include <memory>

#include "optim/optim.h"
#include "optim/fixture.h"

using namespace tg;
using namespace tg::optim;
using tg::test::json;

namespace {

std::unique_ptr<Optimizer> make_optimizer(const json& c, std::vector<Variable> params) {
  const json& kw = c.at("kwargs");
  const std::string cls = c.at("class");
  const double lr = kw.at("lr"), wd = kw.value("weight_decay", cls == "AdamW" ? 1e-2 : 0.0);
  if (cls == "SGD") {
    return std::make_unique<SGD>(std::move(params), SGDOptions{.lr = lr, .momentum = kw.value("momentum", 0.0),
                                                               .dampening = kw.value("dampening", 0.0),
                                                               .weight_decay = wd,
                                                               .nesterov = kw.value("nesterov", false)});
  }
  const auto betas = kw.value("betas", std::vector<double>{0.9, 0.999});
  const AdamOptions o{.lr = lr, .betas = {betas[0], betas[1]}, .eps = kw.value("eps", 1e-8), .weight_decay = wd,
                      .amsgrad = kw.value("amsgrad", false)};
  if (cls == "Adam") return std::make_unique<Adam>(std::move(params), o);
  return std::make_unique<AdamW>(std::move(params), AdamWOptions{.lr = o.lr, .betas = o.betas, .eps = o.eps,
                                                                 .weight_decay = o.weight_decay, .amsgrad = o.amsgrad});
}

}  // namespace

TEST_CASE("every optimizer case follows PyTorch's trajectory and final state to 1e-10") {
  const json& fx = tg::test::optim_fixture();
  const json& shapes = fx.at("params").at("shapes");
  for (const json& c : fx.at("optimizers")) {
    const std::string name = c.at("name");
    CAPTURE(name);
    std::vector<Variable> params;
    for (size_t i = 0; i < shapes.size(); ++i)
      params.emplace_back(tg::test::flat_tensor(fx["params"]["initial"][i], shapes[i]), true);
    std::unique_ptr<Optimizer> opt = make_optimizer(c, params);

    double worst_param = 0, worst_state = 0;
    for (size_t t = 0; t < fx.at("steps"); ++t) {
      for (size_t i = 0; i < params.size(); ++i)
        params[i].set_grad(tg::test::flat_tensor(fx["grads"][t][i], shapes[i]));
      opt->step();
      for (size_t i = 0; i < params.size(); ++i) {
        const double err =
            tg::test::max_abs_diff(params[i].value(), tg::test::numbers(c["params_after_step"][t][i]));
        CAPTURE(t);
        CAPTURE(i);
        CHECK(err <= 1e-10);
        worst_param = std::max(worst_param, err);
      }
    }

    const OptimizerState state = opt->state_dict();
    for (size_t i = 0; i < params.size(); ++i) {
      for (const auto& item : c.at("final_state")[i].items()) {  // CAPTURE can't take a structured binding
        const std::string key = item.key();
        const json& expected = item.value();
        CAPTURE(i);
        CAPTURE(key);
        if (key == "step") {
          CHECK(state.values.at(fmt::format("{}.step", i)) == fmt::format("{}", expected.get<int64_t>()));
          continue;
        }
        REQUIRE(state.tensors.count(fmt::format("{}.{}", i, key)) == 1);
        const double err = tg::test::max_abs_diff(state.tensors.at(fmt::format("{}.{}", i, key)),
                                                  tg::test::numbers(expected));
        CHECK(err <= 1e-10);
        worst_state = std::max(worst_state, err);
      }
      // no state torch does not keep (e.g. a momentum buffer for plain SGD, max_exp_avg_sq without amsgrad)
      size_t ours = 0;
      for (const auto& [key, _] : state.tensors) ours += key.rfind(fmt::format("{}.", i), 0) == 0;
      CHECK(ours == c["final_state"][i].size() - c["final_state"][i].count("step"));
    }
    if (std::getenv("TG_OPTIM_REPORT"))
      fmt::print("{:28} params {:.3g}  state {:.3g}\n", name, worst_param, worst_state);
  }
}
