// The backward engine. It walks the graph behind the roots in reverse topological order (latest recorded
// first: iterative, so deep graphs do not overflow the stack), sums the gradients that
// reach each node, un-broadcasts each input gradient to its input's shape once, checks shapes, versions
// and (under AnomalyGuard) finiteness, runs gradient hooks, accumulates into leaves, tells hooked leaves when
// their gradient is final, and frees the graph unless asked not to.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <unordered_map>

#include "autograd/functions.h"
#include "core/error.h"
#include "core/ops.h"

namespace tg {

namespace {

// Sums g over the dims that broadcasting added or stretched, giving `shape`. Called only when the shapes
// differ: a gradient that fits (nearly all) is not moved through here.
Variable unbroadcast(const Variable& g, const Shape& shape, const char* op) {
  check<ShapeError>(g.dim() >= int64_t(shape.size()), "{} backward: gradient of shape {} does not fit input {}", op,
                    g.shape(), shape);
  std::vector<int64_t> dims;
  const size_t lead = g.dim() - shape.size();
  for (size_t i = 0; i < size_t(g.dim()); ++i)
    if (i < lead || (shape[i - lead] == 1 && g.shape()[i] != 1)) dims.push_back(int64_t(i));
  Variable r = dims.empty() ? g : sum(g, dims, true);
  if (lead) r = r.reshape(shape);
  check<ShapeError>(r.shape() == shape, "{} backward: gradient of shape {} does not fit input {}", op, g.shape(),
                    shape);
  return r;
}

// Whether a gradient's buffer is held by nothing else (not a user's copy, an op's saved tensor, another
// gradient that is a view of it, nor a graph): then a gradient may be summed into it in place, with add's bits.
bool owned_alone(const Variable& grad) {
  const Tensor& t = grad.value();
  return !grad.requires_grad() && t.is_contiguous() && t.storage().use_count() == 1;
}

// Sums g into a slot: in place when the slot's buffer is its own (nearly always in a training step: a
// residual stream's gradient gathers one from each branch), as a new tensor otherwise.
void accumulate(Variable& slot, Variable&& g) {
  if (!slot.defined()) slot = std::move(g);
  else if (owned_alone(slot) && slot.shape() == g.shape() && slot.dtype() == g.dtype())
    Tensor(slot.value()).add_(g.value());
  else slot = slot + g;
}

// The nodes behind the roots, latest first, each told its slot (its index here). Every edge leads from a node to
// one recorded before it (an op's inputs exist when it is recorded, and a record's grad_fn never changes), so
// latest first is a reverse topological order, and the very order in which Kahn's algorithm with a priority
// queue on creation order ran them: the gradients are summed in the same order, to the same bits. The
// visited mark is the walk's number in the node, so a walk needs neither a hash table nor dependency counts;
// it also means that one graph is walked by one backward at a time (as release() already requires).
std::vector<std::shared_ptr<Node>> collect(const std::vector<Variable>& roots) {
  static std::atomic<uint64_t> walks{0};
  const uint64_t walk = ++walks;
  std::vector<std::shared_ptr<Node>> nodes;
  auto visit = [&](const std::shared_ptr<Node>& n) {
    if (n->walk != walk) n->walk = walk, nodes.push_back(n);
  };
  for (const Variable& r : roots)
    if (r.meta() && r.meta()->grad_fn) visit(r.meta()->grad_fn);
  for (size_t i = 0; i < nodes.size(); ++i)  // breadth first; `nodes` is the queue
    for (const Edge& e : nodes[i]->inputs)
      if (e.meta && e.meta->grad_fn) visit(e.meta->grad_fn);
  auto later = [](const std::shared_ptr<Node>& a, const std::shared_ptr<Node>& b) { return a->sequence > b->sequence; };
  if (!std::is_sorted(nodes.begin(), nodes.end(), later)) std::sort(nodes.begin(), nodes.end(), later);
  for (size_t i = 0; i < nodes.size(); ++i) nodes[i]->slot = int(i);
  return nodes;
}

void check_saved(const Node& n) {
  check<ValueError>(!n.freed, "backward of {}: the graph was already freed by an earlier backward; pass "
                    "retain_graph = true to backward through it twice", n.name);
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Edge& e = n.inputs[i];
    if (e.saved)
      check<ValueError>(e.saved.version() == e.version,
                        "backward of {}: input {} (shape {}) was modified in place after the op was recorded "
                        "(version {} -> {})", n.name, i, e.shape, e.version, e.saved.version());
  }
  check<ValueError>(!n.output_value.defined() || n.output_value.version() == n.output_version,
                    "backward of {}: its output was modified in place after the op was recorded", n.name);
}

// An op's backward with the anomaly checks off for the ops inside it (see input_grads).
Grads backward_unchecked(const Node& n, const Variable& dy, const Variable& y) {
  AnomalyGuard off(false);
  return n.backward(dy, y);
}

// Runs an op's backward, then checks and un-broadcasts its input gradients. Under AnomalyGuard the ops
// inside the backward are not checked one by one: an inf there (sqrt's dy/2y at 0, say) would be blamed on
// the div that computed it, where the user needs to hear "backward of sqrt"; the results are checked below.
// y carries its record only when the backward is recorded (create_graph): unrecorded ops never look at it.
Grads input_grads(Node& n, const Variable& dy, bool create_graph) {
  const Variable y = !n.output_value.defined() ? Variable()
                     : create_graph            ? Variable(n.output_value, n.output.lock())
                                               : Variable(n.output_value);
  const bool anomaly = anomaly_mode_enabled();
  Grads g = anomaly ? backward_unchecked(n, dy, y) : n.backward(dy, y);
  check<Error>(g.size() == n.inputs.size(), "backward of {}: returned {} gradients for {} inputs", n.name, g.size(),
               n.inputs.size());
  for (size_t i = 0; i < g.size(); ++i) {
    const Edge& e = n.inputs[i];
    if (!e.meta || !g[i].defined()) continue;
    if (g[i].shape() != e.shape) g[i] = unbroadcast(g[i], e.shape, n.name);
    // An op on promoted operands (f32 + f64) gives a gradient in the result's dtype: each input gets its own,
    // as PyTorch's engine converts it (validate_outputs).
    if (g[i].dtype() != e.dtype && is_floating(g[i].dtype()) && is_floating(e.dtype)) g[i] = to(g[i], e.dtype);
    check<DTypeError>(g[i].dtype() == e.dtype, "backward of {}: gradient dtype {} for input of dtype {}", n.name,
                      g[i].dtype(), e.dtype);
    if (anomaly)
      check<ValueError>(all_finite(g[i].value()), "anomaly: backward of {} produced NaN or inf in the gradient of "
                        "input {} (shape {})", n.name, i, e.shape);
  }
  return g;
}

// Where gradients go: into leaves' grad (backward), or into `captured` for the listed records (grad()).
struct Sink {
  bool create_graph;
  std::unordered_map<AutogradMeta*, Variable>* captured;  // null for backward()

