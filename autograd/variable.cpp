// Variable handles, recording of ops into the graph, and the thread-local grad and anomaly modes.
#include "autograd/variable.h"

#include <atomic>

#include "autograd/functions.h"
#include "core/error.h"
#include "core/format.h"
#include "core/ops.h"
#include "core/pool.h"

namespace tg {
namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_anomaly = false;
std::atomic<uint64_t> g_sequence{0};
}  // namespace

bool grad_mode_enabled() { return t_grad_enabled; }
bool is_recorded(std::initializer_list<std::reference_wrapper<const Variable>> inputs) {
  if (!t_grad_enabled) return false;
  for (const Variable& v : inputs)
    if (v.requires_grad()) return true;
  return false;
}
bool anomaly_mode_enabled() { return t_anomaly; }
GradModeGuard::GradModeGuard(bool enabled) : previous_(t_grad_enabled) { t_grad_enabled = enabled; }
GradModeGuard::~GradModeGuard() { t_grad_enabled = previous_; }
AnomalyGuard::AnomalyGuard(bool enabled) : previous_(t_anomaly) { t_anomaly = enabled; }
AnomalyGuard::~AnomalyGuard() { t_anomaly = previous_; }

Variable& Variable::requires_grad_(bool on) {
  // The name is only looked up for a non-leaf: check() formats its arguments eagerly, and a leaf has no grad_fn.
  check<ValueError>(is_leaf(), "requires_grad_: only leaves can change requires_grad (this is the output of {})",
                    is_leaf() ? "" : meta_->grad_fn->name);
  check<DTypeError>(!on || is_floating(value_.dtype()), "requires_grad_: only f32/f64 tensors can require grad, got {}",
                    value_.dtype());
  if (!meta_) meta_ = std::make_shared<AutogradMeta>();
  meta_->requires_grad = on;
  return *this;
}

void Variable::retain_grad() {
  check<ValueError>(requires_grad(), "retain_grad: the variable does not require grad");
  meta_->retains_grad = true;
}

Tensor Variable::grad() const { return meta_ && meta_->grad ? meta_->grad->value() : Tensor(); }
Variable Variable::grad_variable() const { return meta_ && meta_->grad ? *meta_->grad : Variable(); }

void Variable::set_grad(const Tensor& g) {
  check<ShapeError>(g.shape() == shape() && g.dtype() == dtype(), "set_grad: gradient {} {} for a variable {} {}",
                    g.shape(), g.dtype(), shape(), dtype());
  if (!meta_) meta_ = std::make_shared<AutogradMeta>();
  meta_->grad = std::make_shared<Variable>(g);
}

void Variable::zero_grad() {
  if (meta_) meta_->grad.reset();
}

Variable Variable::reshape(const Shape& s) const { return tg::reshape(*this, s); }
Variable Variable::flatten(int64_t start, int64_t end) const { return tg::flatten(*this, start, end); }
Variable Variable::transpose(int64_t d0, int64_t d1) const { return tg::transpose(*this, d0, d1); }
Variable Variable::permute(const std::vector<int64_t>& dims) const { return tg::permute(*this, dims); }
Variable Variable::mT() const { return tg::transpose(*this, -2, -1); }
Variable Variable::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  return tg::slice(*this, d, start, end, step);
}
Variable Variable::narrow(int64_t d, int64_t start, int64_t length) const {
  value_.narrow(d, start, length);  // validates the range with narrow's own message
  return tg::slice(*this, d, start, start + length);
}
Variable Variable::select(int64_t d, int64_t index) const { return tg::select(*this, d, index); }
Variable Variable::unsqueeze(int64_t d) const { return tg::unsqueeze(*this, d); }
Variable Variable::squeeze(int64_t d) const { return tg::squeeze(*this, d); }
Variable Variable::expand(const Shape& s) const { return tg::expand(*this, s); }

namespace {
// Both overloads of record: Inputs iterates as const Variable& (an initializer_list of references, or a vector).
template <class Inputs>
Variable record_inputs(const char* name, Tensor& value, const Inputs& inputs, BackwardFn& backward, bool keep_output) {
  if (t_anomaly)
    check<ValueError>(all_finite(value), "anomaly: forward of {} produced NaN or inf (output shape {})", name,
                      value.shape());
  bool needed = false;
  for (const Variable& v : inputs) needed |= v.requires_grad();
  if (!t_grad_enabled || !needed) return Variable(std::move(value));
  // Node and meta come from the pool (core/pool.h): an op makes one of each, and drops them at the next backward.
  auto node = std::allocate_shared<Node>(PoolAllocator<Node>());
  node->name = name;
  node->backward = std::move(backward);
  node->sequence = g_sequence++;
  node->inputs.reserve(inputs.size());  // one allocation, not one per doubling
  // Versions are kept only for a backward that captures something (it may read an input); add's, which
  // captures nothing, lets an input be written in place before backward, as PyTorch does.
  const bool saves = node->backward.captures();
  for (const Variable& v : inputs)
    node->inputs.push_back({v.requires_grad() ? v.meta() : nullptr, v.shape(), v.dtype(),
                            saves ? StorageVersion(v.value().storage()) : StorageVersion(),
                            v.value().version()});
  auto meta = std::allocate_shared<AutogradMeta>(PoolAllocator<AutogradMeta>());
  meta->requires_grad = true;
  meta->grad_fn = node;
  node->output = meta;
  if (keep_output) node->output_value = value, node->output_version = value.version();
  return Variable(std::move(value), std::move(meta));
}
}  // namespace

Variable record(const char* name, Tensor value, std::initializer_list<std::reference_wrapper<const Variable>> inputs,
                BackwardFn backward, bool keep_output) {
  return record_inputs(name, value, inputs, backward, keep_output);
}
Variable record(const char* name, Tensor value, const std::vector<Variable>& inputs, BackwardFn backward,
                bool keep_output) {
  return record_inputs(name, value, inputs, backward, keep_output);
}

}  // namespace tg
