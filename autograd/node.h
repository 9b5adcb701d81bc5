#pragma once
// Node: one recorded op in the dynamic graph, with its backward closure and its input edges, and record(), which
// makes one. Ops call record() after their forward (autograd/functions/); the engine walks Nodes backwards
// (engine.cpp); release() frees a node's saved values and edges once a backward is done with it.
#include <functional>
#include <initializer_list>
#include <memory>
#include <vector>

#include "autograd/backward_fn.h"
#include "autograd/small_vector.h"
#include "autograd/variable.h"
#include "core/tensor.h"

namespace tg {

/// One input of a recorded op: its autograd record (null when it needs no gradient), the shape and dtype its
/// gradient must have, and, when the op's backward captures anything (it may read the input's value), a
/// handle on its storage's version and that version at record time, to catch an in-place write before backward.
struct Edge {
  std::shared_ptr<AutogradMeta> meta;  ///< the input's autograd record; null when it needs no gradient
  Shape shape;  ///< the shape its gradient must have
  DType dtype = f32;  ///< the dtype its gradient must have
  StorageVersion saved;  ///< its storage's version handle; empty when the backward captures nothing
  uint64_t version = 0;  ///< that version at record time
};

/// A node's input edges: up to two (every op but a few) inside the node, more in a pool block.
using Edges = SmallVector<Edge, 2>;

/// One recorded op: its backward, its inputs' autograd records, and what the engine needs to check.
struct Node {
  const char* name = "";  ///< the op's name, a string literal (record())
  BackwardFn backward;  ///< cleared when the graph is freed
  Edges inputs;  ///< one per input, in the order of the op's arguments
  std::weak_ptr<AutogradMeta> output;  ///< the output's autograd record
  Tensor output_value;  ///< kept only when the op asked for it
  uint64_t output_version = 0;  ///< the output's storage version at record time
  uint64_t sequence = 0;  ///< creation order: the backward walks latest first
  uint64_t walk = 0;  ///< the engine's mark: the last walk that reached it
  int slot = 0;  ///< its index in that walk
  bool freed = false;  ///< release() has run
  /// Its output has gradient hooks or retains its gradient (set by register_hook and retain_grad): only then
  /// does the engine lock `output`, an atomic compare-and-swap per node otherwise spent for nothing.
  bool output_watched = false;

  // User-provided (not = default): allocate_shared value-initialises, which zeroed all ~800 bytes (the
  // backward's inline buffer, the inline edges) before the members' own initialisers ran, on every op.
  Node() {}
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  /// Releases the chain of inputs iteratively, so dropping a 100 000-op graph does not overflow the stack.
  ~Node();
  /// Drops backward, saved values and input edges (after a backward without retain_graph).
  void release();
};

/// Records an op: returns `value` as a Variable that carries a Node when grad mode is on and an input
/// requires grad. `keep_output` keeps the value for the backward (ops whose derivative uses y). The inputs
/// are taken by reference, `{a, b}` at the call site, so that an op copies no Variable handle it does not keep.
/// `name` is kept by pointer for the life of the graph: a string literal ("mul"), not a temporary string.
Variable record(const char* name, Tensor value, std::initializer_list<std::reference_wrapper<const Variable>> inputs,
                BackwardFn backward, bool keep_output = false);
/// The same for a list of inputs (cat, stack).
Variable record(const char* name, Tensor value, const std::vector<Variable>& inputs, BackwardFn backward,
                bool keep_output = false);

/// Whether record would record an op on `inputs`: grad mode is on and one of them requires grad. An op whose
/// backward captures values tests it first, so that an unrecorded run (an ordinary backward's) copies none.
bool is_recorded(std::initializer_list<std::reference_wrapper<const Variable>> inputs);

}  // namespace tg
