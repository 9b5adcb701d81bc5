// Graphviz export of a recorded graph, for looking at what a forward pass built. A node does not keep its
// output's shape; the edge of the op that consumes it does, so the walk carries that shape to the node.
#include <unordered_map>

#include "autograd/node.h"
#include "autograd/variable.h"
#include "core/format.h"

namespace tg {

std::string to_dot(const Variable& root, const std::vector<std::pair<std::string, Variable>>& names) {
  std::unordered_map<const AutogradMeta*, std::string> name_of;
  for (const auto& [name, v] : names)
    if (v.meta()) name_of.emplace(v.meta().get(), name);
  std::string out = "digraph autograd {\n  rankdir=BT;\n  node [fontname=\"monospace\"];\n";
  std::unordered_map<const void*, int> ids;
  auto id = [&](const void* p) {
    auto [it, fresh] = ids.emplace(p, int(ids.size()));
    return std::pair{it->second, fresh};
  };
  auto [root_id, unused] = id(root.meta() ? static_cast<const void*>(root.meta().get()) : &root);
  (void)unused;
  out += fmt::format("  n{} [label=\"output {}\", shape=doubleoctagon];\n", root_id, root.shape());
  struct Visit {
    std::shared_ptr<Node> node;
    int consumer;
    Shape shape;  // the node's output
  };
  std::vector<Visit> stack;
  if (auto n = root.grad_fn()) stack.push_back({n, root_id, root.shape()});
  while (!stack.empty()) {
    const Visit v = stack.back();
    stack.pop_back();
    auto [nid, fresh] = id(v.node.get());
    out += fmt::format("  n{} -> n{};\n", nid, v.consumer);
    if (!fresh) continue;
    out += fmt::format("  n{} [label=\"{}\\n{}\", shape=box];\n", nid, v.node->name, v.shape);
    for (const Edge& e : v.node->inputs) {
      if (!e.meta) continue;
      if (e.meta->grad_fn) {
        stack.push_back({e.meta->grad_fn, nid, e.shape});
        continue;
      }
      auto [lid, new_leaf] = id(e.meta.get());
      auto named = name_of.find(e.meta.get());
      if (new_leaf)
        out += fmt::format("  n{} [label=\"{} {}\\nrequires_grad\", shape=ellipse];\n", lid,
                           named == name_of.end() ? "leaf" : named->second, e.shape);
      out += fmt::format("  n{} -> n{};\n", lid, nid);
    }
  }
  return out + "}\n";
}

}  // namespace tg
