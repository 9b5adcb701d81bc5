// Differentiable functions of neural networks, fused where the composition would be unstable or wasteful:
// softmax, log_softmax, layer_norm, embedding / embedding_bag / index_select, dropout and cross_entropy.
// A fused backward kernel is an op of its own (softmax_backward, layer_norm_backward, ...) with its own
// derivative, so that an ordinary backward and a recorded (create_graph) one run the same code.
#include <cmath>
#include <limits>

#include "autograd/functions.h"
#include "core/random.h"

namespace tg {
namespace {

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
    return {masked_scale(dy, keep, scale)};
  });
}

// dx = y·(dy - Σ dy·y) as an op (one kernel), so that a recorded backward can be differentiated again. It is
// its own adjoint in dy: d(dy) = softmax_backward(ddx, y), and d(y) = ddx·(dy - Σ dy·y) - dy·Σ ddx·y.
Variable softmax_backward(const Variable& dy, const Variable& y, int64_t dim) {
  Tensor dx = tg::softmax_backward(dy.value(), y.value(), dim);
  // An ordinary backward's copies nothing into a closure (as mul).
  if (!is_recorded({dy, y})) return record("softmax_backward", std::move(dx), {dy, y}, nullptr);
  return record("softmax_backward", dx, {dy, y},
                [dy, y, dim](const Variable& ddx, const Variable&) -> Grads {
                  return {softmax_backward(ddx, y, dim),
                          ddx * (dy - sum(dy * y, {dim}, true)) - dy * sum(ddx * y, {dim}, true)};
                });
}

// dx = dy - eʸ·Σ dy as an op (one kernel): d(dy) = ddx - Σ ddx·eʸ, d(y) = -ddx·eʸ·Σ dy.
Variable log_softmax_backward(const Variable& dy, const Variable& y, int64_t dim) {
  Tensor dx = tg::log_softmax_backward(dy.value(), y.value(), dim);
  if (!is_recorded({dy, y})) return record("log_softmax_backward", std::move(dx), {dy, y}, nullptr);
  return record("log_softmax_backward", dx, {dy, y},
                [dy, y, dim](const Variable& ddx, const Variable&) -> Grads {
                  const Variable p = exp(y);
                  return {ddx - sum(ddx * p, {dim}, true), -(ddx * p * sum(dy, {dim}, true))};
                });
}

// What layer_norm's backward keeps of x: x̂ = (x - μ)·rstd over the last k dims, its statistics μ and rstd
// (the normalised dims kept as 1), and x's autograd record, not x (that would be a second copy of every
// normalised activation). x̂/rstd + μ gives x back to rounding where the backward's own derivative needs it.
struct LayerNormSaved {
  Tensor xhat, mu, rstd;
  std::shared_ptr<AutogradMeta> x;
  int64_t k;
  double eps;

  std::vector<int64_t> dims() const {
    std::vector<int64_t> d;
    for (int64_t i = xhat.dim() - k; i < xhat.dim(); ++i) d.push_back(i);
    return d;
  }
  // x as an input of the backward op: x's record, with x̂ standing in for its value (the same shape and dtype;
  // no backward reads it).
  Variable input() const { return Variable(xhat, x); }
  // x̂ and rstd recomputed from x with differentiable functions, on x's record.
  std::pair<Variable, Variable> recomputed() const {
    const Variable x_again(tg::add(tg::div(xhat, rstd), mu), x);
    const Variable centered = x_again - mean(x_again, dims(), true);
    const Variable r = rsqrt(mean(centered * centered, dims(), true) + eps);
    return {centered * r, r};
  }
};

struct LayerNormBackward {
  Variable dx, dweight, dbias;
};

