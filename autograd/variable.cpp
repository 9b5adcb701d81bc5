// Variable handles and the thread-local grad and anomaly modes (recording itself is in node.cpp).
#include "autograd/variable.h"

#include <ostream>

#include "autograd/functions.h"
#include "autograd/node.h"
#include "core/error.h"
#include "core/format.h"
#include "core/ops.h"

namespace tg {
constinit thread_local bool detail::grad_enabled = true;
constinit thread_local bool detail::anomaly_enabled = false;

Variable& Variable::copy_(const Tensor& src) {
  check<ShapeError>(src.shape() == shape(), "Variable::copy_: shape of the source differs: {} vs {}", src.shape(),
                    shape());
  value_.copy_(src);
  return *this;
}

std::string to_string(const Variable& v) {
  std::string out = to_string(v.value());
  if (!v.defined()) return out;
  out.pop_back();  // the closing ')'
  if (auto node = v.grad_fn()) return out + fmt::format(", grad_fn=<{}>)", node->name);
  return out + (v.requires_grad() ? ", requires_grad=True)" : ")");
}

std::ostream& operator<<(std::ostream& os, const Variable& v) { return os << to_string(v); }
bool is_recorded(std::initializer_list<std::reference_wrapper<const Variable>> inputs) {
  if (!detail::grad_enabled) return false;
  for (const Variable& v : inputs)
    if (v.requires_grad()) return true;
  return false;
}
GradModeGuard::GradModeGuard(bool enabled) : previous_(detail::grad_enabled) { detail::grad_enabled = enabled; }
GradModeGuard::~GradModeGuard() { detail::grad_enabled = previous_; }
AnomalyGuard::AnomalyGuard(bool enabled) : previous_(detail::anomaly_enabled) { detail::anomaly_enabled = enabled; }
AnomalyGuard::~AnomalyGuard() { detail::anomaly_enabled = previous_; }

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
  if (meta_->grad_fn) meta_->grad_fn->output_watched = true;
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

int Variable::register_hook(GradHook hook) {
  check<ValueError>(requires_grad(), "register_hook: the variable (shape {}) does not require grad", shape());
  check<ValueError>(bool(hook), "register_hook: empty hook");
  meta_->hooks.emplace_back(meta_->next_hook, std::move(hook));
  if (meta_->grad_fn) meta_->grad_fn->output_watched = true;
  return meta_->next_hook++;
}

void Variable::remove_hook(int handle) {
  const bool removed = meta_ && std::erase_if(meta_->hooks, [&](const auto& h) { return h.first == handle; }) > 0;
  check<ValueError>(removed, "remove_hook: no hook with handle {} on this variable", handle);
}

int Variable::register_post_accumulate_grad_hook(PostAccumulateGradHook hook) {
  check<ValueError>(requires_grad() && is_leaf(), "register_post_accumulate_grad_hook: the variable (shape {}) is not "
                    "a leaf that requires grad", shape());
  check<ValueError>(bool(hook), "register_post_accumulate_grad_hook: empty hook");
  meta_->post_accumulate_hooks.emplace_back(meta_->next_hook, std::move(hook));
  return meta_->next_hook++;
}

void Variable::remove_post_accumulate_grad_hook(int handle) {
  const bool removed =
      meta_ && std::erase_if(meta_->post_accumulate_hooks, [&](const auto& h) { return h.first == handle; }) > 0;
  check<ValueError>(removed, "remove_post_accumulate_grad_hook: no hook with handle {} on this variable", handle);
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

}  // namespace tg
