#pragma once
// Variable: a tensor value plus the autograd record that ties it into the dynamic graph. The graph is
// built as ops run (record) and walked backwards by the engine (engine.cpp). Nodes point at their inputs'
// records, never at values, so an intermediate's value is freed as soon as nothing captured it.
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/small_vector.h"
#include "core/tensor.h"

namespace tg {

struct Node;
class Variable;

/// A hook on a variable's gradient (Variable::register_hook): returns a replacement, or an undefined
/// Variable to keep the gradient as it is.
using GradHook = std::function<Variable(const Variable& grad)>;
/// Called once per backward when a leaf's gradient is final (Variable::register_post_accumulate_grad_hook),
/// with the leaf's accumulated grad() (undefined when it has none).
using PostAccumulateGradHook = std::function<void(const Tensor& grad)>;

/// Autograd state shared by every handle of one Variable.
struct AutogradMeta {
  std::shared_ptr<Variable> grad;  ///< accumulated gradient (leaves, or non-leaves that retain_grad)
  std::shared_ptr<Node> grad_fn;   ///< the op that made this value; null for leaves
  bool requires_grad = false;  ///< gradients flow to it (a leaf that accumulates one, or an op's output on such a path)
  bool retains_grad = false;  ///< retain_grad was called: a non-leaf keeps its gradient
  std::vector<std::pair<int, GradHook>> hooks;  ///< register_hook's, by handle, in registration order
  std::vector<std::pair<int, PostAccumulateGradHook>> post_accumulate_hooks;  ///< by handle, in order
  int next_hook = 0;  ///< the handle the next hook gets
};

/// Options for Variable::backward (PyTorch's names).
struct BackwardOptions {
  bool retain_graph = false;  ///< keep the graph for another backward
  bool create_graph = false;  ///< record the backward itself, so gradients can be differentiated again
};

/// A tensor in the dynamic graph. Copies are cheap handles sharing value and autograd record.
class Variable {
 public:
  Variable() = default;
  /// Wraps a value; a leaf that accumulates a gradient when `requires_grad`. Inline: every unrecorded op
  /// (all of an ordinary backward's) returns its result through it.
  explicit Variable(Tensor value, bool requires_grad = false) : value_(std::move(value)) {
    if (requires_grad) requires_grad_(true);
  }
  /// A handle on an existing autograd record (ops and the engine make these).
  Variable(Tensor value, std::shared_ptr<AutogradMeta> meta) : value_(std::move(value)), meta_(std::move(meta)) {}

  const Tensor& value() const { return value_; }  ///< the tensor it holds
  bool defined() const { return value_.defined(); }  ///< false for a default-constructed Variable
  explicit operator bool() const { return defined(); }  ///< defined()
  const Shape& shape() const { return value_.shape(); }  ///< the value's shape
  DType dtype() const { return value_.dtype(); }  ///< the value's dtype
  int64_t dim() const { return value_.dim(); }  ///< the value's number of dims
  int64_t size(int64_t d) const { return value_.size(d); }  ///< the size of dim d (negative counts from the end); IndexError when out of range
  int64_t numel() const { return value_.numel(); }  ///< the value's number of elements
  double item() const { return value_.item(); }  ///< the value of a one-element variable; ValueError otherwise

  bool requires_grad() const { return meta_ && meta_->requires_grad; }  ///< whether a gradient flows to it
  /// Turns gradient tracking on or off; only for leaves (ValueError on an op's output).
  Variable& requires_grad_(bool on = true);
  bool is_leaf() const { return !meta_ || !meta_->grad_fn; }  ///< made by no recorded op (user-created, or under NoGradGuard)
  /// Asks a non-leaf to keep its gradient in grad() after backward.
  void retain_grad();
  /// The accumulated gradient (undefined before the first backward that reaches this variable).
  Tensor grad() const;
  /// The accumulated gradient as a Variable: differentiable when it was made with create_graph.
  Variable grad_variable() const;
  /// Sets the gradient (e.g. to feed an optimizer); g must have this variable's shape and dtype.
  void set_grad(const Tensor& g);
  /// Drops the accumulated gradient.
  void zero_grad();
  /// Calls hook(grad) whenever a backward (or grad()) computes this variable's gradient, summed over all
  /// its uses, as PyTorch's Tensor.register_hook: for a leaf before it is accumulated into grad(), for an
  /// op's output before it flows into that op's backward (and before retain_grad keeps it). A defined
  /// return value replaces the gradient for what follows, later hooks included; it must keep the shape and
  /// dtype (ShapeError naming both). Returns a handle for remove_hook. ValueError when this variable does
  /// not require grad.
  int register_hook(GradHook hook);
  /// ValueError for a handle that is not registered on this variable.
  void remove_hook(int handle);
  /// On a leaf: calls hook(grad()) in each backward as soon as no node still to run can add to this leaf's
  /// gradient, i.e. right after its last use in the graph is differentiated, not at the end of the walk (as
  /// PyTorch's register_post_accumulate_grad_hook; DistributedDataParallel starts its allreduce there). Not
  /// called when the backward does not reach the leaf, nor by grad(). Returns a handle for
  /// remove_post_accumulate_grad_hook. ValueError on a non-leaf or a leaf that does not require grad.
  int register_post_accumulate_grad_hook(PostAccumulateGradHook hook);
  /// ValueError for a handle that is not registered on this variable.
  void remove_post_accumulate_grad_hook(int handle);
  /// Copies src into the value in place, unrecorded (PyTorch's `with torch.no_grad(): p.copy_(src)`): how user
  /// code sets a layer's weights, e.g. dense.weight().copy_(w); every holder of this Variable (an optimizer)
  /// sees the new values. src is converted to this dtype, as PyTorch's copy_ (ValueError, as Tensor::copy_, for
  /// a NaN, inf or out-of-range float into i64); ShapeError naming both unless src has this shape.
  Variable& copy_(const Tensor& src);
  /// The same value, cut from the graph (no gradient flows through it).
  Variable detach() const { return Variable(value_); }
  const std::shared_ptr<AutogradMeta>& meta() const { return meta_; }  ///< the autograd record shared by every handle (null when no gradient was ever asked for)
  std::shared_ptr<Node> grad_fn() const { return meta_ ? meta_->grad_fn : nullptr; }  ///< the op that made it; null for leaves

