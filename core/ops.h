#pragma once
// Kernels on tensors: each takes tensors and returns a new contiguous tensor. Binary ops follow NumPy
// broadcasting and PyTorch's type promotion: both operands are converted to result_type(a, b) (f32 with f64
// gives f64, i64 with f32 gives f32), and a double operand is a Python scalar, which does not widen a float
// tensor (see result_type and the README's "Type promotion").
// Float-only ops (exp, log, softmax, ...) throw DTypeError on i64/bool; matmul refuses i64.
#include <optional>
#include <vector>

#include "core/tensor.h"

namespace tg {

// ---- type promotion (torch.result_type) ----
/// The dtype of a binary op's result (div and comparisons aside) on a and b, as torch.result_type: the
/// promote_types of the tensors with >= 1 dims, which a 0-dim tensor changes only when it is of a higher
/// category (bool < integer < float): i64 (3,) with f64 () gives f64, f32 (3,) with f64 () stays f32.
DType result_type(const Tensor& a, const Tensor& b);
/// The same with a scalar v, taken as a Python int when it is an integer in the range of i64 and as a Python
/// float otherwise: a float tensor keeps its dtype, an i64 or bool tensor with a float v gives f32 (PyTorch's
/// default dtype), a bool tensor with an integer v gives i64. (PyTorch tells 2 from 2.0; a double cannot.)
DType result_type(const Tensor& t, double v);

// ---- elementwise, binary (broadcasting, promoting to result_type) ----
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
/// True division, in result_type(a, b), or f32 when that is i64 or bool (3 / 2 is 1.5, as PyTorch).
Tensor div(const Tensor& a, const Tensor& b);
/// a ** b elementwise in result_type(a, b). In i64 (integer or bool operands) as PyTorch: exact, wrapping around
/// on overflow, and a negative exponent gives 1 / a^|b| truncated (0 unless a is ±1). DTypeError for two bool
/// operands (PyTorch refuses them too).
Tensor pow(const Tensor& a, const Tensor& b);
/// a ** exponent, the exponent a Python scalar (result_type(a, exponent)). DTypeError for a negative integer
/// exponent on an i64 or bool tensor, as PyTorch ("Integers to negative integer powers are not allowed").
Tensor pow(const Tensor& a, double exponent);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, double b);
Tensor operator-(const Tensor& a, double b);
Tensor operator*(const Tensor& a, double b);
Tensor operator/(const Tensor& a, double b);
Tensor operator+(double a, const Tensor& b);
Tensor operator-(double a, const Tensor& b);
Tensor operator*(double a, const Tensor& b);
Tensor operator/(double a, const Tensor& b);
Tensor operator-(const Tensor& a);

// ---- comparisons (in result_type(a, b)) and masks; results are bool ----
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, double b);
Tensor ne(const Tensor& a, double b);
Tensor lt(const Tensor& a, double b);
Tensor le(const Tensor& a, double b);
Tensor gt(const Tensor& a, double b);
Tensor ge(const Tensor& a, double b);
Tensor logical_not(const Tensor& mask);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
/// cond ? a : b, all three broadcast together, in result_type(a, b); cond must be bool.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
/// x with `value` wherever mask (bool, broadcast to x) is true.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);
/// True when no element is NaN or ±inf (always true for i64/bool).
bool all_finite(const Tensor& x);

