// The non-finite guard: finite steps pass, a NaN stops with the step and the parameter named, or rolls
// back to the committed state with the learning rates (optimizer and schedule) lowered.
#include <doctest/doctest.h>

#include <cmath>

#include "core/error.h"
#include "optim/sgd.h"
#include "train/guard.h"
#include "train/run.h"

using namespace tg;
using namespace tg::train;

namespace {
void set_nan_grad(nn::Layer& model) {
  for (Variable p : model.parameters()) p.set_grad(full(p.value().shape(), NAN));
}
}  // namespace

TEST_CASE("the guard passes finite steps and stops on a NaN gradient, naming the step and the parameter") {
  test::Run r;
  NonFiniteGuard guard({.model = r.model.get(), .optimizer = &r.opt});
  CHECK(guard.check(0.5));
  set_nan_grad(*r.model);
  CHECK_THROWS_WITH_AS(guard.check(0.5), "NonFiniteGuard: step 2: the gradient of fc1.weight has NaN or inf; stopped "
                       "before applying it", Error);
  CHECK_THROWS_WITH_AS(guard.check(INFINITY), doctest::Contains("step 3: the loss is inf"), Error);
}

TEST_CASE("the guard rolls back to the committed state and lowers the learning rates") {
  test::Run r;
  NonFiniteGuard guard({.model = r.model.get(), .optimizer = &r.opt, .scheduler = &r.sched},
                       {.action = OnNonFinite::rollback, .factor = 0.5, .max_rollbacks = 2});
  const std::vector<float> good = r.weights();
  r.train(2);  // steps after the commit, then a bad one
  CHECK(r.weights() != good);
  CHECK_FALSE(guard.check(NAN));
  CHECK(r.weights() == good);
  CHECK(r.opt.lr() == 0.025);
  CHECK(r.sched.state_dict().at("base_lr.0") == 0.025);  // the schedule goes on from the lowered rate
  CHECK_FALSE(r.model->parameters()[0].grad().defined());
  CHECK(guard.rollbacks() == 1);

  guard.commit();  // a later good state: the next rollback lowers from it, once more by the factor
  CHECK_FALSE(guard.check(NAN));
  CHECK(r.opt.lr() == 0.0125);
  CHECK(guard.lr_scale() == 0.25);
  CHECK_THROWS_WITH_AS(guard.check(NAN), doctest::Contains("all 2 rollbacks used"), Error);
}

TEST_CASE("the guard refuses bad options") {
  test::Run r;
  CHECK_THROWS_WITH_AS(NonFiniteGuard({.model = r.model.get(), .optimizer = &r.opt}, {.factor = 1}),
                       "NonFiniteGuard: factor must be in (0, 1), got 1", ValueError);
  CHECK_THROWS_AS(NonFiniteGuard({.model = r.model.get()}), ValueError);
}
