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

/// The base of every model part (PyTorch's nn.Module, Keras's Layer): named parameters, buffers and
/// sub-layers, train/eval mode, hooks, state_dict, save and load. A subclass registers its members in its
/// constructor (or in build) and overrides forward; see docs/tutorial.md.
class Layer {
 public:
  Layer() = default;
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;  // registered members are referred to by address: no copies, no moves
  Layer& operator=(const Layer&) = delete;

  /// The computation of a unary layer; layers with other signatures (attention) define their own
  /// overloads and leave this one throwing Error.
  virtual Variable forward(const Variable& x);
  /// ensure_built(x.shape()), forward(x), then the forward hooks; with backward hooks, the input and output
  /// are wrapped in identity ops whose backward runs them.
  Variable operator()(const Variable& x);

  /// Runs build(input_shape) unless it has run: operator()(x) calls it before the first forward, and layers
  /// with other forward signatures call it themselves. Calling it on an example shape makes the parameters
  /// of a layer that deferred them without a dry run.
  void ensure_built(const Shape& input_shape);
  /// False while this layer waits for the first input to make parameters (see defer_build).
  bool is_built() const { return built_ || !deferred_; }

  /// Every parameter of this layer and its sub-layers, in registration order. ValueError naming the layer
  /// when one of them is not built yet: an optimizer made from this list would miss the parameters still to
  /// come, so run the model once on an example input (a dry run, e.g. under NoGradGuard) first.
  std::vector<Variable> parameters() const;
  /// Parameters with dotted paths ("linear1.weight"); ValueError as parameters() before the build, and so
  /// for everything built on it (state_dict, save, load, summary, num_parameters).
  std::vector<std::pair<std::string, Variable>> named_parameters() const;
  /// Buffers (state that is saved but not trained) with dotted paths.
  std::vector<std::pair<std::string, Tensor>> named_buffers() const;
  /// Direct sub-layers by name.
  const std::vector<std::pair<std::string, Layer*>>& named_children() const { return children_; }
  /// Total number of parameter elements.
  int64_t num_parameters() const;

  /// Training mode (dropout active) for this layer and all sub-layers.
  void train(bool on = true);
  void eval() { train(false); }                   ///< train(false): eval mode for this layer and all sub-layers
  bool is_training() const { return training_; }  ///< whether in training mode (the default)
  /// Drops the gradient of every parameter.
  void zero_grad();

  /// Parameters and buffers by dotted name; the tensors share storage with the layer.
  TensorMap state_dict() const;
  /// Copies values in by name, into the existing storage (Variables held elsewhere, e.g. by an optimizer,
  /// see the new values). Throws ValueError listing missing and unexpected keys (when strict) and
  /// ShapeError/DTypeError naming a key and both shapes/dtypes; every key is checked before the first
  /// copy, so on any error nothing is changed. Non-strict loading skips keys either side lacks.
  void load_state_dict(const TensorMap& state, bool strict = true);
  /// state_dict() to a safetensors file (written atomically); metadata {"format": "tensorgrad",
  /// "layer": type_name()}. PyTorch reads it with safetensors.torch.load_file.
  void save(const std::string& path) const;
  /// load_state_dict(strict) from a safetensors file (ours or PyTorch's, by state_dict names); throws
  /// ValueError for a corrupt or truncated file, and as load_state_dict for foreign keys, shapes, dtypes.
  void load(const std::string& path);

