// Attention as one differentiable op, scaled_dot_product_attention, and the recorded ops its backward is
// made of. The backward is one path: an ordinary backward runs those ops unrecorded (the fused core kernels,
// nothing else), and create_graph records the very same ops, each with its own derivative, so that the
// gradients can be differentiated again. Results follow their operands' memory order (memory_order), so
// whoever lays out q, k and v decides the layout of the output and of the gradients.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "autograd/functions.h"

namespace tg {
namespace {

// x's dims from outermost to innermost in memory: by stride, size-1 and broadcast dims first (their place
// does not matter), ties in dim order.
std::vector<int64_t> memory_order(const Tensor& x) {
  std::vector<int64_t> order(x.dim());
  std::iota(order.begin(), order.end(), 0);
  auto stride = [&x](int64_t d) {
    return x.size(d) == 1 || x.strides()[d] == 0 ? std::numeric_limits<int64_t>::max() : x.strides()[d];
  };
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return stride(a) > stride(b); });
  return order;
}

std::vector<int64_t> inverse(const std::vector<int64_t>& order) {
  std::vector<int64_t> inv(order.size());
  for (size_t i = 0; i < order.size(); ++i) inv[order[i]] = int64_t(i);
  return inv;
}

// An empty tensor of `shape` laid out in memory in the dim order of `like` when like has that rank and its
// last dim innermost (rows that GEMM can write), else contiguous.
Tensor empty_as(const Shape& shape, DType dtype, const Tensor& like) {
  const std::vector<int64_t> order = memory_order(like);
  if (like.dim() != int64_t(shape.size()) || order.back() != like.dim() - 1) return empty(shape, dtype);
  Shape in_memory;
  for (int64_t d : order) in_memory.push_back(shape[d]);
  return empty(in_memory, dtype).permute(inverse(order));
}

// x / r, walked in x's memory order, so that the result keeps x's layout (div's result is contiguous).
Variable div_in_order(const Variable& x, double r) {
  const std::vector<int64_t> order = memory_order(x.value());
  return (x.permute(order) / r).permute(inverse(order));
}

// a @ b (2 or more dims each) laid out as `like`, bit for bit matmul's elements; recorded with matmul's
// derivative, dA = dC·Bᵀ and dB = Aᵀ·dC.
Variable matmul_as(const Variable& a, const Variable& b, const Tensor& like) {
  Shape shape = broadcast_shapes(Shape(a.shape().begin(), a.shape().end() - 2),
                                 Shape(b.shape().begin(), b.shape().end() - 2), "scaled_dot_product_attention");
  shape.push_back(a.size(-2));
  shape.push_back(b.size(-1));
  Tensor out = empty_as(shape, a.dtype(), like);
  matmul_out(out, a.value(), b.value());
  if (!is_recorded({a, b})) return record("matmul_as", std::move(out), {a, b}, nullptr);  // no closure copies a, b
  return record("matmul_as", out, {a, b}, [a, b](const Variable& dC, const Variable&) -> Grads {
    return {a.requires_grad() ? matmul(dC, b.mT()) : Variable(), b.requires_grad() ? matmul(a.mT(), dC) : Variable()};
  });
}

// x·m with m ∈ {0, scale} given by dropout's bits (the dropped attention weights): linear and diagonal, so
// its derivative is itself.
Variable dropped(const Variable& x, const Tensor& keep, double scale) {
  return record("attention_dropout", masked_scale(x.value(), keep, scale), {x},
                [keep, scale](const Variable& dy, const Variable&) -> Grads { return {dropped(dy, keep, scale)}; });
}

