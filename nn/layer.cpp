// Layer: registration of parameters, buffers and sub-layers; the recursive walks that give them dotted
// names; train/eval; state_dict and its validated, all-or-nothing loading; safetensors save/load; forward
// and backward hooks; the summary table.
#include "nn/layer.h"

#include <algorithm>
#include <memory>
#include <set>

#include "autograd/node.h"

namespace tg::nn {

Variable Layer::forward(const Variable&) {
  throw Error(fmt::format("{}: has no unary forward(Variable); call its own forward overload", type_name()));
}

void Layer::build(const Shape&) {}

void Layer::ensure_built(const Shape& input_shape) {
  if (built_) return;
  build(input_shape);
  built_ = true;
}

Variable Layer::operator()(const Variable& x) {
  ensure_built(x.shape());
  if (!backward_hooks_.empty() && grad_mode_enabled()) return call_with_backward_hooks(x);
  Variable y = forward(x);
  run_forward_hooks(x, y);
  return y;
}

// ---- registration ----

void Layer::check_new_name(const std::string& name, const char* what) const {
  check<ValueError>(!name.empty() && name.find('.') == std::string::npos,
                    "{}::{}: name '{}' must be non-empty and contain no '.'", type_name(), what, name);
  auto taken = [&](const auto& entries) {
    return std::any_of(entries.begin(), entries.end(), [&](const auto& e) { return e.first == name; });
  };
  check<ValueError>(!taken(parameters_) && !taken(buffers_) && !taken(children_),
                    "{}::{}: name '{}' is already registered", type_name(), what, name);
}

Variable Layer::register_parameter(const std::string& name, Tensor value, bool requires_grad) {
  check_new_name(name, "register_parameter");
  check<ValueError>(value.defined(), "{}::register_parameter: '{}' is an undefined tensor", type_name(), name);
  check<DTypeError>(is_floating(value.dtype()), "{}::register_parameter: '{}' must be f32 or f64, got {}", type_name(),
                    name, value.dtype());
  Variable v(std::move(value), requires_grad);
  parameters_.emplace_back(name, v);
  return v;
}

Tensor Layer::register_buffer(const std::string& name, Tensor value) {
  check_new_name(name, "register_buffer");
  check<ValueError>(value.defined(), "{}::register_buffer: '{}' is an undefined tensor", type_name(), name);
  buffers_.emplace_back(name, value);
  return value;
}

void Layer::register_layer(const std::string& name, Layer& child) {
  check_new_name(name, "register_layer");
  check<ValueError>(&child != this, "{}::register_layer: '{}' is the layer itself", type_name(), name);
  children_.emplace_back(name, &child);
}

// ---- recursive walks ----

void Layer::visit(const std::string& prefix, const std::function<void(const std::string&, const Layer&)>& fn) const {
  fn(prefix, *this);
  for (const auto& [name, child] : children_) child->visit(prefix + name + ".", fn);
}

std::vector<Variable> Layer::parameters() const {
  std::vector<Variable> out;
  for (auto& [name, p] : named_parameters()) out.push_back(p);
  return out;
}

std::vector<std::pair<std::string, Variable>> Layer::named_parameters() const {
  std::vector<std::pair<std::string, Variable>> out;
  visit("", [&](const std::string& prefix, const Layer& l) {
    const std::string which =
        prefix.empty() ? "" : fmt::format(" the {} '{}'", l.type_name(), prefix.substr(0, prefix.size() - 1));
    check<ValueError>(l.is_built(),
                      "{}:{} is not built yet: it makes its parameters on its first input; run the model once on an "
                      "example input (a dry run) before building an optimizer, saving or loading",
                      type_name(), which);
    for (const auto& [name, p] : l.parameters_) out.emplace_back(prefix + name, p);
  });
  return out;
}

std::vector<std::pair<std::string, Tensor>> Layer::named_buffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  visit("", [&](const std::string& prefix, const Layer& l) {
    for (const auto& [name, b] : l.buffers_) out.emplace_back(prefix + name, b);
  });
  return out;
}

int64_t Layer::num_parameters() const {
  int64_t n = 0;
  for (const Variable& p : parameters()) n += p.numel();
  return n;
}

void Layer::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Layer::zero_grad() {
  for (Variable& p : parameters()) p.zero_grad();
}

// ---- state ----

TensorMap Layer::state_dict() const {
  TensorMap out;
  for (const auto& [name, p] : named_parameters()) out.emplace(name, p.value());
  for (const auto& [name, b] : named_buffers()) out.emplace(name, b);
  return out;
}

namespace {

std::string join_keys(const std::vector<std::string>& keys) { return fmt::format("{}", fmt::join(keys, ", ")); }

// ValueError listing the keys one side has and the other lacks (when strict).
void check_keys(const TensorMap& own, const TensorMap& state, bool strict, const std::string& type) {
  std::vector<std::string> missing, unexpected;
  for (const auto& [k, t] : own)
    if (!state.count(k)) missing.push_back(k);
  for (const auto& [k, t] : state)
    if (!own.count(k)) unexpected.push_back(k);
  if (!strict || (missing.empty() && unexpected.empty())) return;
  std::string what;
  if (!missing.empty()) what += fmt::format("missing keys [{}]", join_keys(missing));
  if (!unexpected.empty())
    what += fmt::format("{}unexpected keys [{}]", what.empty() ? "" : "; ", join_keys(unexpected));
  throw ValueError(fmt::format("{}::load_state_dict: {}", type, what));
}

}  // namespace

