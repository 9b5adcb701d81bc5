// Graphviz export of a recorded graph, for looking at what a forward pass built.
#include <unordered_map>

#include "autograd/node.h"
#include "autograd/variable.h"
#include "core/format.h"

namespace tg {

std::string to_dot(const Variable& root) {
  std::string out = "digraph autograd {\n  rankdir=BT;\n  node [fontname=\"monospace\"];\n";
  std::unordered_map<const void*, int> ids;
  auto id = [&](const void* p) {
    auto [it, fresh] = ids.emplace(p, int(ids.size()));
    return std::pair{it->second, fresh};
  };
  auto [root_id, unused] = id(root.meta() ? static_cast<const void*>(root.meta().get()) : &root);
  (void)unused;
  out += fmt::format("  n{} [label=\"output {}\", shape=doubleoctagon];\n", root_id, root.shape());
  std::vector<std::pair<std::shared_ptr<Node>, int>> stack;
  if (auto n = root.grad_fn()) stack.emplace_back(n, root_id);
  while (!stack.empty()) {
    auto [n, consumer] = stack.back();
    stack.pop_back();
    auto [nid, fresh] = id(n.get());
    out += fmt::format("  n{} -> n{};\n", nid, consumer);
    if (!fresh) continue;
    out += fmt::format("  n{} [label=\"{}\", shape=box];\n", nid, n->name);
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      const auto& m = n->inputs[i].meta;
      if (!m) continue;
      if (m->grad_fn) {
        stack.emplace_back(m->grad_fn, nid);
        continue;
      }
      auto [lid, new_leaf] = id(m.get());
      if (new_leaf)
        out += fmt::format("  n{} [label=\"leaf {}\\nrequires_grad\", shape=ellipse];\n", lid, n->inputs[i].shape);
      out += fmt::format("  n{} -> n{};\n", lid, nid);
    }
  }
  return out + "}\n";
}

}  // namespace tg
