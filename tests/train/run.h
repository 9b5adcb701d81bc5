#pragma once
// A small training run for the toolkit's tests: a two-layer classifier with dropout on 10 examples, Adam
// with a StepLR schedule, a shuffling loader with workers, early stopping and an extra generator, so that
// a checkpoint must carry every kind of state for a resumed run to end bit-identical.
#include <memory>

#include "core/ops.h"
#include "core/random.h"
#include "data/loader.h"
#include "nn/dense.h"
#include "nn/dropout.h"
#include "optim/adam.h"
#include "optim/scheduler.h"
#include "train/early_stopping.h"
#include "train/state.h"

namespace tg::test {

class Net : public nn::Layer {
 public:
  Net() {
    register_layer("fc1", fc1_), register_layer("drop", drop_), register_layer("fc2", fc2_);
  }
  Variable forward(const Variable& x) override { return fc2_(relu(drop_(fc1_(x)))); }

 private:
  nn::Dense fc1_{{.in_features = 4, .out_features = 8}};
  nn::Dropout drop_{0.3};
  nn::Dense fc2_{{.in_features = 8, .out_features = 2}};
};

struct Run {
  Run() : model((manual_seed(0), std::make_unique<Net>())) {}

  std::unique_ptr<Net> model;
  std::shared_ptr<data::TensorDataset> dataset = [] {
    Generator g(1);
    return std::make_shared<data::TensorDataset>(
        std::vector<Tensor>{randn({10, 4}, f32, &g), randint(0, 2, {10}, &g)});
  }();
  data::DataLoader loader{dataset, {.batch_size = 4, .shuffle = true, .seed = 3, .num_workers = 2}};
  optim::Adam opt{model->parameters(), {.lr = 0.05}};
  optim::StepLR sched{opt, {.step_size = 2, .gamma = 0.5}};
  train::EarlyStopping stopper{{.patience = 3}};
  Generator extra{7};
  int64_t steps = 0;

  train::TrainingState state() {
    return {.model = model.get(), .optimizer = &opt, .scheduler = &sched, .loader = &loader,
            .early_stopping = &stopper, .generators = {{"extra", &extra}}};
  }

  // n optimizer steps, continuing the loader where it is; the schedule and early stopping step per epoch.
  void train(int64_t n) {
    for (int64_t done = 0; done < n;) {
      for (const data::Batch& b : loader) {
        opt.zero_grad();
        Variable loss = cross_entropy((*model)(Variable(b[0])), b[1]);
        loss.backward();
        opt.step();
        ++steps, extra.next();
        if (loader.state().batch == 0) sched.step(), stopper.step(loss.item());  // the epoch's last batch
        if (++done == n) break;
      }
    }
  }

  std::vector<float> weights() const {
    std::vector<float> out;
    for (const Variable& p : model->parameters())
      for (float v : p.value().to_vector<float>()) out.push_back(v);
    return out;
  }
};

}  // namespace tg::test
