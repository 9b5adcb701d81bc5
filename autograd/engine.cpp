// The backward engine. It walks the graph behind the roots in reverse topological order (Kahn's algorithm
// on dependency counts: iterative, so deep graphs do not overflow the stack), sums the gradients that
// reach each node, un-broadcasts each input gradient to its input's shape once, checks shapes, versions
// and (under AnomalyGuard) finiteness, accumulates into leaves, and frees the graph unless asked not to.
#include <algorithm>
#include <cstdint>
#include <queue>
#include <unordered_map>

#include "autograd/functions.h"
#include "core/error.h"
#include "core/ops.h"

namespace tg {

void Node::release() {
  freed = true;
  backward = nullptr;
  output_value = Tensor();
  Edges stack = std::move(inputs);
  inputs.clear();
  // Unlink a chain whose only owner is this node one link at a time, instead of by recursive destructors.
  while (!stack.empty()) {
    std::shared_ptr<AutogradMeta> m = std::move(stack.back().meta);
    stack.pop_back();
    if (m && m.use_count() == 1 && m->grad_fn && m->grad_fn.use_count() == 1) {
      std::shared_ptr<Node> n = std::move(m->grad_fn);
      n->backward = nullptr;  // drops captured handles first, so the counts below are exact
      for (Edge& in : n->inputs) stack.push_back(std::move(in));
      n->inputs.clear();
    }
  }
}

Node::~Node() { release(); }

Grads BackwardFn::operator()(const Variable& dy, const Variable& y) const { return ops_->call(buffer_, dy, y); }

namespace {

// Sums g over the dims that broadcasting added or stretched, giving `shape`.
Variable unbroadcast(const Variable& g, const Shape& shape, const std::string& op) {
  if (g.shape() == shape) return g;
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

void accumulate(Variable& slot, const Variable& g) { slot = slot.defined() ? slot + g : g; }

// Node* -> its slot in a walk, by open addressing with linear probing: a walk over n nodes allocates a few
// times, where std::unordered_map allocated once per node and map.
class NodeSlots {
 public:
  /// The slot of n, given the next free number when n is new; `second` tells whether it was.
  std::pair<int, bool> insert(Node* n) {
    if (2 * (count_ + 1) > int(table_.size())) rehash(std::max<size_t>(64, 2 * table_.size()));
    size_t i = home(n);
    for (; table_[i].first; i = (i + 1) & (table_.size() - 1))
      if (table_[i].first == n) return {table_[i].second, false};
    table_[i] = {n, count_};
    return {count_++, true};
  }
  /// The slot of a node that insert has seen.
  int at(Node* n) const {
    size_t i = home(n);
    while (table_[i].first != n) i = (i + 1) & (table_.size() - 1);
    return table_[i].second;
  }

 private:
  size_t home(Node* n) const {  // Fibonacci hashing: nodes are 16-byte aligned, so the low bits say nothing
    return size_t((uintptr_t(n) >> 4) * 0x9E3779B97F4A7C15ull >> 32) & (table_.size() - 1);
  }
  void rehash(size_t size) {
    std::vector<std::pair<Node*, int>> old(size);
    old.swap(table_);
    for (const auto& [n, slot] : old)
      if (n) {
        size_t i = home(n);
        while (table_[i].first) i = (i + 1) & (table_.size() - 1);
        table_[i] = {n, slot};
      }
  }
  std::vector<std::pair<Node*, int>> table_;  // size a power of two, at most half full; null = empty
  int count_ = 0;
};

struct Walk {
  std::vector<std::shared_ptr<Node>> nodes;  // by slot; keeps every node alive while the walk frees edges
  std::vector<int> deps;                     // by slot: edges from reachable nodes into the node
  NodeSlots slots;
};

Walk collect(const std::vector<Variable>& roots) {
  Walk w;
  auto visit = [&w](const std::shared_ptr<Node>& n) {  // n's slot, and whether it was new
    auto [slot, fresh] = w.slots.insert(n.get());
    if (fresh) w.nodes.push_back(n), w.deps.push_back(0);
    return std::pair{slot, fresh};
  };
  std::vector<int> stack;
  for (const Variable& r : roots)
    if (auto n = r.grad_fn())
      if (auto [slot, fresh] = visit(n); fresh) stack.push_back(slot);
  while (!stack.empty()) {
    Node* n = w.nodes[stack.back()].get();
    stack.pop_back();
    for (const Edge& e : n->inputs) {
      if (!e.meta || !e.meta->grad_fn) continue;
      auto [child, fresh] = visit(e.meta->grad_fn);
      ++w.deps[child];
      if (fresh) stack.push_back(child);
    }
  }
  return w;
}

void check_saved(const Node& n) {
  check<ValueError>(!n.freed, "backward of {}: the graph was already freed by an earlier backward; pass "
                    "retain_graph = true to backward through it twice", n.name);
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (auto st = n.inputs[i].storage.lock())
      check<ValueError>(st->version == n.inputs[i].version,
                        "backward of {}: input {} (shape {}) was modified in place after the op was recorded "
                        "(version {} -> {})", n.name, i, n.inputs[i].shape, n.inputs[i].version, st->version);
  check<ValueError>(!n.output_value.defined() || n.output_value.version() == n.output_version,
                    "backward of {}: its output was modified in place after the op was recorded", n.name);
}

// Runs an op's backward, then checks and un-broadcasts its input gradients. Under AnomalyGuard the ops
// inside the backward are not checked one by one: an inf there (sqrt's dy/2y at 0, say) would be blamed on
// the div that computed it, where the user needs to hear "backward of sqrt"; the results are checked below.
Grads input_grads(Node& n, const Variable& dy) {
  Variable y(n.output_value, n.output.lock());
  const bool anomaly = anomaly_mode_enabled();
  Grads g;
  {
    AnomalyGuard off(false);
    g = n.backward(dy, y);
  }
  check<Error>(g.size() == n.inputs.size(), "backward of {}: returned {} gradients for {} inputs", n.name, g.size(),
               n.inputs.size());
  for (size_t i = 0; i < g.size(); ++i) {
    const Edge& e = n.inputs[i];
    if (!e.meta || !g[i].defined()) continue;
    g[i] = unbroadcast(g[i], e.shape, n.name);
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
      if (auto it = captured->find(m.get()); it != captured->end()) accumulate(it->second, g);
      return;
    }
    if (!m->requires_grad) return;
    // A fresh copy on first store (an op may hand the same tensor to several inputs), unless the gradient is
    // a contiguous tensor that nothing else holds, which is then the leaf's alone: most are, and the copy of a
    // large embedding's gradient on every step is a pass over memory for nothing.
    const Tensor& v = g.value();
    const bool own = v.is_contiguous() && v.storage().use_count() == 1;
    if (!m->grad) m->grad = std::make_shared<Variable>(create_graph || own ? g : Variable(v.clone()));
    else if (create_graph) *m->grad = *m->grad + g;
    else if (summed_in_place(*m->grad)) Tensor(m->grad->value()).add_(g.value());
    else *m->grad = Variable(m->grad->value() + g.value());
  }
  // A gradient whose buffer the leaf alone holds (not a user's copy of grad(), nor a graph) is summed into in
  // place, without a new tensor, as PyTorch's AccumulateGrad does. Its bits are those of grad + g either way.
  static bool summed_in_place(const Variable& grad) {
    const Tensor& t = grad.value();
    return !grad.requires_grad() && t.is_contiguous() && t.storage().use_count() == 1;
  }
};

void run(const std::vector<Variable>& roots, const std::vector<Variable>& root_grads, bool retain_graph,
         const Sink& sink) {
  Walk w = collect(roots);
  std::vector<Variable> buffer(w.nodes.size());  // by slot: the gradient summed so far (undefined: none yet)
  for (size_t i = 0; i < roots.size(); ++i) {
    if (auto n = roots[i].grad_fn()) accumulate(buffer[w.slots.at(n.get())], root_grads[i]);
    else if (roots[i].requires_grad()) sink.leaf(roots[i].meta(), root_grads[i]);
  }
  auto later = [&w](int a, int b) { return w.nodes[a]->sequence < w.nodes[b]->sequence; };
  std::priority_queue<int, std::vector<int>, decltype(later)> ready(later);
  for (size_t slot = 0; slot < w.nodes.size(); ++slot)
    if (w.deps[slot] == 0) ready.push(int(slot));
  GradModeGuard mode(sink.create_graph);
  while (!ready.empty()) {
    const int slot = ready.top();
    ready.pop();
    Node* n = w.nodes[slot].get();
    if (buffer[slot].defined()) {
      Variable dy = std::move(buffer[slot]);
      buffer[slot] = Variable();  // frees the summed gradient as soon as it is consumed
      check_saved(*n);
      if (auto out = n->output.lock()) {
        if (sink.captured) sink.leaf(out, dy);
        else if (out->retains_grad) sink.leaf(out, dy);
      }
      Grads g = input_grads(*n, dy);
      for (size_t i = 0; i < g.size(); ++i) {
        const auto& in = n->inputs[i].meta;
        if (!in || !g[i].defined()) continue;
        if (in->grad_fn) accumulate(buffer[w.slots.at(in->grad_fn.get())], g[i]);
        else sink.leaf(in, g[i]);
      }
    }
    for (const Edge& e : n->inputs)
      if (e.meta && e.meta->grad_fn)
        if (const int child = w.slots.at(e.meta->grad_fn.get()); --w.deps[child] == 0) ready.push(child);
    if (!retain_graph) n->release();
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
