// einsum (Einstein summation, torch.einsum's equations) composed of differentiable ops: permute, reshape,
// slice (diagonals), sum, mul and matmul, so that its gradients are theirs. Each operand's dims get labels
// (letters; the ellipsis's dims get -1, -2, ... counted from the end, so that they broadcast as NumPy's
// trailing dims do). Repeated labels of an operand become its diagonal, labels found nowhere else are summed
// at once, and the operands are contracted left to right, two at a time: as one (batched) matmul when they
// share a summed label and each has a label of its own, else as a broadcast mul and a sum.
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "autograd/functions.h"

namespace tg {
namespace {

using Labels = std::vector<int>;

struct Term {
  Variable v;
  Labels labels;  // one per dim of v, all different after diagonals
  int64_t size(int l) const { return v.size(std::find(labels.begin(), labels.end(), l) - labels.begin()); }
  bool has(int l) const { return std::find(labels.begin(), labels.end(), l) != labels.end(); }
};

// The equation and the operands' shapes, for error messages.
struct Context {
  std::string equation, shapes;
  template <class E, class... Args>
  void require(bool ok, fmt::format_string<Args...> what, Args&&... args) const {
    if (!ok)
      throw E(fmt::format("einsum: {} in equation '{}' for operands of shapes {}",
                          fmt::format(what, std::forward<Args>(args)...), equation, shapes));
  }
};

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// One term's letters and where its "..." stands (-1 without one).
struct Subscripts {
  Labels letters;
  int64_t ellipsis_at = -1;
};

Subscripts parse_term(const std::string& term, const Context& ctx) {
  Subscripts s;
  for (size_t i = 0; i < term.size(); ++i) {
    if (term.compare(i, 3, "...") == 0) {
      ctx.require<ValueError>(s.ellipsis_at < 0, "'...' appears twice in term '{}'", term);
      s.ellipsis_at = int64_t(s.letters.size()), i += 2;
      continue;
    }
    ctx.require<ValueError>(is_letter(term[i]), "invalid subscript '{}' in term '{}' (letters and '...' only)", term[i],
                            term);
    s.letters.push_back(term[i]);
  }
  return s;
}

// The labels of a term whose "..." stands for k dims: -k, ..., -1 in its place.
Labels expand(const Subscripts& s, int64_t k) {
  if (s.ellipsis_at < 0) return s.letters;
  Labels labels(s.letters.begin(), s.letters.begin() + s.ellipsis_at);
  for (int64_t d = k; d >= 1; --d) labels.push_back(int(-d));
  labels.insert(labels.end(), s.letters.begin() + s.ellipsis_at, s.letters.end());
  return labels;
}

// The labels of an input term for an operand of ndim dims.
Labels input_labels(const std::string& term, int64_t ndim, const Context& ctx) {
  const Subscripts s = parse_term(term, ctx);
  const int64_t n = int64_t(s.letters.size());
  ctx.require<ShapeError>(s.ellipsis_at >= 0 ? n <= ndim : n == ndim,
                          "term '{}' has {} subscripts for an operand of {} dims", term, n, ndim);
  return expand(s, ndim - n);
}

// The output's labels: explicit after "->" (without "..." there, the ellipsis dims are summed), or implicit: the
// ellipsis dims, then the letters found once on the left in code order (upper case first, as torch).
Labels output_labels(const std::string& eq, size_t arrow, const std::map<int, int>& count, int64_t ellipsis_dims,
                     const Context& ctx) {
  if (arrow == std::string::npos) {
    Labels out = expand({{}, 0}, ellipsis_dims);
    for (auto [l, n] : count)
      if (l > 0 && n == 1) out.push_back(l);
    return out;
  }
  const Subscripts s = parse_term(eq.substr(arrow + 2), ctx);
  for (int l : s.letters) {
    ctx.require<ValueError>(count.count(l), "output subscript {} does not appear in the inputs", char(l));
    ctx.require<ValueError>(std::count(s.letters.begin(), s.letters.end(), l) == 1,
                            "output subscript {} appears more than once", char(l));
  }
  return expand(s, ellipsis_dims);
}

// x's dims in the order `order` (its labels, rearranged).
Term permuted(const Term& t, const Labels& order) {
  std::vector<int64_t> dims;
  for (int l : order) dims.push_back(std::find(t.labels.begin(), t.labels.end(), l) - t.labels.begin());
  bool same = true;
  for (size_t i = 0; i < dims.size(); ++i) same = same && dims[i] == int64_t(i);
  return {same ? t.v : permute(t.v, dims), order};
}

// The diagonal of each repeated label: its two dims moved last, flattened to n·n and read every n + 1.
Term diagonals(Term t, const Context& ctx) {
  for (size_t q = 1; q < t.labels.size(); ++q) {
    const size_t p = std::find(t.labels.begin(), t.labels.end(), t.labels[q]) - t.labels.begin();
    if (p == q) continue;
    const int64_t n = t.v.size(int64_t(p));
    ctx.require<ShapeError>(t.v.size(int64_t(q)) == n, "subscript {} is repeated in an operand with sizes {} and {}",
                            char(t.labels[q]), n, t.v.size(int64_t(q)));
    Labels rest;
    Shape shape;
    std::vector<int64_t> dims;
    for (size_t i = 0; i < t.labels.size(); ++i) {
      if (i == p || i == q) continue;
      rest.push_back(t.labels[i]), shape.push_back(t.v.size(int64_t(i))), dims.push_back(int64_t(i));
    }
    rest.push_back(t.labels[p]), shape.push_back(n * n);
    dims.push_back(int64_t(p)), dims.push_back(int64_t(q));
    return diagonals({permute(t.v, dims).reshape(shape).slice(-1, 0, n * n, n + 1), rest}, ctx);
  }
  return t;
}

// t summed over the labels in `drop` that it has.
Term summed(const Term& t, const std::set<int>& drop) {
  std::vector<int64_t> dims;
  Labels rest;
  for (size_t i = 0; i < t.labels.size(); ++i)
    if (drop.count(t.labels[i])) dims.push_back(int64_t(i));
    else rest.push_back(t.labels[i]);
  return dims.empty() ? t : Term{sum(t.v, dims), rest};
}

// t with dims in `order`: its own labels permuted so, and size 1 for the labels it lacks.
Variable aligned(const Term& t, const Labels& order) {
  Labels own;
  Shape shape;
  for (int l : order) {
    if (t.has(l)) own.push_back(l);
    shape.push_back(t.has(l) ? t.size(l) : 1);
  }
  return permuted(t, own).v.reshape(shape);
}

Shape sizes(const Term& t, const Labels& labels) {
  Shape s;
  for (int l : labels) s.push_back(t.size(l));
  return s;
}

// Σ over the shared labels not kept of a·b, the others kept. A label summed where one side has size 1 (or
// that one side lacks) is summed on each side first: Σ_l a·b_l = a·Σ_l b_l.
Term contract(Term a, Term b, const std::set<int>& kept) {
  std::set<int> early;
  for (const Term* t : {&a, &b})
    for (int l : t->labels)
      if (!kept.count(l) && (!a.has(l) || !b.has(l) || a.size(l) == 1 || b.size(l) == 1)) early.insert(l);
  a = summed(a, early), b = summed(b, early);
  Labels batch, left, contracted, right;
  for (int l : a.labels) (b.has(l) ? (kept.count(l) ? batch : contracted) : left).push_back(l);
  for (int l : b.labels)
    if (!a.has(l)) right.push_back(l);
  if (contracted.empty() || (left.empty() && right.empty())) {
    Labels order = a.labels;
    order.insert(order.end(), right.begin(), right.end());
    return summed({aligned(a, order) * aligned(b, order), order}, std::set<int>(contracted.begin(), contracted.end()));
  }
  // (batch..., L, K) @ (batch..., K, R), the batch dims broadcast by matmul.
  Shape sa = sizes(a, batch), sb = sizes(b, batch), out;
  sa.push_back(sizes(a, left).numel()), sa.push_back(sizes(a, contracted).numel());
  sb.push_back(sizes(b, contracted).numel()), sb.push_back(sizes(b, right).numel());
  Labels order_a = batch, order_b = batch, labels = batch;
  order_a.insert(order_a.end(), left.begin(), left.end());
  order_a.insert(order_a.end(), contracted.begin(), contracted.end());
  order_b.insert(order_b.end(), contracted.begin(), contracted.end());
  order_b.insert(order_b.end(), right.begin(), right.end());
  const Variable c = matmul(permuted(a, order_a).v.reshape(sa), permuted(b, order_b).v.reshape(sb));
  for (int l : batch) out.push_back(std::max(a.size(l), b.size(l)));
  for (int l : left) out.push_back(a.size(l)), labels.push_back(l);
  for (int l : right) out.push_back(b.size(l)), labels.push_back(l);
  return {c.reshape(out), labels};
}

// ShapeError unless each label's sizes over the operands are one size, or 1 (broadcast).
void check_sizes(const std::vector<Term>& ts, const Context& ctx) {
  std::map<int, int64_t> size;
  for (const Term& t : ts)
    for (int l : t.labels) {
      const int64_t n = t.size(l), m = size.count(l) ? size[l] : 1;
      ctx.require<ShapeError>(n == m || n == 1 || m == 1, "subscript {} has sizes {} and {}",
                              l > 0 ? fmt::format("{}", char(l)) : std::string("..."), m, n);
      size[l] = std::max(n, m);
    }
}

// The operands contracted left to right; a label stays while the output or a later operand has it.
Term contract_all(const std::vector<Term>& ts, const Labels& output) {
  std::vector<std::set<int>> later(ts.size() + 1, std::set<int>(output.begin(), output.end()));
  for (size_t i = ts.size(); i-- > 0;) {
    later[i] = later[i + 1];
    later[i].insert(ts[i].labels.begin(), ts[i].labels.end());
  }
  std::set<int> lone;  // labels of the first operand that nothing else keeps
  for (int l : ts[0].labels)
    if (!later[1].count(l)) lone.insert(l);
  Term acc = summed(ts[0], lone);
  for (size_t i = 1; i < ts.size(); ++i) acc = contract(acc, ts[i], later[i + 1]);
  return acc;
}

}  // namespace

Variable einsum(const std::string& equation, const std::vector<Variable>& operands) {
  Context ctx{equation, ""};
  for (size_t i = 0; i < operands.size(); ++i) ctx.shapes += fmt::format("{}{}", i ? ", " : "", operands[i].shape());
  ctx.require<ValueError>(!operands.empty(), "no operands");
  std::string eq;
  for (char c : equation)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms(1);
  for (char c : lhs) {
    if (c == ',') terms.emplace_back();
    else terms.back().push_back(c);
  }
  ctx.require<ValueError>(terms.size() == operands.size(), "{} terms for {} operands", terms.size(), operands.size());

  std::vector<Term> ts;
  std::map<int, int> count;  // how often each label appears on the left
  int64_t ellipsis_dims = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const Labels labels = input_labels(terms[i], operands[i].dim(), ctx);
    for (int l : labels) ellipsis_dims = std::max<int64_t>(ellipsis_dims, -l), count[l]++;
    ts.push_back(diagonals({operands[i], labels}, ctx));
  }
  const Labels output = output_labels(eq, arrow, count, ellipsis_dims, ctx);
  check_sizes(ts, ctx);
  return permuted(contract_all(ts, output), output).v;
}

}  // namespace tg