// dS = P·(g - Σ g·P) along the last dim with g = dPd·m (m the dropout's, none when keep is undefined): the
// gradient of the scores through softmax and dropout, one core pass. Its derivative, for an upstream h:
// d(dPd) = m·P·(h - Σ h·P) (this op again, without dropout, then m), dP = h·(g - Σ g·P) - g·Σ h·P.
Variable softmax_grad(const Variable& dPd, const Variable& P, const Tensor& keep, double scale) {
  Tensor dS = keep.defined() ? dropout_softmax_backward(dPd.value(), P.value(), keep, scale)
                             : softmax_backward(dPd.value(), P.value(), -1);
  if (!is_recorded({dPd, P})) return record("attention_softmax_grad", std::move(dS), {dPd, P}, nullptr);
  auto backward = [dPd, P, keep, scale](const Variable& h, const Variable&) -> Grads {
    const Variable g = keep.defined() ? dropped(dPd, keep, scale) : dPd;
    const Variable dg = softmax_grad(h, P, Tensor(), 1);
    return {keep.defined() ? dropped(dg, keep, scale) : dg,
            h * (g - sum(g * P, {-1}, true)) - g * sum(h * P, {-1}, true)};
  };
  return record("attention_softmax_grad", dS, {dPd, P}, backward);
}

// Gradients of q and k from dS, the gradient of the scores S = (q/√d)·kᵀ: dq = dS·k/√d, dk = dSᵀ·(q/√d),
// each laid out as its operand.
Grads scores_grads(const Variable& dS, const Variable& q, const Variable& k, double root_d) {
  return {div_in_order(matmul_as(dS, k, q.value()), root_d), matmul_as(dS.mT(), div_in_order(q, root_d), k.value())};
}

// The forward's softmax output P as a function of q and k, without computing it again: P = softmax(S) with S
// the masked scores, so dS = P·(dP - Σ dP·P) (masked entries have P = 0 and get none), then scores_grads.
Variable attention_weights(const Variable& q, const Variable& k, const Tensor& P, double root_d) {
  if (!is_recorded({q, k})) return record("attention_weights", P, {q, k}, nullptr);  // as matmul_as
  return record("attention_weights", P, {q, k}, [q, k, root_d](const Variable& dP, const Variable& Pv) -> Grads {
    return scores_grads(softmax_grad(dP, Pv, Tensor(), 1), q, k, root_d);
  }, true);
}

// A mask broadcastable to (..., S_q, S_k) cut to rows [r0, r1) and keys [0, c1) (size-1 dims stay).
Tensor mask_block(const Tensor& mask, int64_t r0, int64_t r1, int64_t c1) {
  if (!mask.defined()) return mask;
  Tensor m = mask.size(-1) == 1 ? mask : mask.slice(-1, 0, c1);
  return m.dim() < 2 || m.size(-2) == 1 ? m : m.slice(-2, r0, r1);
}

// Causal attention by row blocks: the queries [r0, r1) see only keys [0, r1 + S_k - S_q), so each block is
// one non-causal call on its slice of k and v with the causality of its last (diagonal) tile as a bool mask.
// The products and exponentials above the diagonal tiles are not computed: about (1 + 1/n)/2 of the full
// work for n blocks. The block outputs are joined in q's memory order (the layout the one call would give).
// Each block costs a pass over the whole of k's and v's gradients (its slices' gradients are added into them)
// and the join a copy of the output: blocks of fewer than 64 rows cost more than the products they skip
// (bench/RESULTS.md, "The causal blocks" under "our own GEMM kernel on every size").
Variable attend(const Variable& q, const Variable& k, const Variable& v, const Tensor& blocked, const Tensor& added,
                double dropout_p, Generator* gen);

Variable causal_attention(const Variable& q, const Variable& k, const Variable& v, const Tensor& blocked,
                          const Tensor& added, double dropout_p, Generator* gen) {
  const int64_t S_q = q.size(-2), S_k = k.size(-2), offset = S_k - S_q;
  check<ShapeError>(offset >= 0, "scaled_dot_product_attention: is_causal needs at least as many keys as queries, "
                    "got q {} and k {}", q.shape(), k.shape());
  const int64_t rows = std::max<int64_t>(64, (S_q + 7) / 8);  // at most 8 blocks, none under 64 rows
  const std::vector<int64_t> order = memory_order(q.value());
  const int64_t at = std::find(order.begin(), order.end(), q.dim() - 2) - order.begin();  // S_q's place in memory
  std::vector<Variable> parts;
  for (int64_t r0 = 0; r0 < S_q; r0 += rows) {
    const int64_t r1 = std::min(S_q, r0 + rows), c1 = r1 + offset;
    const Tensor future = gt(arange(0, double(c1), 1, f64).unsqueeze(0),
                             arange(double(r0 + offset), double(r1 + offset), 1, f64).unsqueeze(1));  // (r, c1)
    const Tensor user = mask_block(blocked, r0, r1, c1);
    Variable out = attend(q.slice(-2, r0, r1), k.slice(-2, 0, c1), v.slice(-2, 0, c1),
                          user.defined() ? logical_or(user, future) : future, mask_block(added, r0, r1, c1), dropout_p,
                          gen);
    parts.push_back(out.permute(order));
  }
  return parts.size() == 1 ? parts[0].permute(inverse(order)) : cat(parts, at).permute(inverse(order));
}