// layer_norm's gradients from the one-pass kernel, as an op of dy, x and weight whose three outputs are three
// nodes of that name. Per row, with g = dy·w, P(g) = g - mean(g) - x̂·mean(g·x̂) and as x moves by δ,
// x̂ moves by rstd·P(δ) and rstd by -rstd²·mean(x̂·δ):
//   dx = rstd·P(g):  with v = rstd·P(ddx), d(dy) = v·w, d(w) = Σ dy·v and
//                    d(x) = -rstd·(x̂·mean(ddx·dx) + v·mean(g·x̂) + dx·mean(ddx·x̂));
//   dweight = Σ dy·x̂:  d(dy) = ddw·x̂, d(x) = rstd·P(dy·ddw), this op's dx with weight ddw;
//   dbias = Σ dy:  d(dy) = ddb.
// v is this op's dx of ddx without weight, and x̂ and rstd are recomputed from x, so that these derivatives
// can be differentiated again.
LayerNormBackward layer_norm_backward(const Variable& dy, const LayerNormSaved& s, const Variable& weight,
                                      bool with_bias) {
  LayerNormGrads g = tg::layer_norm_backward(dy.value(), s.xhat, s.rstd, weight ? weight.value() : Tensor(), with_bias);
  const Variable x = s.input();
  const Shape rows(s.xhat.shape().end() - s.k, s.xhat.shape().end());
  Tensor dbias = with_bias ? g.dbias.reshape(rows) : Tensor();
  // An ordinary backward's: no closures, which would copy s three times (as mul).
  if (!is_recorded({dy, x, weight})) return {Variable(g.dx), Variable(g.dweight), Variable(dbias)};
  LayerNormBackward out;
  out.dx = record("layer_norm_backward", g.dx, {dy, x, weight}, [dy, s, weight](const Variable& ddx,
                                                                                const Variable& dx) -> Grads {
    const auto [xhat, rstd] = s.recomputed();
    const std::vector<int64_t> dims = s.dims();
    const Variable v = layer_norm_backward(ddx, s, Variable(), false).dx, gy = weight ? dy * weight : dy;
    const Variable d_x = -rstd * (xhat * mean(ddx * dx, dims, true) + v * mean(gy * xhat, dims, true) +
                                  dx * mean(ddx * xhat, dims, true));
    return {weight ? v * weight : v, d_x, weight ? dy * v : Variable()};
  }, true);
  if (weight)
    out.dweight = record("layer_norm_backward", g.dweight, {dy, x}, [dy, s](const Variable& ddw,
                                                                            const Variable&) -> Grads {
      return {ddw * s.recomputed().first, layer_norm_backward(dy, s, ddw, false).dx};
    });
  if (with_bias)
    out.dbias = record("layer_norm_backward", dbias, {dy}, [shape = dy.shape()](const Variable& ddb,
                                                                               const Variable&) -> Grads {
      return {ddb.expand(shape)};
    });
  return out;
}

}  // namespace

// y = softmax(x).  dx = y·(dy - Σ dy·y).
Variable softmax(const Variable& x, int64_t dim) {
  return record("softmax", tg::softmax(x.value(), dim), {x}, [dim](const Variable& dy, const Variable& y) -> Grads {
    return {softmax_backward(dy, y, dim)};
  }, true);
}
// y = x - logsumexp(x).  dx = dy - eʸ·Σ dy.
Variable log_softmax(const Variable& x, int64_t dim) {
  return record("log_softmax", tg::log_softmax(x.value(), dim), {x}, [dim](const Variable& dy, const Variable& y) -> Grads {
    return {log_softmax_backward(dy, y, dim)};
  }, true);
}

// y = x̂·w + b with x̂ = (x - μ)·rstd over the last k dims.  With g = dy·w:
// dx = rstd·(g - mean(g) - x̂·mean(g·x̂)), dw = Σ dy·x̂ and db = Σ dy (layer_norm_backward above). A weight
// or bias that broadcasts to the normalised shape instead of having it (or has another dtype) is applied by
// mul and add after the normalisation.
Variable layer_norm(const Variable& x, const Shape& normalized_shape, const Variable& weight, const Variable& bias,
                    double eps) {
  const int64_t k = int64_t(normalized_shape.size());
  check<ShapeError>(k >= 1 && k <= x.dim() && Shape(x.shape().end() - k, x.shape().end()) == normalized_shape,
                    "layer_norm: input {} does not end in normalized_shape {}", x.shape(), normalized_shape);
  const Shape& rows = normalized_shape;
  auto fits = [&](const Variable& p) { return !p || (p.shape() == rows && p.dtype() == x.dtype()); };
  if (!fits(weight) || !fits(bias)) {
    Variable y = layer_norm(x, rows, eps);
    if (weight) y = y * weight;
    return bias ? y + bias : y;
  }
  // The affine part in normalize's pass (the bits of mul then add).
  Normalized n = normalize(x.value(), k, eps, weight ? weight.value() : Tensor(), bias ? bias.value() : Tensor());
  Tensor y = n.affine.defined() ? n.affine : n.output;
  LayerNormSaved s{n.output, n.mean, n.rstd, x.meta(), k, eps};
  return record("layer_norm", y, {x, weight, bias}, [s, weight, with_bias = bool(bias)](const Variable& dy,
                                                                                        const Variable&) -> Grads {
    LayerNormBackward g = layer_norm_backward(dy, s, weight, with_bias);
    return {g.dx, g.dweight, g.dbias};
  });
}

Variable layer_norm(const Variable& x, const Shape& normalized_shape, double eps) {
  return layer_norm(x, normalized_shape, Variable(), Variable(), eps);
}

// y = x's slices at index along dim.  dx = zeros with dy's slices added at index (repeats add up).
Variable index_select(const Variable& x, int64_t dim, const Tensor& index) {
  return record("index_select", tg::index_select(x.value(), dim, index), {x},
                [shape = x.shape(), dim, index](const Variable& dy, const Variable&) -> Grads {
                  return {index_add(Variable(zeros(shape, dy.dtype())), dim, index, dy)};
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