// ---- elementwise, unary ----
Tensor neg(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
/// log(1 + x) and e^x - 1, exact near x = 0 where the plain forms lose every digit (std::log1p, std::expm1).
Tensor log1p(const Tensor& x);
Tensor expm1(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor erf(const Tensor& x);
/// 1 / (1 + exp(-x)), computed without overflow for large |x|; f32 within 3 ulp (cpu::sigmoid_f32).
Tensor sigmoid(const Tensor& x);
/// x·σ(x) (SiLU, Elfwing et al. 2017; PyTorch's silu); f32 within 4 ulp; silu(-inf) = -0, the limit (PyTorch: NaN).
Tensor silu(const Tensor& x);
/// max(x, 0); NaN stays NaN, as in PyTorch.
Tensor relu(const Tensor& x);
/// Packed masks (core/cpu/ops/mask.cpp): bit i of word i/64 stands for element i in row-major order,
/// (n+63)/64 i64s.
/// The bits of x > 0.
Tensor pack_positive(const Tensor& x);
/// x·scale where the bit is set, 0 elsewhere (scale rounded to x's dtype); ShapeError when `bits` does not
/// hold x.numel() bits.
Tensor masked_scale(const Tensor& x, const Tensor& bits, double scale);
/// The bits as a bool tensor of `shape`; ShapeError when they do not hold shape.numel() bits.
Tensor unpack_mask(const Tensor& bits, const Shape& shape);
/// x·Φ(x) (Hendrycks & Gimpel 2016); with `tanh_approx`, 0.5x(1 + tanh(√(2/π)(x + 0.044715x³))). Both give
/// -0 at -inf, the limit (PyTorch: NaN).
Tensor gelu(const Tensor& x, bool tanh_approx = false);
/// The gradient of exact gelu in one pass: dy·(Φ(x) + x·φ(x)), φ the standard normal density, and
/// its limits dy at +inf and 0 at -inf (PyTorch: NaN); dy and x of one shape and float dtype (ShapeError / DTypeError otherwise). f32: cpu::gelu_backward_f32.
Tensor gelu_backward(const Tensor& dy, const Tensor& x);
/// The gradient of tanh from its output in one pass: dy·(1 - y·y), rounded as those three ops in dy's dtype
/// (the composition's bits); dy and y of one shape and float dtype (ShapeError / DTypeError otherwise).
Tensor tanh_backward(const Tensor& dy, const Tensor& y);
/// Limits x to [lo, hi]; either bound may be absent. ValueError when lo > hi, a bound is NaN, or an i64
/// tensor gets a fractional bound (PyTorch would promote to float; truncating it would clamp wrongly).
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi);

// ---- reductions ----
/// Sum over `dims` (empty = all dims); an empty dim sums to 0. i64/bool sum to i64, wrapping around on
/// overflow as PyTorch does. IEEE on infinities: a line holding +inf and -inf sums to NaN (there is no limit).
/// The edge conventions of every reduction here are listed in the README's "Numerical edge cases".
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// Mean over `dims` (empty = all), Σ / n as sum on infinities. Float only. ValueError over an empty dim (an
/// average of nothing; PyTorch gives NaN) unless the result is empty too.
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// Variance over `dims` (empty = all): Σ(x - mean)² / (N - correction); correction 1 is unbiased. A line holding
/// ±inf (and no NaN) gives +inf, not inf - inf. ValueError when N <= correction (no degrees of freedom; PyTorch
/// gives NaN or inf), including over an empty dim, unless the result is empty.
Tensor var(const Tensor& x, const std::vector<int64_t>& dims = {}, int64_t correction = 1, bool keepdim = false);
/// Stable log Σ exp(x) over `dims` (empty = all): max-shifted; an all -inf line (or an empty one) gives -inf, a
/// line holding +inf gives +inf, never inf - inf; a NaN gives NaN.
Tensor logsumexp(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// Largest value over `dims` (empty = all); ±inf are ordinary values, a NaN wins (as PyTorch); IndexError over
/// an empty dim.
Tensor amax(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
/// Values and i64 indices (first occurrence) of the maximum along `dim`.
struct ValuesIndices {
  Tensor values;   ///< the maxima
  Tensor indices;  ///< where they are, i64
};
ValuesIndices max(const Tensor& x, int64_t dim, bool keepdim = false);
ValuesIndices min(const Tensor& x, int64_t dim, bool keepdim = false);
/// The index of the first maximum (minimum) along `dim`, as torch.argmax / argmin: ties give the lowest index, a
/// NaN wins. IndexError over an empty dim.
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);

// ---- ordering (order.cpp) ----
/// x sorted along `dim`, ascending or descending, and the i64 indices the values came from (torch.sort with
/// stable=True): ties keep their order in x, NaN counts as larger than every number. Same shape as x.
/// f32, f64, i64 (DTypeError for bool); IndexError for a bad dim.
ValuesIndices sort(const Tensor& x, int64_t dim = -1, bool descending = false);
/// sort's indices alone (torch.argsort(stable=True)).
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
/// The k largest (or smallest) entries along `dim` and their indices, sorted (largest first, or smallest first):
/// the first k of sort's order, so ties come in index order (PyTorch's topk leaves their order unspecified).
/// x's shape with k along dim. IndexError for a bad dim or k outside [0, size of dim].
ValuesIndices topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true);

// ---- linear algebra ----
/// PyTorch matmul: 1-D·1-D dot, 2-D @ 2-D, batched (..., M, K) @ (..., K, N) with broadcast batch dims,
/// 1-D operands promoted and the added dim removed. On cblas_sgemm/dgemm; ShapeError naming both shapes.
Tensor matmul(const Tensor& a, const Tensor& b);
/// matmul of operands with 2 or more dims into `out`, which has the product's shape and dtype, in its own
/// layout (e.g. per-head (B, H, S, d) results into a permuted (B, S, H, d) tensor), bit for bit matmul's
/// elements; written directly when GEMM can, else through a copy. ShapeError / DTypeError as matmul, or for
/// an out of another shape or dtype; ValueError (copy_'s) for an out whose elements overlap.
Tensor& matmul_out(Tensor& out, const Tensor& a, const Tensor& b);
/// PyTorch's linear: x @ weightᵀ + bias, x (..., in), weight (out, in), bias (out) or undefined -> (..., out),
/// as add(matmul(x, weight.mT()), bias). For a contiguous f32 x the bias goes in without a second pass: added
/// in the small-GEMM kernel's store (the bits of matmul then add), or under OpenBLAS's product as C's first
/// value (within GEMM's rounding of matmul then add, not always its bits). ShapeError naming the shapes.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

// ---- normalisation ----
/// Softmax along `dim`, max-shifted for stability. A line that is all -inf (fully masked) gives zeros,
/// where PyTorch gives NaN; one holding k entries of +inf gives 1/k on them and 0 elsewhere (the limit as they
/// grow together; PyTorch: NaN); a line holding a NaN gives NaNs, as in PyTorch. An empty line gives nothing.
Tensor softmax(const Tensor& x, int64_t dim);
/// softmax(masked_fill(x, blocked, -inf), -1) in one pass, with the same bits (attention's masked scores):
/// blocked is bool, broadcast to x's shape, true where the entry is left out; undefined = plain softmax. A
/// line blocked everywhere gives zeros. ShapeError for a 0-d x or a mask that does not broadcast to x,
/// DTypeError for a mask that is not bool.
Tensor masked_softmax(const Tensor& x, const Tensor& blocked);
/// log softmax along `dim`: x - logsumexp(x), stable for logits of any size. The log of softmax's limits: an all
/// -inf line gives -inf (PyTorch: NaN), k entries of +inf give -log k there and -inf elsewhere; NaN gives NaNs.
Tensor log_softmax(const Tensor& x, int64_t dim);
/// The gradient of softmax in one pass, y·(dy - Σ_dim dy·y), from the output y (dy and y of one shape).
Tensor softmax_backward(const Tensor& dy, const Tensor& y, int64_t dim);
/// softmax_backward(masked_scale(dy, keep, scale), y, -1) with the same bits, in one pass for f32: the
/// gradient of a last-dim softmax followed by dropout (keep: dropout's packed bits). ShapeError unless dy and
/// y have one shape of >= 1 dims (and keep holds their elements), DTypeError when their dtypes differ.
Tensor dropout_softmax_backward(const Tensor& dy, const Tensor& y, const Tensor& keep, double scale);
/// The gradient of log_softmax in one pass: dy - e^y·Σ_dim dy, from the output y; 0 on a line of y that is all
/// -inf (a fully masked line), as softmax_backward gives there.
Tensor log_softmax_backward(const Tensor& dy, const Tensor& y, int64_t dim);
/// Layer-norm statistics over the last `normalized_ndim` dims (two-pass in double: exact for rows with a
/// large mean and tiny variance). A constant row gives x̂ = 0 and rstd = 1/√eps; a row holding NaN gives NaNs.
/// ValueError naming the row for a row holding ±inf (no mean or variance), for rstd = 1/√(var + eps) not finite
/// (a constant row under eps = 0), and for rows of no elements. `output` = (x - mean)·rstd; mean, rstd keep the normalized dims as size 1.
/// With a weight or a bias (each the normalized shape, or undefined), `affine` = output·weight + bias in the
/// same pass, with the bits of mul then add; ShapeError when one has another shape.
struct Normalized {
  Tensor output;  ///< x̂ = (x - mean)·rstd, x's shape
  Tensor mean;    ///< per row, the normalized dims kept as size 1
  Tensor rstd;    ///< 1/√(var + eps), as mean
  Tensor affine;  ///< x̂·weight + bias; undefined without weight and bias
};
Normalized normalize(const Tensor& x, int64_t normalized_ndim, double eps, const Tensor& weight = Tensor(),
                     const Tensor& bias = Tensor());
/// Gradients of layer_norm's y = x̂·weight + bias from dy, x̂ and rstd (normalize's output and rstd), one
/// pass per row: with g = dy·weight, dx = rstd·(g - mean(g) - x̂·mean(g·x̂)); dweight = Σ_rows dy·x̂ and
/// dbias = Σ_rows dy, dweight in weight's shape and dbias flat (dweight undefined without weight, which then
/// counts as 1; dbias undefined unless with_bias). ShapeError when weight does not hold one value per normalised element.
struct LayerNormGrads {
  Tensor dx;       ///< x's shape
  Tensor dweight;  ///< weight's shape; undefined without weight
  Tensor dbias;    ///< flat; undefined unless with_bias
};
LayerNormGrads layer_norm_backward(const Tensor& dy, const Tensor& xhat, const Tensor& rstd, const Tensor& weight,
                                   bool with_bias);

// ---- indexing and joining ----
/// Entries of x at `index` (i64, 1-D) along `dim`. Like every op here that takes indices, IndexError
/// naming an index outside [0, size): negative indices are refused, as in PyTorch (a -1 is more often a bug
/// than a wish to count from the end).
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
/// A copy of x with source's slices added at `index` along `dim` (repeated indices accumulate).
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source);
/// Sums of rows in bags: out[m] = Σ_n weight[index[m, n]] over the n with index[m, n] != padding_idx.
/// weight (V, D), index (M, N) i64 -> (M, D), without an (M, N, D) copy (PyTorch's EmbeddingBag, mode sum).
/// ShapeError unless weight is 2-D and index (M, N); IndexError naming an index outside [0, V) or a padding_idx
/// outside [-1, V).
Tensor embedding_bag_sum(const Tensor& weight, const Tensor& index, int64_t padding_idx);
/// Its adjoint: (num_embeddings, D) zeros with dy[m] (M, D) added at every row index[m, n] != padding_idx.
/// ShapeError unless dy is (M, D) for index (M, N); ValueError for num_embeddings < 1; IndexError as above.
Tensor embedding_bag_sum_backward(const Tensor& dy, const Tensor& index, int64_t num_embeddings, int64_t padding_idx);
/// out[..i..] = x[..index[..i..]..] along `dim`; index has x's ndim and sizes ≤ x's off `dim`.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
/// A copy of x with out[..index[..i..]..] = source[..i..] along `dim` (torch.scatter): index (i64) has x's ndim,
/// sizes ≤ source's and ≤ x's off `dim`; only source's leading corner of index's shape is read. Among repeated
/// positions the last in index's row-major order wins (PyTorch leaves it unspecified). ShapeError for those
/// shapes, IndexError naming an index outside [0, x.size(dim)), DTypeError when the dtypes differ.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source);
/// The same with every addressed position set to `value` (torch.scatter's scalar form).
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, double value);
/// As scatter, with source added instead of written (repeats add up): the adjoint of gather. Not for bool.
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source);
/// Concatenation along `dim`; all shapes equal off `dim` (ShapeError naming two that differ). The result's dtype
/// is the promote_types of all, as PyTorch (i64 with f32 gives f32). ValueError for no tensors.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);
/// Stacks equal-shaped tensors along a new dim, promoting dtypes as cat.
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim);


