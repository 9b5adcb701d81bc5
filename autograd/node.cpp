// Recording ops into the graph (record), and freeing a node once a backward is done with it (release).
#include "autograd/node.h"

#include <atomic>

#include "core/error.h"
#include "core/ops.h"
#include "core/pool.h"

namespace tg {

void Node::release() {
  freed = true;
  backward = nullptr;
  if (output_value.defined()) output_value = Tensor();
  // Unlink a chain whose only owner is this node one link at a time, instead of by recursive destructors: an
  // input's record that only this node holds, made by a node that only that record holds, hands that node's
  // edges to `chain`, so that the node goes with none left.
  Edges chain;
  auto unlink = [&chain](std::shared_ptr<AutogradMeta> m) {
    if (m && m.use_count() == 1 && m->grad_fn && m->grad_fn.use_count() == 1) {
      std::shared_ptr<Node> n = std::move(m->grad_fn);
      n->backward = nullptr;  // drops captured handles first, so the counts below are exact
      for (Edge& in : n->inputs) chain.push_back(std::move(in));
      n->inputs.clear();
    }
  };
  for (Edge& in : inputs) unlink(std::move(in.meta));
  inputs.clear();
  while (!chain.empty()) {
    std::shared_ptr<AutogradMeta> m = std::move(chain.back().meta);
    chain.pop_back();
    unlink(std::move(m));
  }
}

Node::~Node() { release(); }

Grads BackwardFn::operator()(const Variable& dy, const Variable& y) const { return ops_->call(buffer_, dy, y); }

namespace {
std::atomic<uint64_t> g_sequence{0};

// The next node's creation number: one atomic increment, so that numbers never repeat and a node recorded after
// another, on the same thread or after a synchronisation that hands it the other's output, gets a larger one,
// which is what the engine's latest-first order needs. (A relaxed load and store, tried to save the locked
// instruction, let a thread preempted between the two write back an old count; another thread's next node then
// numbered below its inputs, and its graph ran out of order, once in ~100 runs of the threads test.)
uint64_t next_sequence() { return g_sequence.fetch_add(1, std::memory_order_relaxed); }

// Both overloads of record: Inputs iterates as const Variable& (an initializer_list of references, or a vector).
template <class Inputs>
Variable record_inputs(const char* name, Tensor& value, const Inputs& inputs, BackwardFn& backward, bool keep_output) {
  if (anomaly_mode_enabled())
    check<ValueError>(all_finite(value), "anomaly: forward of {} produced NaN or inf (output shape {})", name,
                      value.shape());
  bool needed = false;
  for (const Variable& v : inputs) needed |= v.requires_grad();
  if (!grad_mode_enabled() || !needed) return Variable(std::move(value));
  // Node and meta come from the pool (core/pool.h): an op makes one of each, and drops them at the next backward.
  auto node = std::allocate_shared<Node>(PoolAllocator<Node>());
  node->name = name;
  node->backward = std::move(backward);
  node->sequence = next_sequence();
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
  node->output = meta;
  if (keep_output) node->output_value = value, node->output_version = value.version();
  meta->grad_fn = std::move(node);
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
