#pragma once
// Every differentiable function, each defined once, forward and backward side by side, in functions/{elementwise,
// reduce,shape,linalg,nn,attention,conv,pool,index,einsum,order,scan,layout,vector_norm}.cpp. Binary functions
// broadcast like NumPy; the engine sums broadcast gradients back to each input's shape.
#include <optional>
#include <string>
#include <vector>

#include "autograd/node.h"
#include "autograd/variable.h"
#include "core/conv.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/random.h"

namespace tg {

// ---- elementwise (functions/elementwise.cpp); binary ones promote dtypes as core's result_type ----
/// x converted to `dtype` (x itself when it already has it); the gradient is converted back to x's dtype.
Variable to(const Variable& x, DType dtype);
Variable add(const Variable& a, const Variable& b);
Variable sub(const Variable& a, const Variable& b);
Variable mul(const Variable& a, const Variable& b);
Variable div(const Variable& a, const Variable& b);
Variable neg(const Variable& x);
Variable exp(const Variable& x);
/// eˣ - 1, exact near 0 (std::expm1); gradient eˣ.
Variable expm1(const Variable& x);
Variable log(const Variable& x);
Variable sqrt(const Variable& x);
Variable rsqrt(const Variable& x);
Variable abs(const Variable& x);  ///< gradient sign(x), 0 at 0 (as PyTorch)
Variable tanh(const Variable& x);
Variable sigmoid(const Variable& x);
Variable erf(const Variable& x);
Variable relu(const Variable& x);  ///< gradient 0 at x = 0 (as PyTorch)
/// x·scale where `bits` (a packed mask of core/ops.h, one bit per element of x) is set, 0 elsewhere: the
/// backward of relu and dropout, and its own adjoint. ShapeError when bits does not hold x.numel() bits.
Variable masked_scale(const Variable& x, const Tensor& bits, double scale);
/// GELU (Hendrycks & Gimpel 2016): x·Φ(x), or the tanh approximation. At ±inf the limits: -0 and gradient 0
/// at -inf, +inf and gradient dy at +inf (PyTorch: NaN); so silu and mish.
Variable gelu(const Variable& x, bool tanh_approx = false);
/// x ** exponent for a constant exponent.
Variable pow(const Variable& x, double exponent);
/// a ** b elementwise (a > 0 where b's gradient is needed).
Variable pow(const Variable& a, const Variable& b);
/// Limits x to [lo, hi]; an absent bound does not limit. Gradient convention (PyTorch's clamp_backward): dy where
/// lo <= x <= hi, the bounds included (also when lo == hi), and 0 outside and at a NaN x (given a bound).
Variable clamp(const Variable& x, std::optional<double> lo, std::optional<double> hi);
/// Elementwise min/max; where a == b each side gets half the gradient (the shares add up to it).
Variable minimum(const Variable& a, const Variable& b);
Variable maximum(const Variable& a, const Variable& b);
/// cond ? a : b with a bool cond; the gradient goes to the side that was picked.
Variable where(const Tensor& cond, const Variable& a, const Variable& b);
/// x with `value` where mask is true; no gradient flows to the filled places.
Variable masked_fill(const Variable& x, const Tensor& mask, double value);
/// x·σ(x) (SiLU, Elfwing et al. 2017; PyTorch's silu); at ±inf the limits, as gelu.
Variable silu(const Variable& x);

// ---- activations (functions/activation.cpp), as torch.nn.functional; any shape ----
/// x for x > 0, negative_slope·x otherwise; the gradient at 0 is negative_slope (as PyTorch).
Variable leaky_relu(const Variable& x, double negative_slope = 0.01);
/// ELU (Clevert et al. 2016): x for x > 0, α·(eˣ - 1) otherwise; the gradient at 0 is α (as PyTorch).
Variable elu(const Variable& x, double alpha = 1.0);
/// SELU (Klambauer et al. 2017): scale·elu(x, α) with PyTorch's α ≈ 1.6733 and scale ≈ 1.0507.
Variable selu(const Variable& x);
/// log(1 + e^{βx})/β, computed without overflow; x itself where βx > threshold (PyTorch's linear region);
/// gradient σ(βx), 1 in the linear region. ValueError when beta is 0 or not finite.
Variable softplus(const Variable& x, double beta = 1.0, double threshold = 20.0);
/// x limited to [min_val, max_val]; gradient 1 strictly inside, 0 at the bounds and outside (as PyTorch, unlike
/// clamp). ValueError when min_val > max_val.
Variable hardtanh(const Variable& x, double min_val = -1.0, double max_val = 1.0);
/// Mish (Misra 2019): x·tanh(softplus(x)); at ±inf the limits, as gelu.
Variable mish(const Variable& x);

Variable operator+(const Variable& a, const Variable& b);
Variable operator-(const Variable& a, const Variable& b);
Variable operator*(const Variable& a, const Variable& b);
Variable operator/(const Variable& a, const Variable& b);
Variable operator-(const Variable& x);
Variable operator+(const Variable& a, double b);
Variable operator-(const Variable& a, double b);
Variable operator*(const Variable& a, double b);
Variable operator/(const Variable& a, double b);
Variable operator+(double a, const Variable& b);
Variable operator-(double a, const Variable& b);
Variable operator*(double a, const Variable& b);
Variable operator/(double a, const Variable& b);

// ---- reductions (functions/reduce.cpp); empty dims = all ----
// Values on ±inf, NaN and empty lines as the core ops (core/ops.h); the gradients there are listed in the
// README's "Numerical edge cases". A NaN in a line gives NaN gradients on it.
Variable sum(const Variable& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Variable mean(const Variable& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// Σ(x - mean)² / (N - correction) over dims. Its backward throws ValueError through a variance of +inf from a
/// line holding ±inf (x - mean would be inf - inf); a variance beyond the dtype's range from finite values (f32
/// |x| > 1.8e19) is +inf with its finite gradient.
Variable var(const Variable& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
/// log Σ exp(x), stable; gradient dy·softmax(x) over dims, with softmax's limits: 0 on an all -inf line, 1/k on
/// k entries of +inf.
Variable logsumexp(const Variable& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// Max over dims; tied maxima share the gradient equally (the shares add up to it).
Variable amax(const Variable& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Variable amin(const Variable& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// Values and i64 indices along one dim: the Variable counterpart of ValuesIndices.
struct VariableIndices {
  Variable values;  ///< the values
  Tensor indices;  ///< where they are along the dim, i64
};
/// Max (min) along `dim` and the index of its first occurrence (torch.max(x, dim)); the gradient goes to
/// that index alone, even among ties (amax shares it).
VariableIndices max(const Variable& x, int64_t dim, bool keepdim = false);
VariableIndices min(const Variable& x, int64_t dim, bool keepdim = false);

// ---- views and joins (functions/shape.cpp) ----
Variable reshape(const Variable& x, const Shape& shape);
Variable flatten(const Variable& x, int64_t start = 0, int64_t end = -1);
Variable transpose(const Variable& x, int64_t d0, int64_t d1);
Variable permute(const Variable& x, const std::vector<int64_t>& dims);
Variable slice(const Variable& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Variable select(const Variable& x, int64_t dim, int64_t index);
Variable unsqueeze(const Variable& x, int64_t dim);
Variable squeeze(const Variable& x, int64_t dim);
Variable expand(const Variable& x, const Shape& shape);
/// tg::cat and tg::stack of the values (dtypes promoted as PyTorch); each input's gradient is its slice of dy,
/// converted to its own dtype.
Variable cat(const std::vector<Variable>& xs, int64_t dim);
Variable stack(const std::vector<Variable>& xs, int64_t dim);
/// Pieces of x along dim, of the given sizes (torch.split), as views; their gradients are joined into one
/// tensor of x's shape. ShapeError when the sizes are negative or do not add up to x's size along dim.
std::vector<Variable> split(const Variable& x, const std::vector<int64_t>& sizes, int64_t dim);

// ---- indexing, einsum and ordering (functions/index.cpp, einsum.cpp, order.cpp) ----
// Indices are i64 and checked as core's (core/ops.h): IndexError naming an index outside [0, size) and the size,
// ShapeError naming the shapes.
/// y[..i..] = x[..index[..i..]..] along dim (torch.gather): index has x's ndim, sizes <= x's off dim; y has
/// index's shape. The gradient adds up at repeated indices (scatter_add, its adjoint).
Variable gather(const Variable& x, int64_t dim, const Tensor& index);
/// x with y[..index[..i..]..] = source[..i..] along dim (torch.scatter); index (sizes <= source's, and <= x's
/// off dim) reads source's leading corner. Gradients: 0 for x where written (PyTorch's); source's entries get dy
/// at their positions, except an entry a later repeat overwrote (the last in index's row-major order wins), which
/// gets 0: PyTorch leaves that order unspecified and gives every repeat dy.
Variable scatter(const Variable& x, int64_t dim, const Tensor& index, const Variable& source);
/// x with every position index names along dim set to value; its gradient 0 there.
Variable scatter(const Variable& x, int64_t dim, const Tensor& index, double value);
/// x with source added where index points (torch.scatter_add; repeats add up); dsource = gather(dy).
Variable scatter_add(const Variable& x, int64_t dim, const Tensor& index, const Variable& source);
/// x with source's slices added at index (1-D) along dim (torch.index_add; repeats add up); source has x's shape
/// with index.numel() along dim. dsource = index_select(dy).
Variable index_add(const Variable& x, int64_t dim, const Tensor& index, const Variable& source);
/// Einstein summation as torch.einsum: "ij,jk->ik", implicit output (the letters found once, in code order:
/// upper case first) or explicit after "->", a letter repeated in one operand takes its diagonal, "..." stands
/// for broadcast dims (summed when the explicit output omits it), and a size-1 dim broadcasts against its
/// label's size. Composed of permute, reshape, slice, sum, mul and matmul (two operands sharing a summed letter
/// go through one batched matmul), so the gradients are theirs. ValueError for a malformed equation, ShapeError
/// for sizes that do not fit; both name the equation and the operands' shapes.
Variable einsum(const std::string& equation, const std::vector<Variable>& operands);
/// x sorted along dim and the indices the values came from (core's sort: stable, NaN largest); the gradient goes
/// back to those positions.
VariableIndices sort(const Variable& x, int64_t dim = -1, bool descending = false);
/// The k largest (smallest) along dim, sorted, ties in index order (core's topk); the gradient goes back to
/// their positions, 0 elsewhere.
VariableIndices topk(const Variable& x, int64_t k, int64_t dim = -1, bool largest = true);
/// Indices, without gradient: core's argsort, argmax and argmin (first occurrence on ties) of x's value.
Tensor argsort(const Variable& x, int64_t dim = -1, bool descending = false);
Tensor argmax(const Variable& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Variable& x, int64_t dim, bool keepdim = false);

// ---- linear algebra (functions/linalg.cpp) ----
/// PyTorch matmul semantics (1-D, 2-D, batched with broadcast batch dims); dA = dC·Bᵀ, dB = Aᵀ·dC.
Variable matmul(const Variable& a, const Variable& b);
/// PyTorch's linear: x·weightᵀ + bias, x (..., in), weight (out, in), bias (out) or undefined -> (..., out);
/// one op (the bias added inside the GEMM for f32: tg::linear), within rounding of matmul then add.
Variable linear(const Variable& x, const Variable& weight, const Variable& bias);

// ---- normalisation layers' functions (functions/normalization.cpp), compositions of the ops above ----
/// Batch normalisation (Ioffe & Szegedy 2015), PyTorch's F.batch_norm: x (N, C, *) -> the same shape,
/// (x - μ)/√(σ² + eps)·weight + bias per channel (weight, bias (C) or undefined). training: μ and the biased σ²
/// over N and *, and running_mean/running_var (C) (if defined; handles sharing storage with the caller's) are
/// updated in place to (1 - momentum)·r + momentum·s, with the unbiased variance. Otherwise the running
/// statistics are used. ShapeError for x of fewer than 2 dims or a per-channel tensor not (C); DTypeError
/// when one is not x's dtype; ValueError for a training batch of one value per channel, momentum outside
/// [0, 1], eps <= 0, evaluation without running statistics, or (training) a channel holding ±inf, named, as
/// layer_norm refuses such a row. A channel whose squares overflow (|x| > 1.8e19 in f32) is scaled by its
/// largest |x - μ| first, so it normalises right.
Variable batch_norm(const Variable& x, Tensor running_mean, Tensor running_var, const Variable& weight,
                    const Variable& bias, bool training, double momentum = 0.1, double eps = 1e-5);
/// Group normalisation (Wu & He 2018): x (N, C, *) with the C channels in num_groups groups of C/G; each
/// (sample, group) normalised over its channels and *, biased variance, then ·weight + bias per channel (C,
/// either undefined). ShapeError for x of fewer than 2 dims or a weight/bias not (C); ValueError when C is not
/// divisible by num_groups or eps <= 0, or for a group holding ±inf (layer_norm's row, named).
Variable group_norm(const Variable& x, int64_t num_groups, const Variable& weight, const Variable& bias,
                    double eps = 1e-5);
/// RMS normalisation (Zhang & Sennrich 2019; PyTorch 2.4's F.rms_norm): x·rsqrt(mean(x²) + eps)·weight over
/// the last `normalized_ndim` dims, weight of that shape or undefined; eps unset = the machine epsilon of
/// x's dtype. ShapeError for a bad normalized_ndim or weight shape, ValueError for eps <= 0 or a row holding
/// ±inf (named, as layer_norm). A row whose squares overflow (|x| > 1.8e19 in f32) is scaled by its largest |x|
/// first, so it normalises right.
Variable rms_norm(const Variable& x, int64_t normalized_ndim, const Variable& weight,
                  std::optional<double> eps = std::nullopt);

// ---- neural-network functions (functions/nn.cpp) ----
/// Softmax along dim; dx = y·(dy - Σ dy·y), the Jacobian at y: 0 on an all -inf line (y = 0), finite at the
/// +inf limit.
Variable softmax(const Variable& x, int64_t dim);
/// log softmax along dim; dx = dy - softmax(x)·Σ dy, and 0 on an all -inf line (whose y is -inf).
Variable log_softmax(const Variable& x, int64_t dim);
/// Layer normalisation (Ba et al. 2016) over the trailing dims `normalized_shape` of x (PyTorch's
/// F.layer_norm: x (..., *normalized_shape)), then ·weight + bias (either may be undefined). Fused: exact on
/// constant rows (no NaN). ShapeError naming both shapes unless x ends in a non-empty normalized_shape;
/// ValueError for a row holding ±inf or a constant row under eps = 0 (tg::normalize).
Variable layer_norm(const Variable& x, const Shape& normalized_shape, const Variable& weight, const Variable& bias,
                    double eps = 1e-5);
/// layer_norm without the affine terms: (x - mean) / √(var + eps) over the trailing dims normalized_shape.
Variable layer_norm(const Variable& x, const Shape& normalized_shape, double eps = 1e-5);
/// Rows of weight (V, D) at indices (any shape, i64) -> (..., D); repeated indices add up in the gradient,
/// and the row `padding_idx` (if >= 0) gets none. IndexError naming an index outside [0, V) or a
/// padding_idx outside [-1, V).
Variable embedding(const Variable& weight, const Tensor& indices, int64_t padding_idx = -1);
/// Sums of rows of weight (V, D) in bags: indices (..., N) i64 -> (..., D), y[...] = Σ_n weight[indices[..., n]]
/// with entries equal to padding_idx (if >= 0) left out. PyTorch's nn.EmbeddingBag (mode "sum") without the
/// (..., N, D) copy that embedding + sum makes. IndexError naming an index outside [0, V).
Variable embedding_bag(const Variable& weight, const Tensor& indices, int64_t padding_idx = -1);
/// Entries of x at `index` along dim (see tg::index_select); the gradient adds up at repeated indices.
Variable index_select(const Variable& x, int64_t dim, const Tensor& index);
/// Inverted dropout (Srivastava et al. 2014): zeroes with probability p and scales the rest by 1/(1-p) in
/// training; identity otherwise. The mask is reused in backward. ValueError unless 0 <= p <= 1.
Variable dropout(const Variable& x, double p, bool training, Generator* gen = nullptr);
/// dropout(relu(x), p, training) in one op (the feed-forward's activation then dropout): the same values,
/// draws and gradients, one pass each way instead of two. ValueError unless 0 <= p <= 1.
Variable relu_dropout(const Variable& x, double p, bool training, Generator* gen = nullptr);
/// The masks and options of scaled_dot_product_attention. The bool mask comes in two fields, one per polarity,
/// so that code ported from either PyTorch convention keeps its meaning.
struct SdpaOptions {
  Tensor allowed;  ///< bool, true where a query MAY attend to a key, as torch's F.scaled_dot_product_attention
  Tensor blocked;  ///< bool, true where it may NOT, as nn.MultiheadAttention's bool masks; give at most one
  Tensor added;    ///< float, added to the scores (torch's float attn_mask; -inf blocks)
  double dropout_p = 0;     ///< on the attention weights
  Generator* gen = nullptr;  ///< dropout's draws; nullptr = the default generator
  /// Also blocks key j > i + S_k - S_q for query i (the queries are the last S_q positions, as with a KV
  /// cache; torch's top-left tril when S_q = S_k) and skips the work above the diagonal.
  bool is_causal = false;
};
/// Attention as one op; its bool mask is named by polarity: `.allowed` (true = may attend, PyTorch's
/// F.scaled_dot_product_attention) or `.blocked` (true = may not). dropout_p-dropout of softmax(q·kᵀ/√d + added,
/// -inf where blocked) along the last dim, times v (Vaswani et al. 2017). q: (..., S_q, d), k: (..., S_k, d),
/// v: (..., S_k, d_v) -> (..., S_q, d_v); the masks broadcast to (..., S_q, S_k). It keeps q, k, v, the softmax
/// output and one bit per dropout decision, not the scores or the dropped weights. Same values and gradients as
/// the composition (which nn::MultiHeadAttention still runs when it returns the weights); dropout draws from gen
/// as dropout() does. The output and q's gradient are laid out in memory in q's dim order, k's and v's
/// gradients in k's and v's (where the operand has the result's rank and its last dim innermost; contiguous
/// otherwise): per-head views of (B, S, H·d) projections get (B, S, H, d) results. is_causal computes row
/// blocks, each on the keys it may see; equal to the masked call up to rounding, dropout drawn block by block.
/// ShapeError when q, k and v do not fit those shapes or when is_causal and S_k < S_q; ValueError unless
/// 0 <= dropout_p <= 1 or when both allowed and blocked are given; DTypeError for a non-bool allowed/blocked.
/// Defined in functions/attention.cpp.
Variable scaled_dot_product_attention(const Variable& q, const Variable& k, const Variable& v,
                                      const SdpaOptions& options = {});

/// How a loss reduces its terms (PyTorch's reduction=): their mean, their sum, or none (the terms themselves).
/// One name for cross_entropy and the nn losses: tg::Reduction::sum.
enum class Reduction { mean, sum, none };

/// Options of cross_entropy, as torch.nn.functional.cross_entropy.
struct CrossEntropyOptions {
  Reduction reduction = Reduction::mean;  ///< mean over the targets not ignored (weighted), sum, or none (one loss per target)
  int64_t ignore_index = -100;   ///< targets equal to this add no loss and no gradient
  double label_smoothing = 0.0;  ///< in [0, 1]: target = (1-ε)·onehot + ε/C
  Tensor weight;                 ///< (C) per-class weights, >= 0, logits' dtype; undefined = all 1
};
/// Cross-entropy of logits (B, C) or (B, C, d...) against class indices (B) or (B, d...), i64; fused
/// log_softmax + NLL, stable for logits of any size. Mean reduction divides by the non-ignored count, or
/// with `weight` by Σ weight[target] over non-ignored targets (as PyTorch); with none counted the mean is NaN
/// (0/0, as PyTorch) and the gradient 0. A term of weight 0 adds 0 even at a -inf logit. A row whose logits are
/// all -inf (fully masked) has loss +inf and gradient 0; one with k logits of +inf has loss log k when its target
/// is one of them, else +inf (log_softmax's limits); label smoothing puts mass on every class, so any -inf logit
/// in a counted row makes its smoothed loss +inf.
/// IndexError naming a target outside [0, C) that is not ignore_index; ValueError naming a negative weight and
/// its class (PyTorch accepts one) or a label_smoothing outside [0, 1].
Variable cross_entropy(const Variable& logits, const Tensor& target, const CrossEntropyOptions& options = {});

/// Binary cross-entropy of probabilities x in [0, 1] against targets t, elementwise and unreduced (the
/// reduction and weights are nn::binary_cross_entropy's): -(t·log x + (1-t)·log(1-x)) with each log clamped at
/// -100, and PyTorch's gradients dx = (x - t)/max(x(1-x), 1e-12), dt = -logit(x). ShapeError naming both shapes
/// unless they are equal; ValueError naming the first x outside [0, 1] (NaN included), as PyTorch raises.
Variable binary_cross_entropy(const Variable& probs, const Variable& target);

// ---- convolution and pooling (functions/conv.cpp, functions/pool.cpp) ----
// Images are (N, C, H, W) and sequences (N, C, L), as PyTorch's; an unbatched (C, H, W) or (C, L) input gives
// an unbatched output. Output sizes: per spatial dim, ⌊(in + 2·padding - dilation·(kernel - 1) - 1) / stride⌋ + 1
// (tg::window in core/conv.h; pools round up with ceil_mode).

/// Height and width from one number or a pair, as PyTorch's int-or-tuple arguments: `2` or `{2, 1}`.
struct Size2 {
  int64_t h = 0;  ///< height
  int64_t w = 0;  ///< width
  Size2() = default;
  Size2(int64_t both) : h(both), w(both) {}  ///< the same size for both
  Size2(int64_t h, int64_t w) : h(h), w(w) {}  ///< height and width
};
/// PyTorch's padding strings: `same` pads so that the output has the input's size (stride 1 only; where the
/// total dilation·(kernel - 1) is odd the extra one goes at the end, as PyTorch), `valid` does not pad.
enum class PaddingMode { sizes, same, valid };
/// A convolution's padding: sizes (zeros on each side) or a PaddingMode: `.padding = 1`, `{1, 2}`,
/// `PaddingMode::same`.
struct Padding2d {
  Size2 size;  ///< the sizes, when mode is sizes
  PaddingMode mode = PaddingMode::sizes;  ///< sizes, same or valid
  Padding2d(int64_t both = 0) : size(both) {}  ///< `both` on every side
  Padding2d(int64_t h, int64_t w) : size(h, w) {}  ///< h above and below, w left and right
  Padding2d(PaddingMode m) : mode(m) {}  ///< same or valid
};
/// Padding2d for one spatial dim: a size (zeros on each side) or a PaddingMode.
struct Padding1d {
  int64_t size = 0;  ///< zeros on each side, when mode is sizes
  PaddingMode mode = PaddingMode::sizes;  ///< sizes, same or valid
  Padding1d(int64_t size = 0) : size(size) {}  ///< `size` on each side
  Padding1d(PaddingMode m) : mode(m) {}  ///< same or valid
};

/// The arguments of conv2d after input, weight and bias, as torch.nn.functional.conv2d's.
struct Conv2dFuncOptions {
  Size2 stride = 1;  ///< the step between windows
  Padding2d padding = 0;  ///< sizes, or PaddingMode::same / valid
  Size2 dilation = 1;  ///< spacing between kernel taps
  int64_t groups = 1;  ///< channels split into this many independent groups
};
/// Conv2dFuncOptions for one spatial dim (torch.nn.functional.conv1d's arguments).
struct Conv1dFuncOptions {
  int64_t stride = 1;  ///< the step between windows
  Padding1d padding = 0;  ///< a size, or PaddingMode::same / valid
  int64_t dilation = 1;  ///< spacing between kernel taps
  int64_t groups = 1;  ///< channels split into this many independent groups
};
/// 2-D convolution (cross-correlation, as PyTorch): x (N, C_in, H, W), weight (C_out, C_in / groups, kH, kW),
/// bias (C_out) or undefined -> (N, C_out, H_out, W_out); channels split into `groups` independent groups. As
/// im2col and a matrix product per image and group (so its gradients are col2im and products). ShapeError
/// naming the shapes for a wrong rank, channels that do not match the weight or are not divisible by groups,
/// a bias that is not (C_out), a kernel larger than the padded input; ValueError for stride, dilation or
/// groups < 1, negative padding, or `same` with a stride other than 1; DTypeError for mixed dtypes.
Variable conv2d(const Variable& x, const Variable& weight, const Variable& bias, const Conv2dFuncOptions& options = {});
/// 1-D convolution: x (N, C_in, L), weight (C_out, C_in / groups, k), bias (C_out) -> (N, C_out, L_out); conv2d
/// over height 1, with conv2d's errors in conv1d's shapes.
Variable conv1d(const Variable& x, const Variable& weight, const Variable& bias, const Conv1dFuncOptions& options = {});

/// torch.nn.functional.conv_transpose2d's arguments after input, weight and bias.
struct ConvTranspose2dFuncOptions {
  Size2 stride = 1;  ///< the step between the input's pixels in the output
  Size2 padding = 0;  ///< removed from each side of the output
  Size2 output_padding = 0;  ///< added to one side of the output, to pick among the sizes a stride allows
  int64_t groups = 1;  ///< channels split into this many independent groups
  Size2 dilation = 1;  ///< spacing between kernel taps
};
/// The adjoint of conv2d in its input (torch.nn.functional.conv_transpose2d): x (N, C_in, H, W), weight
/// (C_in, C_out / groups, kH, kW), bias (C_out) -> (N, C_out, H_out, W_out) with
/// H_out = (H - 1)·stride - 2·padding + dilation·(kH - 1) + output_padding + 1. A matrix product, then col2im.
/// Errors as conv2d, and ValueError unless output_padding < stride or < dilation.
Variable conv_transpose2d(const Variable& x, const Variable& weight, const Variable& bias,
                          const ConvTranspose2dFuncOptions& options = {});

/// The differentiable im2col of core/conv.h: x (N, C, H, W) -> (N, C·kH·kW, H_out·W_out); gradient col2im.
Variable im2col(const Variable& x, const Window& window);
/// Its adjoint: (N, C·kH·kW, H_out·W_out) -> (N, C, H, W); gradient im2col.
Variable col2im(const Variable& col, int64_t channels, const Window& window);

/// torch.nn.functional.max_pool2d's arguments; stride defaults to kernel_size (a pair is written
/// `.stride = Size2{2, 1}`). padding <= kernel_size / 2, as PyTorch.
struct MaxPool2dFuncOptions {
  Size2 kernel_size;  ///< the window's size
  std::optional<Size2> stride;  ///< the step between windows; unset: kernel_size
  Size2 padding = 0;  ///< -inf padding on each side, <= kernel_size / 2
  Size2 dilation = 1;  ///< spacing between the window's taps
  bool ceil_mode = false;  ///< round the output size up
};
/// MaxPool2dFuncOptions for one spatial dim; stride defaults to kernel_size.
struct MaxPool1dFuncOptions {
  int64_t kernel_size = 0;  ///< the window's size
  std::optional<int64_t> stride;  ///< the step between windows; unset: kernel_size
  int64_t padding = 0;  ///< -inf padding on each side, <= kernel_size / 2
  int64_t dilation = 1;  ///< spacing between the window's taps
  bool ceil_mode = false;  ///< round the output size up
};
/// Max over each window (padding never wins): x (N, C, H, W) -> (N, C, H_out, W_out). The gradient goes to the
/// first maximum of each window (PyTorch's choice), through index_select. ShapeError for a wrong rank, an
/// empty input or a kernel larger than the padded input; ValueError for sizes < 1, or a padding that is
/// negative or above kernel_size / 2.
Variable max_pool2d(const Variable& x, const MaxPool2dFuncOptions& options);
/// x (N, C, L) -> (N, C, L_out); as max_pool2d over height 1.
Variable max_pool1d(const Variable& x, const MaxPool1dFuncOptions& options);

/// torch.nn.functional.avg_pool2d's arguments; stride defaults to kernel_size.
struct AvgPool2dFuncOptions {
  Size2 kernel_size;  ///< the window's size
  std::optional<Size2> stride;  ///< the step between windows; unset: kernel_size
  Size2 padding = 0;  ///< zero padding on each side, <= kernel_size / 2
  bool ceil_mode = false;  ///< round the output size up
  bool count_include_pad = true;  ///< divide by the window's size with its padding, not only its inputs
};
/// AvgPool2dFuncOptions for one spatial dim; stride defaults to kernel_size.
struct AvgPool1dFuncOptions {
  int64_t kernel_size = 0;  ///< the window's size
  std::optional<int64_t> stride;  ///< the step between windows; unset: kernel_size
  int64_t padding = 0;  ///< zero padding on each side, <= kernel_size / 2
  bool ceil_mode = false;  ///< round the output size up
  bool count_include_pad = true;  ///< divide by the window's size with its padding, not only its inputs
};
/// Mean over each window: x (N, C, H, W) -> (N, C, H_out, W_out), the divisor PyTorch's (a window cut by
/// ceil_mode counts only its part inside the padded input). im2col and a sum. Errors as max_pool2d.
Variable avg_pool2d(const Variable& x, const AvgPool2dFuncOptions& options);
/// x (N, C, L) -> (N, C, L_out); as avg_pool2d over height 1.
Variable avg_pool1d(const Variable& x, const AvgPool1dFuncOptions& options);
/// Mean over PyTorch's adaptive windows: output row i averages input rows ⌊i·H/H_out⌋ to ⌈(i+1)·H/H_out⌉ - 1,
/// and likewise columns. x (N, C, H, W) -> (N, C, H_out, W_out), as products with (H_out, H) and (W, W_out)
/// averaging matrices. ShapeError for a wrong rank; ValueError for an output size < 1.
Variable adaptive_avg_pool2d(const Variable& x, Size2 output_size);
/// x (N, C, L) -> (N, C, L_out).
Variable adaptive_avg_pool1d(const Variable& x, int64_t output_size);

// ---- scans, layout and norms (functions/scan.cpp, functions/layout.cpp, functions/vector_norm.cpp) ----
// Values, shapes and errors as the core ops of the same names (core/ops.h); every gradient is written with these
// differentiable functions, so create_graph gives second derivatives.
/// Running sum along dim (torch.cumsum); dx = the running sum of dy taken from the end: flip(cumsum(flip(dy))).
Variable cumsum(const Variable& x, int64_t dim);
/// Running product along dim (torch.cumprod). dx_k = Σ_{i≥k} dy_i·Π_{j≤i, j≠k} x_j, exact where x has zeros
/// (PyTorch's cumprod_backward): before a line's first zero, Σ_{i≥k} dy_i·y_i / x_k; at the first zero, the
/// running products with that zero read as 1; after it, 0. Under create_graph, a line with zeros takes PyTorch's
/// O(n²) form instead, Σ_{i≥k} dy_i·cumprod(x with x_k read as 1)_i for every k at once, whose own derivatives
/// are exact there too (the masked form's are not: its 0 after the zero is a constant). An x holding ±inf takes
/// that form too, so its gradient is the products without x_k, not inf/inf = NaN (PyTorch: NaN).
Variable cumprod(const Variable& x, int64_t dim);
/// torch.flip; dx = flip(dy) along the same dims.
Variable flip(const Variable& x, const std::vector<int64_t>& dims);
/// torch.roll; dx = roll(dy) by the opposite shifts.
Variable roll(const Variable& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims = {});
/// torch.nn.functional.pad (pads last dim first, negative pads crop); dx = tg::pad_backward(dy): each element's
/// gradient summed over every place pad copied it to, 0 from the constant fill.
Variable pad(const Variable& x, const std::vector<int64_t>& pads, PadMode mode = PadMode::constant, double value = 0);
/// Tensor.repeat; dx = dy summed over the tiles.
Variable repeat(const Variable& x, const std::vector<int64_t>& repeats);
/// torch.tile: repeat with reps padded with leading 1s to x's rank.
Variable tile(const Variable& x, const std::vector<int64_t>& reps);
/// torch.tril / torch.triu of the last two dims; dx = the same triangle of dy.
Variable tril(const Variable& x, int64_t diagonal = 0);
Variable triu(const Variable& x, int64_t diagonal = 0);
/// torch.linalg.vector_norm over dims (empty = all), overflow-free as tg::vector_norm. Gradients, with n the norm
/// of x's line: p > 0, dx = dy·sign(x)·(|x|/n)^(p-1), so 0 for every x of a line whose norm is 0 (PyTorch's
/// choice at the 2-norm's kink: a subgradient) and, for p < 1, 0 at x = 0 (where |x|^(p-1) is infinite); on a
/// line holding k entries of ±inf (norm inf), dy·sign(x)·k^(1/p - 1) on them and 0 elsewhere (the limit as they
/// grow together; PyTorch gives NaN);
/// ±inf, dy·sign(x) shared equally among the entries whose |x| is the norm (0 when it is 0); ord 0 gives no
/// gradient (PyTorch's: the count is piecewise constant).
Variable vector_norm(const Variable& x, double ord = 2, const std::vector<int64_t>& dims = {}, bool keepdim = false);

}  // namespace tg