// ---- scans, layout and norms (core/cpu/ops/: scan.cpp, layout.cpp, vector_norm.cpp) ----
/// Running sum along `dim`, as torch.cumsum: x (...) -> the same shape; a 0-d x is its own sum. Floats keep
/// their dtype and accumulate in double (PyTorch's CPU accumulator); i64 and bool give i64, wrapping on
/// overflow. IndexError for a dim out of range.
Tensor cumsum(const Tensor& x, int64_t dim);
/// Running product along `dim`, as torch.cumprod; dtypes and errors as cumsum.
Tensor cumprod(const Tensor& x, int64_t dim);
/// x with the order of each dim in `dims` reversed (torch.flip); no dims = a copy. IndexError for a dim out of
/// range, ValueError for a dim given twice.
Tensor flip(const Tensor& x, const std::vector<int64_t>& dims);
/// x shifted by shifts[i] places along dims[i], elements leaving one end coming back at the other (torch.roll);
/// with no dims, x flattened is rolled by shifts[0] and reshaped back. A dim given twice rolls twice, as torch's.
/// ValueError unless shifts and dims have one size (or dims is empty and shifts has one entry); IndexError for a
/// dim out of range.
Tensor roll(const Tensor& x, const std::vector<int64_t>& shifts, const std::vector<int64_t>& dims = {});
/// torch.nn.functional.pad's modes: `constant` fills with the value, `reflect` mirrors about the edge element
/// (not repeating it: 1 2 3 -> 3 2 1 2 3), `replicate` repeats the edge element.
enum class PadMode { constant, reflect, replicate };
/// x padded as torch.nn.functional.pad: pads = (before, after) for the last dim, then for the one before it,
/// ...; a negative pad crops. Unlike PyTorch, reflect and replicate take any rank and any number of padded
/// dims. ShapeError for an odd number of pads, more pairs than dims, a padded size below 0, a reflect pad not
/// below its dim's size, or replicate padding of an empty dim; ValueError for a value in a mode other than
/// constant.
Tensor pad(const Tensor& x, const std::vector<int64_t>& pads, PadMode mode = PadMode::constant, double value = 0);
/// The adjoint of pad: zeros of `shape` (the unpadded x's) with every element of dy added where pad read it
/// from (reflect and replicate read some elements several times; constant padding and cropped parts drop out).
/// ShapeError unless dy has pad's output shape for `shape`; pad's errors otherwise.
Tensor pad_backward(const Tensor& dy, const Shape& shape, const std::vector<int64_t>& pads, PadMode mode);
/// x tiled repeats[d] times along dim d (torch's Tensor.repeat); with more repeats than dims, x gets leading
/// dims of size 1 first. x (s0, ..., sk) -> (r0·s0, ..., rk·sk). ShapeError for fewer repeats than dims,
/// ValueError for a negative repeat.
Tensor repeat(const Tensor& x, const std::vector<int64_t>& repeats);
/// torch.tile: repeat with `reps` padded with leading 1s to x's rank when it is shorter. ValueError for a
/// negative rep.
Tensor tile(const Tensor& x, const std::vector<int64_t>& reps);
/// The lower triangle of the last two dims (torch.tril): entries (i, j) with j - i <= diagonal kept, the rest 0;
/// diagonal > 0 keeps diagonals above the main one, < 0 drops some below. x (..., M, N) -> the same shape.
/// ShapeError for fewer than 2 dims.
Tensor tril(const Tensor& x, int64_t diagonal = 0);
/// The upper triangle (torch.triu): entries with j - i >= diagonal kept. ShapeError for fewer than 2 dims.
Tensor triu(const Tensor& x, int64_t diagonal = 0);
/// One-hot rows of i64 class indices (torch.nn.functional.one_hot): indices (...) -> (..., num_classes) of
/// `dtype` (f32 by default, where PyTorch gives i64), 1 at each index. num_classes = -1 infers max + 1.
/// DTypeError for non-i64 indices; IndexError naming a negative index or one >= num_classes; ValueError for
/// num_classes < -1, or -1 with no indices to infer it from.
Tensor one_hot(const Tensor& indices, int64_t num_classes = -1, DType dtype = f32);
/// The vector norm over `dims` (empty = all), as torch.linalg.vector_norm: ord p > 0 gives (Σ|x|^p)^(1/p),
/// inf max|x|, -inf min|x|, 0 the count of non-zeros. Float only. For p ≠ 1 each line is scaled by its largest
/// |x| first, m·(Σ(|x|/m)^p)^(1/p), so huge or tiny finite values neither overflow nor underflow (PyTorch
/// squares as given and returns inf for ‖(1e200, 1e200)‖₂); a line holding inf gives inf, NaN gives NaN.
/// DTypeError for a non-float x; ValueError for a NaN or negative finite ord (PyTorch's p < 0 is not
/// supported), or ±inf over an empty line (no identity); IndexError for a dim out of range.
Tensor vector_norm(const Tensor& x, double ord = 2, const std::vector<int64_t>& dims = {}, bool keepdim = false);

}  // namespace tg