// P = softmax(S), S = q·kᵀ/√d + masks, Pd = P·m (dropout), O = Pd·v.  With s = 1/√d:
// dv = Pdᵀ·dO, dP = (dO·vᵀ)·m, dS = P·(dP - Σ dP·P), dq = s·dS·k, dk = s·dSᵀ·q.  The backward keeps P and
// the bits, and neither the scores nor Pd; q/√d is formed as the composition forms it (so the outputs agree
// to the bit) but not kept.
Variable attend(const Variable& q, const Variable& k, const Variable& v, const Tensor& blocked, const Tensor& added,
                double dropout_p, Generator* gen) {
  const double root_d = std::sqrt(double(q.size(-1)));
  Tensor scores = tg::matmul(div_in_order(q.detach(), root_d).value(), k.value().mT());  // (..., S_q, S_k)
  if (added.defined()) scores = tg::add(scores, added);
  const Tensor P = tg::masked_softmax(scores, blocked);  // the bits of masked_fill(-inf) then softmax
  scores = Tensor();
  Tensor Pd = P, keep;
  double scale = 1;
  if (dropout_p > 0) {
    DropoutResult r = tg::dropout(P, dropout_p, gen);
    Pd = r.output, keep = r.keep, scale = r.scale;
  }
  const Tensor out = matmul_as(Variable(Pd), v.detach(), q.value()).value();  // (..., S_q, d_v)
  return record("scaled_dot_product_attention", out, {q, k, v}, [q, k, v, P, keep, scale, root_d](
                                                                    const Variable& dO, const Variable&) -> Grads {
    const Variable Pv = attention_weights(q, k, P, root_d);
    const Variable dS = softmax_grad(matmul(dO, v.mT()), Pv, keep, scale);
    Grads g = scores_grads(dS, q, k, root_d);
    g.push_back(matmul_as((keep.defined() ? dropped(Pv, keep, scale) : Pv).mT(), dO, v.value()));
    return g;
  });
}

}  // namespace

// The checks, the polarity of the bool mask (allowed = !blocked) and the causal split; attend() does the rest.
Variable scaled_dot_product_attention(const Variable& q, const Variable& k, const Variable& v, const SdpaOptions& o) {
  const bool fits = q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2 && q.size(-1) == k.size(-1) &&
                    k.size(-2) == v.size(-2);
  check<ShapeError>(fits, "scaled_dot_product_attention: q {}, k {} and v {} do not fit (..., S_q, d), (..., S_k, d), "
                    "(..., S_k, d_v)", q.shape(), k.shape(), v.shape());
  check<ValueError>(o.dropout_p >= 0 && o.dropout_p <= 1, "scaled_dot_product_attention: dropout_p must be in [0, 1], "
                    "got {}", o.dropout_p);
  check<ValueError>(!(o.allowed.defined() && o.blocked.defined()),
                    "scaled_dot_product_attention: give allowed or blocked, not both (one is the other's negation)");
  for (const Tensor* m : {&o.allowed, &o.blocked})
    check<DTypeError>(!m->defined() || m->dtype() == boolean, "scaled_dot_product_attention: {} must be bool, got {}",
                      m == &o.allowed ? "allowed" : "blocked", m->dtype());
  const Tensor blocked = o.allowed.defined() ? logical_not(o.allowed) : o.blocked;
  if (o.is_causal) return causal_attention(q, k, v, blocked, o.added, o.dropout_p, o.gen);
  return attend(q, k, v, blocked, o.added, o.dropout_p, o.gen);
}

}  // namespace tg
