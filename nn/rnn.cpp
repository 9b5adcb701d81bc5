// GRU and LSTM over layers, directions and time. The run works in the input's own layout (time dim 0, or 1
// with batch_first): the input projection is one linear over all steps, split into per-step views along
// the time dim (split joins their gradients with one cat), and the per-step outputs are stacked back
// along it, so no transposed copy of the input or output is made. Padding is handled per step by
// selecting the old state where a sequence skips the step.
#include "nn/rnn.h"

#include <algorithm>
#include <string>

namespace tg::nn {

SequenceLengths::SequenceLengths(const Tensor& lengths) {
  if (!lengths.defined()) return;
  check<DTypeError>(lengths.dtype() == i64, "lengths: expected an i64 tensor, got {}", lengths.dtype());
  check<ShapeError>(lengths.dim() == 1, "lengths: expected a 1-D tensor (B), got {}", lengths.shape());
  values_ = lengths.to_vector<int64_t>();
  defined_ = true;
}

RNNBase::RNNBase(const RNNOptions& o, int64_t gates, const char* name)
    : options_(o), name_(name), lstm_(gates == 4), directions_(o.bidirectional ? 2 : 1) {
  check<ValueError>(o.input_size > 0 && o.hidden_size > 0, "{}: input_size and hidden_size must be > 0, got {} and {}",
                    name, o.input_size, o.hidden_size);
  check<ValueError>(o.num_layers > 0, "{}: num_layers must be > 0, got {}", name, o.num_layers);
  check<ValueError>(o.dropout >= 0 && o.dropout <= 1, "{}: dropout must be in [0, 1], got {}", name, o.dropout);
  check<ValueError>(lstm_ || o.proj_size == 0, "{}: proj_size is for LSTM only, got {}", name, o.proj_size);
  check<ValueError>(o.proj_size >= 0 && o.proj_size < o.hidden_size,
                    "{}: proj_size must be in [0, hidden_size = {}), got {}", name, o.hidden_size, o.proj_size);
  check<DTypeError>(is_floating(o.dtype), "{}: dtype must be f32 or f64, got {}", name, o.dtype);
  const int64_t H = o.hidden_size, H_out = o.proj_size > 0 ? o.proj_size : H;
  auto param = [&](const std::string& n, const Shape& shape) {
    return register_parameter(n, detail::rnn_uniform(shape, H, o.dtype));
  };
  for (int64_t k = 0; k < o.num_layers; ++k) {
    const int64_t in = k == 0 ? o.input_size : directions_ * H_out;
    for (int64_t d = 0; d < directions_; ++d) {
      const std::string suffix = "_l" + std::to_string(k) + (d == 1 ? "_reverse" : "");
      Weights w;
      w.w_ih = param("weight_ih" + suffix, {gates * H, in});
      w.w_hh = param("weight_hh" + suffix, {gates * H, H_out});
      if (o.bias) w.b_ih = param("bias_ih" + suffix, {gates * H}), w.b_hh = param("bias_hh" + suffix, {gates * H});
      if (o.proj_size > 0) w.w_hr = param("weight_hr" + suffix, {o.proj_size, H});
      weights_.push_back(w);
    }
  }
}

void RNNBase::check_input(const Variable& x) const {
  const char* layout = options_.batch_first ? "(B, T, input_size)" : "(T, B, input_size)";
  check<ShapeError>(x.dim() == 2 || x.dim() == 3, "{}: input must be {} or unbatched (T, input_size), got {}", name_,
                    layout, x.shape());
  check<ShapeError>(x.size(-1) == options_.input_size, "{}: input {} has input_size {} (last dim), expected {}", name_,
                    x.shape(), x.size(-1), options_.input_size);
}

Variable RNNBase::initial_state(const Variable& s, const Shape& want, DType dtype, const char* what) const {
  if (!s) return Variable(zeros(want, dtype));
  check<ShapeError>(s.shape() == want, "{}: {} has shape {}, expected {}", name_, what, s.shape(), want);
  return s;
}

std::vector<Tensor> RNNBase::skipped_steps(const RNNCall& call, int64_t B, int64_t T) const {
  std::vector<double> padded(B * T, 0.0);  // (B, T): 1 where sequence b skips step t
  if (call.lengths.defined()) {
    const std::vector<int64_t>& n = call.lengths.values();
    check<ShapeError>(int64_t(n.size()) == B, "{}: lengths has {} entries, expected B = {}", name_, n.size(), B);
    for (int64_t b = 0; b < B; ++b) {
      check<ValueError>(n[b] >= 1 && n[b] <= T, "{}: lengths[{}] = {} is out of range [1, T = {}]", name_, b, n[b], T);
      for (int64_t t = n[b]; t < T; ++t) padded[b * T + t] = 1.0;
    }
  } else if (call.padding_mask.defined()) {
    check<DTypeError>(call.padding_mask.dtype() == boolean, "{}: padding_mask must be bool, got {}", name_,
                      call.padding_mask.dtype());
    check<ShapeError>(call.padding_mask.shape() == Shape{B, T}, "{}: padding_mask has shape {}, expected (B, T) = {}",
                      name_, call.padding_mask.shape(), Shape{B, T});
    padded = call.padding_mask.to(f64).contiguous().to_vector<double>();
  } else {
    return {};
  }
  std::vector<Tensor> skipped(T);
  for (int64_t t = 0; t < T; ++t) {
    std::vector<double> column(B);
    for (int64_t b = 0; b < B; ++b) column[b] = padded[b * T + t];
    if (std::find(column.begin(), column.end(), 1.0) != column.end()) skipped[t] = tensor(column, {B, 1}, boolean);
  }
  return skipped;
}

std::pair<Variable, LSTMState> RNNBase::run_direction(const Variable& input, const Weights& w, LSTMState state,
                                                      bool reverse, const std::vector<Tensor>& skipped) const {
  const int64_t time_dim = options_.batch_first ? 1 : 0, T = input.size(time_dim);
  const std::vector<Variable> gx = split(linear(input, w.w_ih, w.b_ih), std::vector<int64_t>(T, 1), time_dim);
  std::vector<Variable> outputs(T);
  for (int64_t i = 0; i < T; ++i) {
    const int64_t t = reverse ? T - 1 - i : i;
    LSTMState next = step(gx[t].squeeze(time_dim), state, w);
    if (!skipped.empty() && skipped[t].defined()) {  // padded sequences keep their state and output zeros
      next.h = where(skipped[t], state.h, next.h);
      if (next.c) next.c = where(skipped[t], state.c, next.c);
      outputs[t] = masked_fill(next.h, skipped[t], 0.0);
    } else {
      outputs[t] = next.h;
    }
    state = next;
  }
  return {stack(outputs, time_dim), state};
}

RNNOutput RNNBase::forward(const Variable& x, const RNNCall& call) {
  RNNOutput out = run(x, call);
  run_forward_hooks(x, out.output);
  return out;
}

// Unbatched inputs get a batch dim of 1 (and their states one at dim 1), removed again at the end.
RNNOutput RNNBase::run(const Variable& x_in, const RNNCall& call) const {
  check_input(x_in);
  const bool unbatched = x_in.dim() == 2, lstm = lstm_;
  const int64_t batch_dim = options_.batch_first ? 0 : 1;
  check<ShapeError>(!unbatched || (!call.lengths.defined() && !call.padding_mask.defined()),
                    "{}: lengths and padding_mask need a batched input, got {}", name_, x_in.shape());
  check<ValueError>(!call.lengths.defined() || !call.padding_mask.defined(),
                    "{}: give lengths or padding_mask, not both", name_);
  check<ValueError>(lstm || !call.c0, "{}: c0 is for LSTM only", name_);
  const Variable x = unbatched ? x_in.unsqueeze(batch_dim) : x_in;
  const int64_t B = x.size(batch_dim), T = x.size(1 - batch_dim), LD = options_.num_layers * directions_;
  check<ShapeError>(T > 0, "{}: input {} has no time steps", name_, x_in.shape());
  const int64_t H = options_.hidden_size, H_out = options_.proj_size > 0 ? options_.proj_size : H;
  auto state_shape = [&](int64_t h) { return unbatched ? Shape{LD, h} : Shape{LD, B, h}; };
  Variable h0 = initial_state(call.h0, state_shape(H_out), x.dtype(), "h0");
  Variable c0 = lstm ? initial_state(call.c0, state_shape(H), x.dtype(), "c0") : Variable();
  if (unbatched) h0 = h0.unsqueeze(1), c0 = c0 ? c0.unsqueeze(1) : c0;
  const std::vector<Tensor> skipped = skipped_steps(call, B, T);

  const std::vector<Variable> h0s = split(h0, std::vector<int64_t>(LD, 1), 0);
  const std::vector<Variable> c0s = lstm ? split(c0, std::vector<int64_t>(LD, 1), 0) : std::vector<Variable>(LD);
  std::vector<Variable> h_n, c_n;
  Variable layer_in = x;
  for (int64_t k = 0; k < options_.num_layers; ++k) {
    std::vector<Variable> outputs;
    for (int64_t d = 0; d < directions_; ++d) {
      const int64_t i = k * directions_ + d;
      const LSTMState s0{h0s[i].squeeze(0), lstm ? c0s[i].squeeze(0) : Variable()};
      auto [output, last] = run_direction(layer_in, weights_[i], s0, d == 1, skipped);
      outputs.push_back(output), h_n.push_back(last.h), c_n.push_back(last.c);
    }
    layer_in = directions_ == 2 ? cat(outputs, -1) : outputs[0];
    if (k + 1 < options_.num_layers && options_.dropout > 0)
      layer_in = dropout(layer_in, options_.dropout, is_training());
  }
  RNNOutput out{layer_in, stack(h_n, 0), lstm ? stack(c_n, 0) : Variable()};
  if (unbatched) {
    out.output = out.output.squeeze(batch_dim), out.h_n = out.h_n.squeeze(1);
    if (lstm) out.c_n = out.c_n.squeeze(1);
  }
  return out;
}

LSTMState GRU::step(const Variable& gx, const LSTMState& state, const Weights& w) const {
  return {gru_step(gx, state.h, w.w_hh, w.b_hh), Variable()};
}

LSTMState LSTM::step(const Variable& gx, const LSTMState& state, const Weights& w) const {
  return lstm_step(gx, state, w.w_hh, w.b_hh, w.w_hr);
}

}  // namespace tg::nn
