// The smallest complete training run: a 2-8-2 tanh network learns XOR with Adam. The loop in main() is
// the canonical one (zero_grad, forward, loss, backward, step) that every bigger model repeats.
#include <tensorgrad/nn/dense.h>
#include <tensorgrad/tensorgrad.h>

// x: (B, 2) -> logits (B, 2)
struct XorNet : tg::nn::Layer {
  tg::nn::Dense hidden{{.in_features = 2, .out_features = 8}}, out{{.in_features = 8, .out_features = 2}};
  XorNet() {
    register_layer("hidden", hidden);
    register_layer("out", out);
  }
  tg::Variable forward(const tg::Variable& x) override { return out(tg::tanh(hidden(x))); }
};

int main() {
  tg::manual_seed(0);
  tg::Variable x(tg::tensor({0, 0, 0, 1, 1, 0, 1, 1}, {4, 2}));  // the four inputs (4, 2)
  tg::Tensor y = tg::index_tensor({0, 1, 1, 0}, {4});           // their classes: x0 xor x1
  XorNet model;
  tg::optim::Adam opt(model.parameters(), {.lr = 0.05});
  double loss_value = 0;
  for (int step = 1; step <= 300; ++step) {
    tg::Variable loss = tg::cross_entropy(model(x), y);  // scalar
    opt.zero_grad();
    loss.backward();
    opt.step();
    loss_value = loss.item();
    if (step % 50 == 0) fmt::print("step {:3}  loss {:.6f}\n", step, loss_value);
  }
  tg::NoGradGuard no_grad;
  fmt::print("predicted classes: {}\n", tg::argmax(model(x).value(), 1));
  return loss_value < 0.01 ? 0 : 1;  // a non-zero exit tells a script that training did not converge
}