  /// Called after every operator() with (layer, input, output), in registration order; returns a handle
  /// for remove_forward_hook (ValueError for a handle that is not registered).
  using ForwardHook = std::function<void(Layer&, const Variable& input, const Variable& output)>;
  /// Adds `hook` (see ForwardHook); returns its handle.
  int register_forward_hook(ForwardHook hook);
  /// Removes the forward hook of `handle`; ValueError for a handle that is not registered.
  void remove_forward_hook(int handle);
  /// PyTorch's register_full_backward_hook for calls through operator()(x): during backward, once the
  /// gradient of the layer's input is known, called with (layer, grad_input = dL/dx, grad_output = dL/dy),
  /// in registration order. A defined return value replaces grad_input (same shape, else ShapeError) for the
  /// later hooks and for what flows back into x. When x needs no gradient the hooks get an undefined
  /// grad_input, as soon as grad_output is known, and their return value is ignored. The layer must outlive
  /// the backward of every graph it recorded a hook into. Returns a handle for remove_backward_hook.
  using BackwardHook = std::function<Variable(Layer&, const Variable& grad_input, const Variable& grad_output)>;
  /// Adds `hook` (see BackwardHook); returns its handle.
  int register_backward_hook(BackwardHook hook);
  /// Removes the backward hook of `handle`; ValueError for a handle that is not registered.
  void remove_backward_hook(int handle);

  /// A Keras-like table: one row per layer ("name (Type)", indented by depth) with the parameter count
  /// of its subtree, then the total and trainable counts.
  std::string summary() const;
  /// The class name shown by summary() ("Dense", "MultiHeadAttention", ...).
  virtual std::string type_name() const { return "Layer"; }

 protected:
  /// Keras's Layer.build (PyTorch's Lazy* modules): makes the parameters whose shapes depend on the input's,
  /// given the shape of the first input. Runs once, through ensure_built; the default makes none.
  virtual void build(const Shape& input_shape);
  /// Declares, in the constructor, that build() makes parameters: until it has run, is_built() is false and
  /// parameters() throws instead of returning a partial list.
  void defer_build() { deferred_ = true; }
  /// Adds a trainable tensor (f32/f64); returns the Variable to keep as a member (it shares value and
  /// gradient). Names here and below: non-empty, no '.', unique within the layer, else ValueError.
  Variable register_parameter(const std::string& name, Tensor value, bool requires_grad = true);
  /// Adds saved, untrained state (e.g. fixed positional encodings).
  Tensor register_buffer(const std::string& name, Tensor value);
  /// Adds a sub-layer (a member of the subclass) under `name`.
  void register_layer(const std::string& name, Layer& child);
  /// Forgets every sub-layer, for containers that re-register theirs after an insertion or a replacement.
  void clear_layers() { children_.clear(); }
  /// Runs the forward hooks; layers with their own forward signatures call it themselves.
  void run_forward_hooks(const Variable& input, const Variable& output);
  /// Whether a forward hook is registered (a fused forward falls back to the ops whose input hooks see).
  bool has_forward_hooks() const { return !hooks_.empty(); }

 private:
  // ValueError unless `name` is non-empty, has no '.', and is not taken by a parameter, buffer or child.
  void check_new_name(const std::string& name, const char* what) const;
  // operator() with backward hooks: identity ops around forward(x) that capture grad_output and run the hooks.
  Variable call_with_backward_hooks(const Variable& x);
  // The backward hooks on (grad_input, grad_output), each one's replacement passed on; the final grad_input.
  Variable run_backward_hooks(Variable grad_input, const Variable& grad_output);
  // Calls fn(prefix, layer) on this layer (prefix "") and, depth first, on every sub-layer ("a.", "a.b.").
  void visit(const std::string& prefix, const std::function<void(const std::string&, const Layer&)>& fn) const;

  std::vector<std::pair<std::string, Variable>> parameters_;
  std::vector<std::pair<std::string, Tensor>> buffers_;
  std::vector<std::pair<std::string, Layer*>> children_;
  std::vector<std::pair<int, ForwardHook>> hooks_;
  std::vector<std::pair<int, BackwardHook>> backward_hooks_;
  int next_hook_ = 0;  // handles of both kinds
  bool training_ = true;
  bool built_ = false;     // build() has run
  bool deferred_ = false;  // build() makes parameters (defer_build)
};

}  // namespace tg::nn
