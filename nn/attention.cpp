// Multi-head attention as batched GEMMs over all heads at once: project Q, K, V (self-attention in one
// product, split into views), view them as (B, H, S, d_k), one matmul for every head's scores, masks, softmax,
// one matmul with V, merge the heads, out_proj; without need_weights the middle (scores to heads) is one op,
// scaled_dot_product_attention. The masks are folded into one bool mask (filled with -inf) and one additive
// float mask, so a query whose keys are all masked has an all -inf row, which the core softmax turns into
// zeros, and whose backward y·(dy - Σ dy·y) is then zero too: no NaN in the output or the gradients.
#include "nn/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "nn/init.h"

namespace tg::nn {
namespace {

constexpr const char* kOp = "MultiHeadAttention";

MultiHeadAttentionOptions resolved(MultiHeadAttentionOptions o) {
  check<ValueError>(o.d_model > 0 && o.num_heads > 0, "{}: d_model and num_heads must be positive, got {} and {}",
                    kOp, o.d_model, o.num_heads);
  check<ValueError>(o.d_model % o.num_heads == 0, "{}: d_model {} is not divisible by num_heads {}", kOp,
                    o.d_model, o.num_heads);
  check<ValueError>(o.dropout >= 0 && o.dropout < 1, "{}: dropout must be in [0, 1), got {}", kOp, o.dropout);
  check<ValueError>(o.kdim >= 0 && o.vdim >= 0, "{}: kdim and vdim must be >= 0, got {} and {}", kOp, o.kdim,
                    o.vdim);
  check<DTypeError>(is_floating(o.dtype), "{}: dtype must be f32 or f64, got {}", kOp, o.dtype);
  if (o.kdim == 0) o.kdim = o.d_model;
  if (o.vdim == 0) o.vdim = o.d_model;
  return o;
}

// torch's xavier_uniform_ treats in_proj_weight (3E, E) as one matrix: U(±√(6 / (E + 3E))).
Tensor xavier_uniform(const Shape& shape, DType dtype) { return init::xavier_uniform(empty(shape, dtype)); }

// The masks of one call, broadcastable to the scores (B, H, S_q, S_k): `blocked` (bool, true = -inf)
// and `added` (float, added to the scores); either may be undefined.
struct Masks {
  Tensor blocked, added;
  void add(const Tensor& mask, DType dtype) {
    if (mask.dtype() == boolean) {
      blocked = blocked.defined() ? logical_or(blocked, mask) : mask;
    } else {
      Tensor f = mask.to(dtype);
      added = added.defined() ? tg::add(added, f) : f;
    }
  }
};

// `past` is the cache's length before the call (query i is at position past + i); the causal mask is left
// to scaled_dot_product_attention when `fused_causal`.
Masks collect_masks(const MhaCall& call, int64_t B, int64_t H, int64_t S_q, int64_t S_k, int64_t past,
                    bool fused_causal, DType dtype) {
  Masks m;
  if (call.key_padding_mask.defined()) m.add(call.key_padding_mask.reshape({B, 1, 1, S_k}), dtype);
  if (call.attn_mask.defined())
    m.add(call.attn_mask.dim() == 3 ? call.attn_mask.reshape({B, H, S_q, S_k}) : call.attn_mask, dtype);
  if (call.is_causal && !fused_causal) {  // key j > query i + past is in the future
    const Tensor keys = arange(0, double(S_k), 1, f64), queries = arange(double(past), double(past + S_q), 1, f64);
    m.add(gt(keys.unsqueeze(0), queries.unsqueeze(1)), dtype);
  }
  return m;
}

Variable apply_masks(Variable scores, const Masks& m) {
  // The -inf at masked positions is intended, so AnomalyGuard does not flag these two ops. It still checks
  // the scores before them and the softmax after, which is finite (a fully masked row gives zeros).
  AnomalyGuard masks_are_not_anomalies(false);
  if (m.added.defined()) scores = scores + Variable(m.added);
  if (m.blocked.defined()) scores = masked_fill(scores, m.blocked, -std::numeric_limits<double>::infinity());
  return scores;
}

// Whether a and b are one input (self-attention): the same autograd record and the same view of one storage.
bool same_input(const Variable& a, const Variable& b) {
  const Tensor &x = a.value(), &y = b.value();
  return a.meta() == b.meta() && x.storage() == y.storage() && x.offset() == y.offset() && x.shape() == y.shape() &&
         x.strides() == y.strides();
}

// `cached` (B, H, T, d) followed by x (B, H, S, d), as a view of `buffer` (B, H, capacity, d). Only x is copied
// while `cached` is the buffer's first T positions and the buffer has room; otherwise a new buffer of twice the
// capacity (at least T + S, at least 16) takes both. Positions below T are never written again, so views
// handed out earlier keep their values.
Tensor append_to(Tensor& buffer, const Variable& cached, const Tensor& x) {
  const int64_t T = cached ? cached.size(2) : 0, S = x.size(2);
  const bool holds = buffer.defined() && cached && cached.value().storage() == buffer.storage() &&
                     cached.value().offset() == buffer.offset() && cached.value().strides() == buffer.strides();
  if (!holds || buffer.size(2) < T + S) {
    Shape shape = x.shape();
    shape[2] = std::max({T + S, int64_t(16), holds ? 2 * buffer.size(2) : int64_t(0)});
    Tensor grown = empty(shape, x.dtype());
    if (T > 0) grown.narrow(2, 0, T).copy_(cached.value());
    buffer = grown;
  }
  buffer.narrow(2, T, S).copy_(x);
  return buffer.narrow(2, 0, T + S);
}

}  // namespace

MultiHeadAttention::MultiHeadAttention(const MultiHeadAttentionOptions& options)
    : options_(resolved(options)),
      head_dim_(options_.d_model / options_.num_heads),
      out_proj_({.in_features = options_.d_model, .out_features = options_.d_model, .bias = options_.bias,
                 .dtype = options_.dtype}) {
  const int64_t E = options_.d_model;
  const DType dt = options_.dtype;
  if (options_.kdim == E && options_.vdim == E) {
    in_proj_weight_ = register_parameter("in_proj_weight", xavier_uniform({3 * E, E}, dt));
  } else {  // torch names and initialises the three projections separately then
    q_proj_weight_ = register_parameter("q_proj_weight", xavier_uniform({E, E}, dt));
    k_proj_weight_ = register_parameter("k_proj_weight", xavier_uniform({E, options_.kdim}, dt));
    v_proj_weight_ = register_parameter("v_proj_weight", xavier_uniform({E, options_.vdim}, dt));
  }
  if (options_.bias) {
    in_proj_bias_ = register_parameter("in_proj_bias", zeros({3 * E}, dt));
    init::zeros(out_proj_.bias().value());  // torch zeroes it after Linear's init
  }
  register_layer("out_proj", out_proj_);
}

// The per-head views (B, H, S, d_k) of (B, S, E) projections are laid out (B, S, H, d_k) in memory, and
// scaled_dot_product_attention lays out its output and gradients as its operands are: the merge of the heads
// after it and the gradients' way back into the projections are then views, not copies.
std::array<Variable, 3> MultiHeadAttention::project(const Variable& query, const Variable& key,
                                                    const Variable& value) const {
  const int64_t E = options_.d_model, H = options_.num_heads;
  std::array<Variable, 3> out;
  if (in_proj_weight_ && same_input(query, key) && same_input(key, value)) {  // self-attention: one product
    std::vector<Variable> qkv = split(linear(query, in_proj_weight_, in_proj_bias_), {E, E, E}, -1);
    std::copy(qkv.begin(), qkv.end(), out.begin());
  } else {
    const Variable* inputs[3] = {&query, &key, &value};
    const Variable* separate[3] = {&q_proj_weight_, &k_proj_weight_, &v_proj_weight_};
    for (int i = 0; i < 3; ++i) {
      Variable w = in_proj_weight_ ? in_proj_weight_.slice(0, i * E, (i + 1) * E) : *separate[i];  // (E, in)
      Variable b = in_proj_bias_ ? in_proj_bias_.slice(0, i * E, (i + 1) * E) : Variable();
      out[i] = linear(*inputs[i], w, b);                                                           // (B, S, E)
    }
  }
  for (Variable& x : out)
    x = x.reshape({x.size(0), x.size(1), H, head_dim_}).permute({0, 2, 1, 3});  // (B, H, S, d_k)
  return out;
}

AttentionOutput MultiHeadAttention::forward(const Variable& query_in, const Variable& key_in,
                                            const Variable& value_in, const MhaCall& call) {
  check_inputs(query_in, key_in, value_in);
  if (call.cache) check_cache(query_in, *call.cache);
  check_masks(query_in, key_in, call);
  const bool bf = options_.batch_first;
  const Variable query = bf ? query_in : query_in.transpose(0, 1);  // (B, S_q, E)
  // Transposed once for self-attention, so that project() still sees one input.
  const Variable key = same_input(key_in, query_in) ? query : bf ? key_in : key_in.transpose(0, 1);  // (B, S_k, kdim)
  const Variable value = same_input(value_in, key_in) ? key : bf ? value_in : value_in.transpose(0, 1);
  const int64_t past = call.cache ? call.cache->length() : 0;
  const int64_t B = query.size(0), S_q = query.size(1), S_k = past + key.size(1), H = options_.num_heads;

  auto [q, k, v] = project(query, key, value);                                 // (B, H, S, d_k)
  extend(k, v, call.cache);                                                    // (B, H, S_k, d_k)
  const bool fused_causal = call.is_causal && !call.need_weights && S_k == past + S_q;
  const Masks masks = collect_masks(call, B, H, S_q, S_k, past, fused_causal, options_.dtype);
  Variable weights, heads;                                                     // (B, H, S_q, S_k), (B, H, S_q, d_k)
  if (call.need_weights) {  // the composition, whose weights are returned
    Variable scores = matmul(q / std::sqrt(double(head_dim_)), k.mT());
    weights = dropout(softmax(apply_masks(scores, masks), -1), options_.dropout, is_training());
    heads = matmul(weights, v);
  } else {  // one op that keeps neither the scores nor the dropped weights for the backward
    heads = scaled_dot_product_attention(q, k, v, {.allowed = Tensor(), .blocked = masks.blocked,
                                                   .added = masks.added,
                                                   .dropout_p = is_training() ? options_.dropout : 0.0,
                                                   .is_causal = fused_causal});
  }
  Variable merged = heads.permute({0, 2, 1, 3}).reshape({B, S_q, options_.d_model});
  Variable output = out_proj_(merged);                                         // (B, S_q, E)
  if (!bf) output = output.transpose(0, 1);
  run_forward_hooks(query_in, output);

  AttentionOutput result{.output = output, .weights = {}};
  if (call.need_weights) result.weights = call.average_attn_weights ? mean(weights, {1}) : weights;
  return result;
}

void MultiHeadAttention::check_inputs(const Variable& query, const Variable& key, const Variable& value) const {
  const bool bf = options_.batch_first;
  const char* layout = bf ? "(B, S, width)" : "(S, B, width)";
  const int64_t widths[3] = {options_.d_model, options_.kdim, options_.vdim};
  const char* names[3] = {"query", "key", "value"};
  const Variable* xs[3] = {&query, &key, &value};
  for (int i = 0; i < 3; ++i) {
    check<ShapeError>(xs[i]->dim() == 3 && xs[i]->size(-1) == widths[i], "{}: {} must be {} with width {}, got {}",
                      kOp, names[i], layout, widths[i], xs[i]->shape());
    check<DTypeError>(xs[i]->dtype() == options_.dtype, "{}: {} is {}, the layer {}", kOp, names[i],
                      xs[i]->dtype(), options_.dtype);
  }
  const int b = bf ? 0 : 1, s = bf ? 1 : 0;
  check<ShapeError>(key.size(b) == value.size(b) && key.size(s) == value.size(s),
                    "{}: key and value differ in batch or length: {} vs {}", kOp, key.shape(), value.shape());
  check<ShapeError>(query.size(b) == key.size(b), "{}: query and key differ in batch size: {} vs {}", kOp,
                    query.shape(), key.shape());
}

void MultiHeadAttention::extend(Variable& k, Variable& v, KVCache* cache) const {
  if (!cache) return;
  if (k.requires_grad() || v.requires_grad() || (cache->keys && cache->keys.requires_grad()) ||
      (cache->values && cache->values.requires_grad())) {
    if (cache->keys) k = cat({cache->keys, k}, 2), v = cat({cache->values, v}, 2);
    cache->key_buffer = cache->value_buffer = Tensor();
  } else {
    k = Variable(append_to(cache->key_buffer, cache->keys, k.value()));
    v = Variable(append_to(cache->value_buffer, cache->values, v.value()));
  }
  cache->keys = k, cache->values = v;
}

void MultiHeadAttention::check_cache(const Variable& query, const KVCache& cache) const {
  if (!cache.keys && !cache.values) return;
  const Shape want{query.size(options_.batch_first ? 0 : 1), options_.num_heads, cache.length(), head_dim_};
  check<ShapeError>(cache.keys && cache.values && cache.keys.shape() == want && cache.values.shape() == want,
                    "{}: the KV cache's keys {} and values {} must both be (B, H, T, d_k) = {}", kOp,
                    cache.keys ? cache.keys.shape() : Shape{}, cache.values ? cache.values.shape() : Shape{}, want);
  check<DTypeError>(cache.keys.dtype() == options_.dtype && cache.values.dtype() == options_.dtype,
                    "{}: the KV cache is {}, the layer {}", kOp, cache.keys.dtype(), options_.dtype);
}

void MultiHeadAttention::check_masks(const Variable& query, const Variable& key, const MhaCall& call) const {
  const bool bf = options_.batch_first;
  const int64_t past = call.cache ? call.cache->length() : 0;
  const int64_t B = query.size(bf ? 0 : 1), S_q = query.size(bf ? 1 : 0), S_k = past + key.size(bf ? 1 : 0);
  const Tensor& kpm = call.key_padding_mask;
  const Tensor& am = call.attn_mask;
  for (const Tensor* m : {&kpm, &am}) {
    check<DTypeError>(!m->defined() || m->dtype() == boolean || is_floating(m->dtype()),
                      "{}: {} must be bool or float, got {}", kOp, m == &kpm ? "key_padding_mask" : "attn_mask",
                      m->dtype());
  }
  check<ShapeError>(!kpm.defined() || kpm.shape() == Shape{B, S_k},
                    "{}: key_padding_mask {} for key {}: expected {}", kOp, kpm.shape(), key.shape(), Shape{B, S_k});
  const Shape per_head{B * options_.num_heads, S_q, S_k};
  check<ShapeError>(!am.defined() || am.shape() == Shape{S_q, S_k} || am.shape() == per_head,
                    "{}: attn_mask {} for query {} and key {}: expected {} or {}", kOp, am.shape(), query.shape(),
                    key.shape(), Shape{S_q, S_k}, per_head);
}

}  // namespace tg::nn