  void leaf(const std::shared_ptr<AutogradMeta>& m, const Variable& g) const {
    if (captured) {
      if (auto it = captured->find(m.get()); it != captured->end()) accumulate(it->second, Variable(g));
      return;
    }
    if (!m->requires_grad) return;
    // A fresh copy on first store (an op may hand the same tensor to several inputs), unless the gradient is
    // a contiguous tensor that nothing else holds, which is then the leaf's alone: most are, and the copy of a
    // large embedding's gradient on every step is a pass over memory for nothing.
    const Tensor& v = g.value();
    const bool own = v.is_contiguous() && v.storage().use_count() == 1;
    if (!m->grad) m->grad = std::make_shared<Variable>(create_graph || own ? g : Variable(v.clone()));
    // Later ones are summed in place where the leaf alone holds its gradient, as PyTorch's AccumulateGrad.
    else if (create_graph) *m->grad = *m->grad + g;
    else if (owned_alone(*m->grad)) Tensor(m->grad->value()).add_(g.value());
    else *m->grad = Variable(m->grad->value() + g.value());
  }
};

// The gradient `g` of `m` through m's hooks (register_hook) in order; a hook's defined result replaces it.
// The hooks are copied first: one may remove itself.
Variable run_hooks(const AutogradMeta& m, Variable g) {
  const auto hooks = m.hooks;
  for (const auto& [handle, hook] : hooks) {
    Variable r = hook(g);
    if (!r.defined()) continue;
    check<ShapeError>(r.shape() == g.shape() && r.dtype() == g.dtype(),
                      "register_hook: hook {} returned a gradient {} {} for a gradient {} {}", handle, r.shape(),
                      r.dtype(), g.shape(), g.dtype());
    g = std::move(r);
  }
  return g;
}

// Leaves with hooks (register_hook, register_post_accumulate_grad_hook), each with the slot of the node that is
// its last use: once that node has run, nothing adds to its gradient. A leaf's gradients are summed here and
// go through its register_hook hooks once, into the sink, at that point, as PyTorch's AccumulateGrad node
// receives one summed gradient; then its post-accumulate hooks run (backward only). Leaves without hooks go
// straight to the sink, and a backward with no hooked leaf costs one pass over the edges.
class HookedLeaves {
 public:
  HookedLeaves(const Sink& sink, const std::vector<Variable>& roots, const std::vector<std::shared_ptr<Node>>& nodes)
      : sink_(sink) {
    for (size_t i = 0; i < roots.size(); ++i) use(roots[i].meta(), -1, int(i));  // -1: a root no node uses
    for (size_t s = 0; s < nodes.size(); ++s)
      for (size_t i = 0; i < nodes[s]->inputs.size(); ++i) use(nodes[s]->inputs[i].meta, int(s), int(i));
    std::sort(leaves_.begin(), leaves_.end(), [](const Leaf& a, const Leaf& b) {
      return std::pair(a.slot, a.input) < std::pair(b.slot, b.input);
    });
    for (size_t i = 0; i < leaves_.size(); ++i) where_[leaves_[i].meta.get()] = i;
  }
  void add(const std::shared_ptr<AutogradMeta>& m, const Variable& g) {
    auto it = where_.find(m.get());
    if (m->hooks.empty() || it == where_.end()) return sink_.leaf(m, g);
    accumulate(leaves_[it->second].sum, Variable(g));
  }
  // The leaves whose gradient is final once the node in `slot` has run (-1: before the first). Inline and
  // first a test: the engine asks after every node, and nearly every backward has no hooked leaf.
  void finish(int slot) {
    if (next_ < leaves_.size() && leaves_[next_].slot == slot) finish_from(slot);
  }

