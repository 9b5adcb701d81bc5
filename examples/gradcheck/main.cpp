// Checking gradients with tg::gradcheck: first a function of your own, then a whole layer, then a
// deliberately wrong gradient to show what a failure reports. Everything in float64.
#include <tensorgrad/tensorgrad.h>

using namespace tg;

int main() {
  manual_seed(0);
  // 1. A function of your own: f(a, b) = Σ softplus(a @ b) with softplus(z) = log(1 + e^z).
  GradFn softplus_matmul = [](const std::vector<Variable>& x) { return sum(log(1.0 + exp(matmul(x[0], x[1])))); };
  Variable a(randn({3, 4}, f64), true), b(randn({4, 2}, f64), true);
  fmt::print("softplus(a @ b):        {}\n", gradcheck(softplus_matmul, {a, b}));

  // 2. A layer: the input and every parameter are checked together.
  nn::MultiHeadAttention attention({.d_model = 4, .num_heads = 2, .dtype = f64});
  std::vector<Variable> inputs{Variable(randn({2, 3, 4}, f64), true)};
  for (const Variable& p : attention.parameters()) inputs.push_back(p);
  GradFn self_attention = [&](const std::vector<Variable>& x) { return attention.forward(x[0], x[0], x[0]).output; };
  fmt::print("MultiHeadAttention:     {}\n", gradcheck(self_attention, inputs));
  fmt::print("  second derivatives:   {}\n", gradgradcheck(softplus_matmul, {a, b}));

  // 3. A wrong backward: y = x³ recorded with dy/dx = 2x instead of 3x².
  GradFn wrong_cube = [](const std::vector<Variable>& x) {
    return record("wrong_cube", pow(x[0].value(), 3.0), {x[0]}, [x](const Variable& dy, const Variable&) -> Grads {
      return {dy * 2.0 * x[0]};
    });
  };
  fmt::print("a wrong gradient:       {}\n", gradcheck(wrong_cube, {Variable(randn({5}, f64), true)}));
}
