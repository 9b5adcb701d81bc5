// Differentiable functions of neural networks, fused where the composition would be unstable or wasteful:
// softmax, log_softmax, layer_norm, embedding / embedding_bag / index_select, dropout and cross_entropy.
#include <cmath>
#include <limits>

#include "autograd/functions.h"
#include "core/random.h"

namespace tg {
namespace {

// The adjoint of index_select: zeros of `shape` with src added at `index` along dim (repeats add up).
Variable index_select_backward(const Variable& src, const Shape& shape, int64_t dim, const Tensor& index) {
  Tensor out = index_add(zeros(shape, src.dtype()), dim, index, src.value());
  return record("index_select_backward", out, {src}, [dim, index](const Variable& d, const Variable&) -> Grads {
    return {index_select(d, dim, index)};
  });
}

// The adjoint of embedding_bag: (V, D) zeros with each bag's row of d added at its entries. Its own adjoint
// is embedding_bag again.
Variable embedding_bag_backward(const Variable& d, const Tensor& bags, int64_t V, int64_t padding_idx) {
  Tensor out = embedding_bag_sum_backward(d.value(), bags, V, padding_idx);
  return record("embedding_bag_backward", out, {d}, [bags, padding_idx](const Variable& dw, const Variable&) -> Grads {
    return {embedding_bag(dw, bags, padding_idx)};
  });
}

// Records r.output = x·m with m ∈ {0, r.scale} given by r.keep: dx = dy·m.
Variable record_masked(const char* op, const Variable& x, const DropoutResult& r) {
  return record(op, r.output, {x}, [keep = r.keep, scale = r.scale](const Variable& dy, const Variable&) -> Grads {
    if (!grad_mode_enabled()) return {Variable(masked_scale(dy.value(), keep, scale))};
    return {dy * Variable(masked_scale(ones(dy.shape(), dy.dtype()), keep, scale))};
  });
}

}  // namespace

// y = softmax(x).  dx = y·(dy - Σ dy·y): one core kernel, or the composition when the backward itself is
// recorded (create_graph), so that it can be differentiated again.
Variable softmax(const Variable& x, int64_t dim) {
  return record("softmax", tg::softmax(x.value(), dim), {x}, [dim](const Variable& dy, const Variable& y) -> Grads {
    if (!grad_mode_enabled()) return {Variable(softmax_backward(dy.value(), y.value(), dim))};
    return {y * (dy - sum(dy * y, {dim}, true))};
  }, true);
}
// y = x - logsumexp(x).  dx = dy - eʸ·Σ dy (one kernel unless recorded, as softmax).
Variable log_softmax(const Variable& x, int64_t dim) {
  return record("log_softmax", tg::log_softmax(x.value(), dim), {x}, [dim](const Variable& dy, const Variable& y) -> Grads {
    if (!grad_mode_enabled()) return {Variable(log_softmax_backward(dy.value(), y.value(), dim))};
    return {dy - exp(y) * sum(dy, {dim}, true)};
  }, true);
}

// y = x̂·w + b with x̂ = (x - μ)·rstd over the last k dims.  With g = dy·w:
// dx = rstd·(g - mean(g) - x̂·mean(g·x̂)), dw = dy·x̂ and db = dy (summed to their shapes).
// An ordinary backward runs the one-pass core kernel on the forward's x̂ and rstd. Under create_graph (or
// with a weight or bias that broadcasts to the normalised shape instead of having it) the composition runs,
// and x̂ and rstd are recomputed from x with differentiable functions, so that the second derivative sees
// their dependence on x. x itself is not kept (that would be a second copy of every normalised activation):
// x̂/rstd + mean gives it back to rounding, tied to x's autograd record.
Variable layer_norm(const Variable& x, int64_t k, const Variable& weight, const Variable& bias, double eps) {
  check<ShapeError>(k >= 1 && k <= x.dim(), "layer_norm: cannot normalise the last {} dims of a tensor of shape {}", k,
                    x.shape());
  const Shape rows(x.shape().end() - k, x.shape().end());
  const bool fused = (!weight || weight.shape() == rows) && (!bias || bias.shape() == rows);
  const bool same_dtype = (!weight || weight.dtype() == x.dtype()) && (!bias || bias.dtype() == x.dtype());
  // The affine part in normalize's pass where weight and bias have the normalised shape (the bits of mul then
  // add); broadcasting ones take mul and add.
  Normalized n = fused && same_dtype ? normalize(x.value(), k, eps, weight ? weight.value() : Tensor(),
                                                 bias ? bias.value() : Tensor())
                                     : normalize(x.value(), k, eps);
  Tensor y = n.affine.defined() ? n.affine : n.output;
  n.affine = Tensor();  // the output: not kept by the backward
  if (!fused || !same_dtype) {
    if (weight) y = tg::mul(y, weight.value());
    if (bias) y = tg::add(y, bias.value());
  }
  std::vector<int64_t> dims;
  for (int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  return record("layer_norm", y, {x, weight, bias}, [x_meta = x.meta(), weight, bias, n, dims, eps, fused](
                                                        const Variable& dy, const Variable&) -> Grads {
    if (fused && !grad_mode_enabled()) {
      LayerNormGrads g = layer_norm_backward(dy.value(), n.output, n.rstd, weight ? weight.value() : Tensor(), bool(bias));
      return {Variable(g.dx), Variable(g.dweight), bias ? Variable(g.dbias.reshape(bias.shape())) : Variable()};
    }
    Variable xhat(n.output), rstd(n.rstd);
    if (grad_mode_enabled()) {
      const Variable x(tg::add(tg::div(n.output, n.rstd), n.mean), x_meta);
      Variable centered = x - mean(x, dims, true);
      rstd = rsqrt(mean(centered * centered, dims, true) + eps);
      xhat = centered * rstd;
    }
    Variable g = weight ? dy * weight : dy;
    Variable dx = rstd * (g - mean(g, dims, true) - xhat * mean(g * xhat, dims, true));
    return {dx, weight ? dy * xhat : Variable(), bias ? dy : Variable()};
  });
}

Variable index_select(const Variable& x, int64_t dim, const Tensor& index) {
  Shape shape = x.shape();
  return record("index_select", tg::index_select(x.value(), dim, index), {x},
                [shape, dim, index](const Variable& dy, const Variable&) -> Grads {
                  return {index_select_backward(dy, shape, dim, index)};
                });
}

// y[..., :] = weight[indices[...], :].  dweight = rows of dy added at their indices, none at padding_idx:
// embedding_bag's adjoint with bags of one entry, which adds straight into its zeros and skips the padding
// entries (the bits of masking them and index_add, without the mask, the masked copy and index_add's clone).
Variable embedding(const Variable& weight, const Tensor& indices, int64_t padding_idx) {
  check<ShapeError>(weight.dim() == 2, "embedding: weight must be (num_embeddings, embedding_dim), got {}", weight.shape());
  check<DTypeError>(indices.dtype() == i64, "embedding: indices must be i64, got {}", indices.dtype());
  const int64_t V = weight.size(0), D = weight.size(1);
  check<IndexError>(padding_idx >= -1 && padding_idx < V, "embedding: padding_idx {} is out of range for {} embeddings "
                    "(-1 = none)", padding_idx, V);
  Tensor flat = indices.reshape({-1});
  for (int64_t i : flat.to_vector<int64_t>())
    check<IndexError>(i >= 0 && i < V, "embedding: index {} is out of range for {} embeddings", i, V);
  Shape out_shape = indices.shape();
  out_shape.push_back(D);
  Tensor y = tg::index_select(weight.value(), 0, flat).reshape(out_shape);
  return record("embedding", y, {weight}, [bags = flat.reshape({-1, 1}), V, D, padding_idx](
                                               const Variable& dy, const Variable&) -> Grads {
    return {embedding_bag_backward(dy.reshape({-1, D}), bags, V, padding_idx)};
  });
}

// y[m] = Σ_n W[i[m, n]] over the entries that are not padding.  dW[r] = Σ_{(m, n): i[m, n] = r} dy[m].
Variable embedding_bag(const Variable& weight, const Tensor& indices, int64_t padding_idx) {
  check<ShapeError>(weight.dim() == 2, "embedding_bag: weight must be (num_embeddings, embedding_dim), got {}",
                    weight.shape());
  check<DTypeError>(indices.dtype() == i64, "embedding_bag: indices must be i64, got {}", indices.dtype());
  check<ShapeError>(indices.dim() >= 1 && indices.size(-1) >= 1, "embedding_bag: indices must be (..., N) with N >= 1, "
                    "got {}", indices.shape());
  const int64_t V = weight.size(0), D = weight.size(1);
  Tensor bags = indices.reshape({indices.numel() / indices.size(-1), indices.size(-1)});  // (M, N)
  Shape out_shape = indices.shape();
  out_shape.back() = D;
  Tensor y = embedding_bag_sum(weight.value(), bags, padding_idx).reshape(out_shape);
  return record("embedding_bag", y, {weight}, [bags, V, D, padding_idx](const Variable& dy, const Variable&) -> Grads {
    return {embedding_bag_backward(dy.reshape({-1, D}), bags, V, padding_idx)};
  });
}

// y = x·m with m ∈ {0, 1/(1-p)}.  dx = dy·m (the same mask), kept as one bit per element: 32 times less
// than an f32 mask, and dropout runs on the largest activations (attention weights, the feed-forward).
Variable dropout(const Variable& x, double p, bool training, Generator* gen) {
  check<ValueError>(p >= 0 && p <= 1, "dropout: probability must be in [0, 1], got {}", p);
  if (!training || p == 0) return x;
  return record_masked("dropout", x, tg::dropout(x.value(), p, gen));
}

// y = relu(x)·m: dx = dy·m where x > 0, one mask for both (m's bits and x > 0's), one pass each way where
// relu then dropout took two passes forward and two back over the feed-forward's largest activation.
Variable relu_dropout(const Variable& x, double p, bool training, Generator* gen) {
  check<ValueError>(p >= 0 && p <= 1, "relu_dropout: probability must be in [0, 1], got {}", p);
  if (!training || p == 0) return relu(x);
  return record_masked("relu_dropout", x, tg::relu_dropout(x.value(), p, gen));
}

}  // namespace tg
