#pragma once
// Multi-layer, optionally bidirectional GRU and LSTM with PyTorch's parameters, shapes and semantics,
// variable-length sequences included (the equivalent of pack_padded_sequence / pad_packed_sequence).
#include <initializer_list>
#include <vector>

#include "nn/rnn_cell.h"

namespace tg::nn {

/// The options of GRU and LSTM, PyTorch's names and defaults.
struct RNNOptions {
  int64_t input_size = 0;      ///< the width of x
  int64_t hidden_size = 0;     ///< H
  int64_t num_layers = 1;      ///< stacked layers, each on the previous one's output
  bool bias = true;            ///< bias_ih_l{k} and bias_hh_l{k}
  bool batch_first = false;    ///< input and output (B, T, ·) when true, (T, B, ·) when false (PyTorch's default)
  double dropout = 0.0;        ///< on each layer's output except the last, in training only; in [0, 1]
  bool bidirectional = false;  ///< a second direction over the reversed sequence; outputs concatenated (D = 2)
  int64_t proj_size = 0;       ///< LSTM only: h projected to proj_size < H by weight_hr_l{k} (0 = none)
  DType dtype = f32;           ///< of every parameter
};
using GRUOptions = RNNOptions;
using LSTMOptions = RNNOptions;

/// Per-sequence lengths, as pack_padded_sequence takes them: an i64 tensor (B) or a list, in any order.
class SequenceLengths {
 public:
  SequenceLengths() = default;
  /// Lengths given as a list: `{5, 3, 2}`.
  SequenceLengths(std::vector<int64_t> values) : values_(std::move(values)), defined_(true) {}  // NOLINT
  /// Lengths given inline.
  SequenceLengths(std::initializer_list<int64_t> values) : SequenceLengths(std::vector<int64_t>(values)) {}
  /// An undefined tensor gives no lengths; DTypeError unless i64, ShapeError unless 1-D.
  SequenceLengths(const Tensor& lengths);  // NOLINT: implicit, so RNNCall{.lengths = t} reads as PyTorch
  bool defined() const { return defined_; }                       ///< whether lengths were given
  const std::vector<int64_t>& values() const { return values_; }  ///< the lengths, one per sequence

 private:
  std::vector<int64_t> values_;
  bool defined_ = false;
};

/// The optional arguments of one GRU/LSTM call. D = 2 when bidirectional, else 1; H_out = proj_size if
/// set, else H. An unbatched input (T, input_size) takes states without their B dim.
struct RNNCall {
  Variable h0;  ///< (num_layers·D, B, H_out), layer-major with the reverse direction second; zeros if undefined
  Variable c0;  ///< LSTM only: (num_layers·D, B, H); zeros if undefined
  /// Sequence b holds steps 0 .. lengths[b]-1, each length in [1, T]; later steps are padding.
  SequenceLengths lengths;
  /// (B, T) bool, true = padding (the key_padding_mask convention): that step is skipped. An alternative
  /// to lengths (not both); a right-padded mask gives exactly what the lengths would.
  Tensor padding_mask;
};

/// What GRU and LSTM return.
struct RNNOutput {
  Variable output;  ///< (B, T, D·H_out) with batch_first, else (T, B, D·H_out); (T, D·H_out) unbatched
  Variable h_n;     ///< (num_layers·D, B, H_out): each layer's and direction's last state
  Variable c_n;     ///< LSTM: (num_layers·D, B, H); undefined for GRU
};

/// What GRU and LSTM share: the parameters of every layer and direction, registered with PyTorch's names
/// and order (weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, weight_hr_l{k}, each with the
/// suffix _reverse for the backward direction), all drawn from U(-1/√H, 1/√H), so a PyTorch state_dict
/// loads; and the run over layers, directions and time.
///
/// The input's projection x·W_ihᵀ + b_ih is one GEMM per layer and direction over all T steps; each step
/// then multiplies only h by W_hhᵀ. Layer k > 0 takes layer k-1's output (both directions concatenated,
/// after dropout in training). The reverse direction runs from step T-1 down to 0, and its output at
/// step t sits beside the forward direction's at t.
///
/// Variable lengths (lengths or padding_mask): a skipped (padded) step leaves the state unchanged and
/// outputs zeros. So h_n is each sequence's state after its last valid step, the reverse direction
/// starts from h0 at each sequence's own last valid step, and output and h_n equal PyTorch's
/// pad_packed_sequence(rnn(pack_padded_sequence(x, lengths, enforce_sorted=False)), total_length=T).
/// A padding_mask may also skip steps inside a sequence, or all of them (h_n = h0, output zeros).
class RNNBase : public Layer {
 public:
  /// x: (B, T, input_size) with batch_first, (T, B, input_size) without, or (T, input_size) unbatched.
  /// ShapeError for an input of another rank or input_size (naming expected and actual), T = 0, an h0/c0
  /// or padding_mask of the wrong shape (naming expected and actual), lengths not of B entries, lengths or
  /// padding_mask with an unbatched input; ValueError for lengths and padding_mask together, a length
  /// outside [1, T] (naming the batch index and value), c0 given to a GRU; DTypeError for a mask that is
  /// not bool, or inputs not of the parameters' dtype.
  RNNOutput forward(const Variable& x, const RNNCall& call);
  /// The output alone, with zero initial states and no padding.
  Variable forward(const Variable& x) override { return run(x, {}).output; }
  const RNNOptions& options() const { return options_; }  ///< as constructed

