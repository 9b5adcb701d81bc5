// The GRU and LSTM steps as compositions of differentiable ops (each step's graph is about a dozen nodes;
// the gates are split from one (B, G·H) product as views), and the cells built on them.
#include "nn/rnn_cell.h"

#include <cmath>

#include "nn/init.h"

namespace tg::nn {

namespace detail {
Tensor rnn_uniform(const Shape& shape, int64_t hidden_size, DType dtype) {
  const double bound = 1.0 / std::sqrt(double(hidden_size));
  return init::uniform(empty(shape, dtype), -bound, bound);
}
}  // namespace detail

// gx, gh: (B, 3H) in the order r, z, n; h' = (1 - z)·n + z·h, written n + z·(h - n).
Variable gru_step(const Variable& gx, const Variable& h, const Variable& w_hh, const Variable& b_hh) {
  const int64_t H = h.size(-1);
  const std::vector<Variable> x = split(gx, {H, H, H}, -1), g = split(linear(h, w_hh, b_hh), {H, H, H}, -1);
  const Variable r = sigmoid(x[0] + g[0]), z = sigmoid(x[1] + g[1]);
  const Variable n = tanh(x[2] + r * g[2]);
  return n + z * (h - n);
}

// gates: (B, 4H) in the order i, f, g, o.
LSTMState lstm_step(const Variable& gx, const LSTMState& state, const Variable& w_hh, const Variable& b_hh,
                    const Variable& w_hr) {
  const int64_t H = state.c.size(-1);
  const std::vector<Variable> g = split(gx + linear(state.h, w_hh, b_hh), {H, H, H, H}, -1);
  const Variable c = sigmoid(g[1]) * state.c + sigmoid(g[0]) * tanh(g[2]);
  const Variable h = sigmoid(g[3]) * tanh(c);
  return {w_hr ? linear(h, w_hr, Variable()) : h, c};
}

RNNCellBase::RNNCellBase(const RNNCellOptions& o, int64_t gates, const char* name) : options_(o), name_(name) {
  check<ValueError>(o.input_size > 0 && o.hidden_size > 0, "{}: input_size and hidden_size must be > 0, got {} and {}",
                    name, o.input_size, o.hidden_size);
  check<DTypeError>(is_floating(o.dtype), "{}: dtype must be f32 or f64, got {}", name, o.dtype);
  const int64_t H = o.hidden_size;
  weight_ih_ = register_parameter("weight_ih", detail::rnn_uniform({gates * H, o.input_size}, H, o.dtype));
  weight_hh_ = register_parameter("weight_hh", detail::rnn_uniform({gates * H, H}, H, o.dtype));
  if (o.bias) {
    bias_ih_ = register_parameter("bias_ih", detail::rnn_uniform({gates * H}, H, o.dtype));
    bias_hh_ = register_parameter("bias_hh", detail::rnn_uniform({gates * H}, H, o.dtype));
  }
}

void RNNCellBase::check_input(const Variable& x) const {
  check<ShapeError>(x.dim() == 1 || x.dim() == 2, "{}: input must be (B, input_size) or (input_size), got {}", name_,
                    x.shape());
  check<ShapeError>(x.size(-1) == options_.input_size, "{}: input {} has input_size {} (last dim), expected {}", name_,
                    x.shape(), x.size(-1), options_.input_size);
}

Variable RNNCellBase::state_or_zeros(const Variable& s, const Variable& x, const char* what) const {
  const Shape want = x.dim() == 2 ? Shape{x.size(0), options_.hidden_size} : Shape{options_.hidden_size};
  if (!s) return Variable(zeros(want, x.dtype()));
  check<ShapeError>(s.shape() == want, "{}: {} has shape {}, expected {} for input {}", name_, what, s.shape(), want,
                    x.shape());
  return s;
}

Variable GRUCell::step(const Variable& x, const Variable& h) const {
  check_input(x);
  return gru_step(linear(x, weight_ih_, bias_ih_), state_or_zeros(h, x, "h"), weight_hh_, bias_hh_);
}
// Hooks run here; operator()(x) calls the unary override and then runs them itself.
Variable GRUCell::forward(const Variable& x, const Variable& h) {
  Variable y = step(x, h);
  run_forward_hooks(x, y);
  return y;
}

LSTMState LSTMCell::step(const Variable& x, const LSTMState& state) const {
  check_input(x);
  const LSTMState s{state_or_zeros(state.h, x, "h"), state_or_zeros(state.c, x, "c")};
  return lstm_step(linear(x, weight_ih_, bias_ih_), s, weight_hh_, bias_hh_);
}
LSTMState LSTMCell::forward(const Variable& x, const LSTMState& state) {
  LSTMState y = step(x, state);
  run_forward_hooks(x, y.h);
  return y;
}

}  // namespace tg::nn