 private:
  void finish_from(int slot) {
    for (; next_ < leaves_.size() && leaves_[next_].slot == slot; ++next_) {
      Leaf& l = leaves_[next_];
      if (l.sum.defined()) sink_.leaf(l.meta, run_hooks(*l.meta, std::move(l.sum)));
      if (sink_.captured) continue;
      const auto hooks = l.meta->post_accumulate_hooks;  // copied: a hook may remove itself
      for (const auto& [handle, hook] : hooks) hook(l.meta->grad ? l.meta->grad->value() : Tensor());
    }
  }

  struct Leaf {
    int slot, input;  // input: which of the node's inputs (or which root); orders the leaves of one slot
    std::shared_ptr<AutogradMeta> meta;
    Variable sum;  // the gradients summed so far, for leaves with register_hook hooks
  };
  void use(const std::shared_ptr<AutogradMeta>& m, int slot, int input) {
    if (!m || m->grad_fn || (m->hooks.empty() && m->post_accumulate_hooks.empty())) return;
    auto [it, fresh] = where_.emplace(m.get(), leaves_.size());
    if (fresh) leaves_.push_back({slot, input, m, Variable()});
    else leaves_[it->second].slot = slot, leaves_[it->second].input = input;
  }

  const Sink& sink_;
  std::vector<Leaf> leaves_;
  std::unordered_map<AutogradMeta*, size_t> where_;  // index in leaves_
  size_t next_ = 0;
};

void run(const std::vector<Variable>& roots, const std::vector<Variable>& root_grads, bool retain_graph,
         const Sink& sink) {
  const std::vector<std::shared_ptr<Node>> nodes = collect(roots);
  std::vector<Variable> buffer(nodes.size());  // by slot: the gradient summed so far (undefined: none yet)
  HookedLeaves leaves(sink, roots, nodes);
  for (size_t i = 0; i < roots.size(); ++i) {
    if (const Node* n = roots[i].meta() ? roots[i].meta()->grad_fn.get() : nullptr)
      accumulate(buffer[n->slot], Variable(root_grads[i]));
    else if (roots[i].requires_grad()) leaves.add(roots[i].meta(), root_grads[i]);
  }
  GradModeGuard mode(sink.create_graph);
  leaves.finish(-1);
  for (size_t slot = 0; slot < nodes.size(); ++slot) {
    Node* n = nodes[slot].get();
    if (buffer[slot].defined()) {
      Variable dy = std::move(buffer[slot]);  // frees the summed gradient as soon as it is consumed
      check_saved(*n);
      if (auto out = sink.captured || n->output_watched ? n->output.lock() : nullptr) {
        if (!out->hooks.empty()) dy = run_hooks(*out, std::move(dy));
        if (sink.captured || out->retains_grad) sink.leaf(out, dy);
      }
      Grads g = input_grads(*n, dy, sink.create_graph);
      for (size_t i = 0; i < g.size(); ++i) {
        const auto& in = n->inputs[i].meta;
        if (!in || !g[i].defined()) continue;
        if (in->grad_fn) accumulate(buffer[in->grad_fn->slot], std::move(g[i]));
        else leaves.add(in, g[i]);
      }
    }
    if (!retain_graph) n->release();
    leaves.finish(int(slot));
  }
}

}  // namespace

