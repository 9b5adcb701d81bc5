#pragma once
// The GRU and LSTM recurrences as PyTorch computes them: one time step from the input's projection (the
// step functions, shared with nn::GRU and nn::LSTM, which project every step's input with one GEMM), and
// the cells GRUCell and LSTMCell, which project one input and take one step.
#include "nn/layer.h"

namespace tg::nn {

/// One GRU step (Cho et al. 2014, with PyTorch's placement of r): gx = x·W_ihᵀ + b_ih (B, 3H) already
/// computed, h (B, H), w_hh (3H, H), b_hh (3H) or undefined; rows of the weights in the order r, z, n.
///   r = σ(W_ir x + b_ir + W_hr h + b_hr)
///   z = σ(W_iz x + b_iz + W_hz h + b_hz)
///   n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn))
///   h' = (1 - z) ⊙ n + z ⊙ h
/// Returns h' (B, H). Shapes are the caller's to check.
Variable gru_step(const Variable& gx, const Variable& h, const Variable& w_hh, const Variable& b_hh);

/// An LSTM's state: h (B, H_out) and c (B, H).
struct LSTMState {
  Variable h;  ///< the hidden state (B, H_out)
  Variable c;  ///< the cell state (B, H)
};

/// One LSTM step (Hochreiter & Schmidhuber 1997, with the forget gate of Gers et al. 2000, as PyTorch):
/// gx = x·W_ihᵀ + b_ih (B, 4H) already computed, w_hh (4H, H_out), b_hh (4H) or undefined, w_hr (H_out, H)
/// or undefined (no projection, H_out = H); rows of the weights in the order i, f, g, o.
///   i = σ(W_ii x + b_ii + W_hi h + b_hi)      f = σ(W_if x + b_if + W_hf h + b_hf)
///   g = tanh(W_ig x + b_ig + W_hg h + b_hg)   o = σ(W_io x + b_io + W_ho h + b_ho)
///   c' = f ⊙ c + i ⊙ g,   h' = o ⊙ tanh(c'),   then h' = W_hr h' with a projection (Sak et al. 2014).
/// Shapes are the caller's to check.
LSTMState lstm_step(const Variable& gx, const LSTMState& state, const Variable& w_hh, const Variable& b_hh,
                    const Variable& w_hr = {});

namespace detail {
/// U(-1/√hidden_size, 1/√hidden_size) of `shape`: PyTorch's initialisation of every RNN weight and bias.
Tensor rnn_uniform(const Shape& shape, int64_t hidden_size, DType dtype);
}  // namespace detail

/// The options of GRUCell and LSTMCell, PyTorch's names.
struct RNNCellOptions {
  int64_t input_size = 0;   ///< the width of x
  int64_t hidden_size = 0;  ///< H, the width of the state
  bool bias = true;         ///< bias_ih and bias_hh
  DType dtype = f32;        ///< of every parameter
};

/// What GRUCell and LSTMCell share: weight_ih (G·H, input_size), weight_hh (G·H, H), bias_ih and bias_hh
/// (G·H) for G gates, registered in PyTorch's order, and the checks of the input and a state.
class RNNCellBase : public Layer {
 public:
  const RNNCellOptions& options() const { return options_; }  ///< as constructed
  /// The parameters, PyTorch's names and gate order (biases undefined without bias); copy_ into them.
  Variable weight_ih() const { return weight_ih_; }
  Variable weight_hh() const { return weight_hh_; }  ///< (G·H, H)
  Variable bias_ih() const { return bias_ih_; }      ///< (G·H); undefined without bias
  Variable bias_hh() const { return bias_hh_; }      ///< (G·H); undefined without bias

 protected:
  /// For the cells: registers the G = `gates` weights; ValueError naming `name` for non-positive sizes.
  RNNCellBase(const RNNCellOptions& options, int64_t gates, const char* name);
  /// ShapeError unless x is (B, input_size) or (input_size).
  void check_input(const Variable& x) const;
  /// `s` (named `what`) when it has the state shape for x, zeros of that shape when undefined; ShapeError
  /// naming both shapes otherwise.
  Variable state_or_zeros(const Variable& s, const Variable& x, const char* what) const;

  RNNCellOptions options_;  ///< as constructed
  const char* name_;        ///< the cell's type, for errors
  Variable weight_ih_;      ///< (G·H, input_size)
  Variable weight_hh_;      ///< (G·H, H)
  Variable bias_ih_;        ///< (G·H); undefined without bias
  Variable bias_hh_;        ///< (G·H); undefined without bias
};

/// PyTorch's nn.GRUCell: one gru_step of x (B, input_size) or unbatched (input_size) from h (B, H) or (H)
/// (zeros when undefined) -> h' of h's shape. Parameters weight_ih (3H, input_size), weight_hh (3H, H),
/// bias_ih and bias_hh (3H), all from U(-1/√H, 1/√H) as PyTorch. ValueError for non-positive sizes;
/// ShapeError naming expected and actual shapes for a bad x or h.
class GRUCell : public RNNCellBase {
 public:
  /// A GRU cell; ValueError for non-positive sizes.
  explicit GRUCell(const RNNCellOptions& options) : RNNCellBase(options, 3, "GRUCell") {}
  /// h' from x (B, input_size) and h (B, H) (zeros when undefined); unbatched (input_size) and (H) too.
  Variable forward(const Variable& x, const Variable& h);
  Variable forward(const Variable& x) override { return step(x, Variable()); }
  std::string type_name() const override { return "GRUCell"; }

 private:
  // forward without the hooks (operator()(x) runs them after the unary forward).
  Variable step(const Variable& x, const Variable& h) const;
};

/// PyTorch's nn.LSTMCell: one lstm_step of x (B, input_size) or unbatched (input_size) from the state
/// {h, c}, each (B, H) or (H) (zeros when undefined) -> {h', c'}. Parameters weight_ih (4H, input_size),
/// weight_hh (4H, H), bias_ih and bias_hh (4H), all from U(-1/√H, 1/√H). forward(x) returns h' alone.
/// ValueError for non-positive sizes; ShapeError naming expected and actual shapes for a bad x, h or c.
class LSTMCell : public RNNCellBase {
 public:
  /// An LSTM cell; ValueError for non-positive sizes.
  explicit LSTMCell(const RNNCellOptions& options) : RNNCellBase(options, 4, "LSTMCell") {}
  /// (h', c') from x (B, input_size) and the state (zeros where undefined); unbatched too.
  LSTMState forward(const Variable& x, const LSTMState& state);
  Variable forward(const Variable& x) override { return step(x, LSTMState{}).h; }
  std::string type_name() const override { return "LSTMCell"; }

 private:
  LSTMState step(const Variable& x, const LSTMState& state) const;
};

}  // namespace tg::nn
