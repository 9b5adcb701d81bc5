#pragma once
// Layer: the base of every model part. A layer owns named parameters and buffers and refers to named
// sub-layers (members of the subclass), so that parameters have dotted paths such as
// "encoder.layers.0.self_attn.out_proj.weight", as in PyTorch's state_dict.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "autograd/functions.h"
#include "core/safetensors.h"

namespace tg::nn {

class Layer {
 public:
  Layer() = default;
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;  // registered members are referred to by address: no copies, no moves
  Layer& operator=(const Layer&) = delete;

  /// The computation of a unary layer; layers with other signatures (attention) define their own
  /// overloads and leave this one throwing Error.
  virtual Variable forward(const Variable& x);
  /// forward(x), then the forward hooks.
  Variable operator()(const Variable& x);

  /// Every parameter of this layer and its sub-layers, in registration order.
  std::vector<Variable> parameters() const;
  /// Parameters with dotted paths ("linear1.weight").
  std::vector<std::pair<std::string, Variable>> named_parameters() const;
  /// Buffers (state that is saved but not trained) with dotted paths.
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  /// Direct sub-layers by name.
  const std::vector<std::pair<std::string, Layer*>>& named_children() const { return children_; }
  /// Total number of parameter elements.
  int64_t num_parameters() const;

  /// Training mode (dropout active) for this layer and all sub-layers.
  void train(bool on = true);
  void eval() { train(false); }
  bool is_training() const { return training_; }
  /// Drops the gradient of every parameter.
  void zero_grad();

  /// Parameters and buffers by dotted name; the tensors share storage with the layer.
  TensorMap state_dict() const;
  /// Copies values in by name. Throws ValueError naming missing or unexpected keys (when strict) and
  /// ShapeError/DTypeError naming a key whose shape/dtype differs; on any error nothing is changed.
  void load_state_dict(const TensorMap& state, bool strict = true);
  /// state_dict() to a safetensors file (written atomically); metadata records the layer type.
  void save(const std::string& path) const;
  /// load_state_dict(strict) from a safetensors file; throws ValueError for a corrupt or foreign file.
  void load(const std::string& path);

  /// Called after every forward with (layer, input, output); returns a handle for remove_forward_hook.
  using ForwardHook = std::function<void(Layer&, const Variable& input, const Variable& output)>;
  int register_forward_hook(ForwardHook hook);
  void remove_forward_hook(int handle);

  /// A readable tree of the layer and its sub-layers with parameter counts.
  std::string summary() const;
  /// The class name shown by summary() ("Dense", "MultiHeadAttention", ...).
  virtual std::string type_name() const { return "Layer"; }

 protected:
  /// Adds a trainable tensor; returns the Variable to keep as a member (it shares value and gradient).
  Variable register_parameter(const std::string& name, Tensor value, bool requires_grad = true);
  /// Adds saved, untrained state (e.g. fixed positional encodings).
  Tensor register_buffer(const std::string& name, Tensor value);
  /// Adds a sub-layer (a member of the subclass) under `name`.
  void register_layer(const std::string& name, Layer& child);
  /// Runs the forward hooks; layers with their own forward signatures call it themselves.
  void run_forward_hooks(const Variable& input, const Variable& output);

 private:
  std::vector<std::pair<std::string, Variable>> parameters_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, Layer*>> children_;
  std::vector<std::pair<int, ForwardHook>> hooks_;
  int next_hook_ = 0;
  bool training_ = true;
};

}  // namespace tg::nn