// Validates everything before the first copy, so that any error leaves the layer as it was. Values are
// copied into the existing storage: Variables held elsewhere (optimizers) keep seeing the parameters.
void Layer::load_state_dict(const TensorMap& state, bool strict) {
  const TensorMap own = state_dict();
  check_keys(own, state, strict, type_name());
  for (const auto& [key, dst] : own) {
    auto it = state.find(key);
    if (it == state.end()) continue;
    const Tensor& src = it->second;
    check<ValueError>(src.defined(), "{}::load_state_dict: '{}' is an undefined tensor", type_name(), key);
    check<ShapeError>(src.shape() == dst.shape(),
                      "{}::load_state_dict: shape of '{}' differs: expected {} vs loaded {}", type_name(), key,
                      dst.shape(), src.shape());
    check<DTypeError>(src.dtype() == dst.dtype(),
                      "{}::load_state_dict: dtype of '{}' differs: expected {} vs loaded {}", type_name(), key,
                      dst.dtype(), src.dtype());
  }
  for (const auto& [key, dst] : own) {
    auto it = state.find(key);
    if (it != state.end()) Tensor(dst).copy_(it->second);
  }
}

void Layer::save(const std::string& path) const {
  save_safetensors(path, state_dict(), {{"format", "tensorgrad"}, {"layer", type_name()}});
}

void Layer::load(const std::string& path) { load_state_dict(load_safetensors(path).tensors, true); }

// ---- hooks ----

int Layer::register_forward_hook(ForwardHook hook) {
  check<ValueError>(bool(hook), "{}::register_forward_hook: empty hook", type_name());
  hooks_.emplace_back(next_hook_, std::move(hook));
  return next_hook_++;
}

void Layer::remove_forward_hook(int handle) {
  auto it = std::find_if(hooks_.begin(), hooks_.end(), [&](const auto& h) { return h.first == handle; });
  check<ValueError>(it != hooks_.end(), "{}::remove_forward_hook: no hook with handle {}", type_name(), handle);
  hooks_.erase(it);
}

void Layer::run_forward_hooks(const Variable& input, const Variable& output) {
  const auto hooks = hooks_;  // a copy: a hook may remove itself
  for (const auto& [handle, hook] : hooks) hook(*this, input, output);
}

int Layer::register_backward_hook(BackwardHook hook) {
  check<ValueError>(bool(hook), "{}::register_backward_hook: empty hook", type_name());
  backward_hooks_.emplace_back(next_hook_, std::move(hook));
  return next_hook_++;
}

void Layer::remove_backward_hook(int handle) {
  const bool removed = std::erase_if(backward_hooks_, [&](const auto& h) { return h.first == handle; }) > 0;
  check<ValueError>(removed, "{}::remove_backward_hook: no hook with handle {}", type_name(), handle);
}

// As PyTorch's BackwardHook: y' = identity(forward(identity(x))). The output identity's backward runs first
// (it was recorded last) and keeps dL/dy; the input identity's runs once dL/dx is summed, and calls the hooks.
Variable Layer::call_with_backward_hooks(const Variable& x) {
  auto grad_output = std::make_shared<Variable>();
  const bool input_tracked = x.requires_grad();
  auto on_input = [this, grad_output](const Variable& dx, const Variable&) -> Grads {
    return {run_backward_hooks(dx, *grad_output)};
  };
  auto on_output = [this, grad_output, input_tracked](const Variable& dy, const Variable&) -> Grads {
    *grad_output = dy;
    if (!input_tracked) run_backward_hooks(Variable(), dy);
    return {dy};
  };
  const Variable in = input_tracked ? record("backward_hook", x.value(), {x}, on_input) : x;
  Variable y = forward(in);
  run_forward_hooks(x, y);
  return record("backward_hook", y.value(), {y}, on_output);
}

Variable Layer::run_backward_hooks(Variable grad_input, const Variable& grad_output) {
  const auto hooks = backward_hooks_;  // a copy: a hook may remove itself
  for (const auto& [handle, hook] : hooks) {
    Variable r = hook(*this, grad_input, grad_output);
    if (!r.defined() || !grad_input.defined()) continue;
    check<ShapeError>(r.shape() == grad_input.shape(), "{}: backward hook {} returned grad_input of shape {} for {}",
                      type_name(), handle, r.shape(), grad_input.shape());
    grad_input = std::move(r);
  }
  return grad_input;
}

// ---- summary ----

// A Keras-like table: one row per layer, indented by depth, with the parameters of its whole subtree.
std::string Layer::summary() const {
  std::vector<std::pair<std::string, int64_t>> rows;
  visit("", [&](const std::string& prefix, const Layer& l) {
    std::string left = l.type_name();
    if (!prefix.empty()) {  // prefix is "a.b." for the child b of a: indent by depth, show b (Type)
      const std::string path = prefix.substr(0, prefix.size() - 1);
      const size_t depth = size_t(std::count(path.begin(), path.end(), '.')) + 1, dot = path.rfind('.');
      left = std::string(2 * depth, ' ') + path.substr(dot == std::string::npos ? 0 : dot + 1) + " (" + left + ")";
    }
    rows.emplace_back(left, l.num_parameters());
  });
  size_t width = std::string("Layer (type)").size();
  for (const auto& [left, n] : rows) width = std::max(width, left.size());
  width += 4;
  const std::string rule(width + 12, '=');
  std::string out = fmt::format("{:<{}}{:>12}\n{}\n", "Layer (type)", width, "Parameters", rule);
  for (const auto& [left, n] : rows) out += fmt::format("{:<{}}{:>12}\n", left, width, n);
  int64_t trainable = 0;
  for (const Variable& p : parameters()) trainable += p.requires_grad() ? p.numel() : 0;
  return out + fmt::format("{}\nTotal parameters: {} (trainable: {})\n", rule, num_parameters(), trainable);
}

}  // namespace tg::nn