 protected:
  /// For GRU and LSTM: registers the weights of G = `gates` gates per layer and direction; ValueError naming
  /// `name` as the subclasses say.
  RNNBase(const RNNOptions& options, int64_t gates, const char* name);
  /// One layer and direction's parameters.
  struct Weights {
    Variable w_ih;  ///< weight_ih_l{k} (G·H, in_k)
    Variable w_hh;  ///< weight_hh_l{k} (G·H, H_out)
    Variable b_ih;  ///< bias_ih_l{k} (G·H); undefined without bias
    Variable b_hh;  ///< bias_hh_l{k} (G·H); undefined without bias
    Variable w_hr;  ///< LSTM with proj_size: weight_hr_l{k} (proj_size, H); else undefined
  };

 private:
  // One step of the recurrence from the input's projection gx (B, G·H); GRU ignores c.
  virtual LSTMState step(const Variable& gx, const LSTMState& state, const Weights& w) const = 0;
  RNNOutput run(const Variable& x, const RNNCall& call) const;
  // One layer and direction over the time-major or batch-major input; the outputs stacked along the time
  // dim, and the last state.
  std::pair<Variable, LSTMState> run_direction(const Variable& input, const Weights& w, LSTMState state,
                                                bool reverse, const std::vector<Tensor>& skipped) const;
  void check_input(const Variable& x) const;
  // The initial state `s` (named `what`) checked against `want`, or zeros of that shape.
  Variable initial_state(const Variable& s, const Shape& want, DType dtype, const char* what) const;
  // Per step, the (B, 1) bool mask of sequences that skip it, or undefined where none does; empty when
  // nothing is padded.
  std::vector<Tensor> skipped_steps(const RNNCall& call, int64_t B, int64_t T) const;

  RNNOptions options_;
  const char* name_;
  bool lstm_;  // a cell state c beside h
  int64_t directions_ = 1;
  std::vector<Weights> weights_;  // layer k, direction d at k·D + d
};

/// PyTorch's nn.GRU: gru_step (Cho et al. 2014; see rnn_cell.h for PyTorch's equations) over layers,
/// directions and time. weight_ih_l{k} (3H, in_k), weight_hh_l{k} (3H, H), biases (3H), rows r, z, n.
/// ValueError for non-positive sizes or num_layers, dropout outside [0, 1], or proj_size set.
class GRU : public RNNBase {
 public:
  /// A GRU; ValueError as above.
  explicit GRU(const RNNOptions& options) : RNNBase(options, 3, "GRU") {}
  std::string type_name() const override { return "GRU"; }

 private:
  LSTMState step(const Variable& gx, const LSTMState& state, const Weights& w) const override;
};

/// PyTorch's nn.LSTM: lstm_step (Hochreiter & Schmidhuber 1997, Gers et al. 2000; equations in
/// rnn_cell.h) over layers, directions and time. weight_ih_l{k} (4H, in_k), weight_hh_l{k} (4H, H_out),
/// biases (4H), rows i, f, g, o; with proj_size, weight_hr_l{k} (proj_size, H) (Sak et al. 2014).
/// ValueError for non-positive sizes or num_layers, dropout outside [0, 1], or proj_size not in [0, H).
class LSTM : public RNNBase {
 public:
  /// An LSTM; ValueError as above.
  explicit LSTM(const RNNOptions& options) : RNNBase(options, 4, "LSTM") {}
  std::string type_name() const override { return "LSTM"; }

 private:
  LSTMState step(const Variable& gx, const LSTMState& state, const Weights& w) const override;
};

}  // namespace tg::nn