void Variable::backward(const BackwardOptions& options) const {
  check<ValueError>(numel() == 1, "backward: output of shape {} is not a scalar; pass a grad_output of that shape",
                    shape());
  backward(ones_like(value_), options);
}

void Variable::backward(const Tensor& grad_output, const BackwardOptions& options) const {
  check<ValueError>(requires_grad(), "backward: the variable does not require grad (no leaf it depends on does)");
  check<ShapeError>(grad_output.shape() == shape() && grad_output.dtype() == dtype(),
                    "backward: grad_output {} {} does not match the output {} {}", grad_output.shape(),
                    grad_output.dtype(), shape(), dtype());
  run({*this}, {Variable(grad_output)}, options.retain_graph || options.create_graph,
      Sink{options.create_graph, nullptr});
}

std::vector<Variable> grad(const std::vector<Variable>& outputs, const std::vector<Variable>& inputs,
                           const std::vector<Tensor>& grad_outputs, const GradOptions& options) {
  check<ValueError>(grad_outputs.empty() || grad_outputs.size() == outputs.size(),
                    "grad: {} grad_outputs for {} outputs", grad_outputs.size(), outputs.size());
  std::vector<Variable> seeds;
  for (size_t i = 0; i < outputs.size(); ++i) {
    check<ValueError>(outputs[i].requires_grad(), "grad: output {} does not require grad", i);
    if (grad_outputs.empty())
      check<ValueError>(outputs[i].numel() == 1, "grad: output {} of shape {} is not a scalar; pass grad_outputs", i,
                        outputs[i].shape());
    seeds.emplace_back(grad_outputs.empty() ? ones_like(outputs[i].value()) : grad_outputs[i]);
  }
  std::unordered_map<AutogradMeta*, Variable> captured;
  for (const Variable& v : inputs) {
    check<ValueError>(v.requires_grad(), "grad: an input (shape {}) does not require grad", v.shape());
    captured[v.meta().get()];
  }
  run(outputs, seeds, options.retain_graph || options.create_graph, Sink{options.create_graph, &captured});
  std::vector<Variable> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Variable g = captured[inputs[i].meta().get()];
    check<ValueError>(g.defined() || options.allow_unused,
                      "grad: input {} (shape {}) was not used to compute the outputs; pass allow_unused", i,
                      inputs[i].shape());
    out.push_back(g);
  }
  return out;
}

}  // namespace tg