  /// Reverse-mode differentiation from this scalar; accumulates d(this)/d(leaf) into every leaf's grad().
  /// Throws ValueError for a non-scalar (pass grad_output), or when the graph was already freed.
  void backward(const BackwardOptions& options = {}) const;
  /// Backward with an explicit output gradient of this variable's shape.
  void backward(const Tensor& grad_output, const BackwardOptions& options = {}) const;

  /// @{
  /// View shortcuts: x.reshape(s) is reshape(x, s), and so on (the differentiable functions of functions.h).
  Variable reshape(const Shape& shape) const;
  Variable view(const Shape& shape) const { return reshape(shape); }
  Variable flatten(int64_t start = 0, int64_t end = -1) const;
  Variable transpose(int64_t d0, int64_t d1) const;
  Variable permute(const std::vector<int64_t>& dims) const;
  Variable mT() const;
  Variable slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Variable narrow(int64_t dim, int64_t start, int64_t length) const;
  Variable select(int64_t dim, int64_t index) const;
  Variable unsqueeze(int64_t dim) const;
  Variable squeeze(int64_t dim) const;
  Variable expand(const Shape& shape) const;
  /// @}

 private:
  Tensor value_;
  std::shared_ptr<AutogradMeta> meta_;  // null for constants that never required grad
};

/// The value as tg::to_string(Tensor) prints it, then requires_grad=True for a leaf that needs a gradient or
/// grad_fn=<op> for an op's output, as PyTorch prints tensors: "tensor([1., 2.], ..., grad_fn=<mul>)".
std::string to_string(const Variable& v);
/// Writes to_string(v), as fmt::format("{}", v) does.
std::ostream& operator<<(std::ostream& os, const Variable& v);

namespace detail {
/// This thread's grad mode and anomaly mode (GradModeGuard, AnomalyGuard). Read inline: every op reads both.
extern constinit thread_local bool grad_enabled;
extern constinit thread_local bool anomaly_enabled;  ///< see AnomalyGuard
}  // namespace detail

/// True while gradients are being recorded on this thread.
inline bool grad_mode_enabled() { return detail::grad_enabled; }

/// RAII: sets whether ops are recorded on this thread, restoring the previous mode on exit.
class GradModeGuard {
 public:
  /// Records ops (enabled) or not until destroyed.
  explicit GradModeGuard(bool enabled);
  ~GradModeGuard();
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};
/// RAII: no graph is recorded on this thread while it lives (evaluation, optimizer steps).
class NoGradGuard : public GradModeGuard {
 public:
  NoGradGuard() : GradModeGuard(false) {}
};

/// RAII: while it lives, every op checks its output and its backward gradients for NaN/inf and throws
/// ValueError naming the op and its input shapes. AnomalyGuard(false) suspends the checks until it ends.
class AnomalyGuard {
 public:
  /// Turns the checks on (or off) until destroyed.
  explicit AnomalyGuard(bool enabled = true);
  ~AnomalyGuard();
  AnomalyGuard(const AnomalyGuard&) = delete;
  AnomalyGuard& operator=(const AnomalyGuard&) = delete;

 private:
  bool previous_;
};
/// True while an AnomalyGuard checks ops on this thread.
inline bool anomaly_mode_enabled() { return detail::anomaly_enabled; }

/// Functional gradients (torch.autograd.grad): d(sum of outputs·grad_outputs)/d(inputs), leaving every
/// grad() untouched. grad_outputs may be empty for scalar outputs. An input the outputs do not depend on
/// throws ValueError unless `allow_unused` (then its gradient is undefined).
struct GradOptions {
  bool retain_graph = false;  ///< keep the graph for another backward
  bool create_graph = false;  ///< record the backward itself, so the gradients can be differentiated again
  bool allow_unused = false;  ///< an input the outputs do not depend on gets an undefined gradient instead of an error
};
std::vector<Variable> grad(const std::vector<Variable>& outputs, const std::vector<Variable>& inputs,
                           const std::vector<Tensor>& grad_outputs = {}, const GradOptions& options = {});

/// The graph behind `root` in Graphviz DOT: one box per op (name, output shape), one ellipse per leaf
/// (shape, requires_grad), labelled with its name when `names` holds it (e.g. model.named_parameters()),
/// else "leaf". For debugging: `dot -Tsvg graph.dot`.
std::string to_dot(const Variable& root, const std::vector<std::pair<std::string, Variable>>& names = {});

}  // namespace tg

/// Formats a Variable as tg::to_string does.
template <>
struct fmt::formatter<tg::Variable> : fmt::formatter<std::string_view> {
  auto format(const tg::Variable& v, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(tg::to_string(v), ctx);
  }
};
