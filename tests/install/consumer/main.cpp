// Uses the installed headers and library: one gradient, printed, checked by the calling script.
#include <tensorgrad/tensorgrad.h>

int main() {
  tg::Variable x(tg::tensor({1.0, 2.0, 3.0}, tg::f64), true);
  tg::Variable y = tg::sum(x * x);  // dy/dx = 2x
  y.backward();
  fmt::print("{}\n", fmt::join(x.grad().to_vector<double>(), " "));
}
