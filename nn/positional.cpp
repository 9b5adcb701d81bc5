// Absolute positional encodings, added to token embeddings so that attention (which is permutation
// invariant) sees order: fixed sinusoids (a buffer) and a learned table (a parameter).
#include "nn/positional.h"

#include <cmath>

namespace tg::nn {
namespace {

void check_options(const char* op, int64_t d_model, int64_t max_len, DType dtype) {
  check<ValueError>(d_model > 0 && max_len > 0, "{}: d_model and max_len must be positive, got {} and {}", op,
                    d_model, max_len);
  check<DTypeError>(is_floating(dtype), "{}: dtype must be f32 or f64, got {}", op, dtype);
}

// The sequence length S of x (..., S, d_model) at positions from `start`, checked against the layer.
int64_t checked_length(const char* op, const Variable& x, int64_t start, int64_t d_model, int64_t max_len) {
  check<ShapeError>(x.dim() >= 2 && x.size(-1) == d_model, "{}: x must be (B, S, {}), got {}", op, d_model,
                    x.shape());
  const int64_t S = x.size(-2);
  check<ValueError>(start >= 0, "{}: start position must be >= 0, got {}", op, start);
  check<ValueError>(start + S <= max_len, "{}: sequence length {} exceeds max_len {} from start position {}", op, S,
                    max_len, start);
  return S;
}

// PE(pos, 2i) = sin(pos·ω_i), PE(pos, 2i+1) = cos(pos·ω_i), ω_i = 10000^(-2i/d); computed in double, in a
// tensor from the start (not a std::vector): the size is checked (overflow, nn::load_model's StorageBudget)
// before any memory is taken or any work done.
Tensor sinusoids(int64_t max_len, int64_t d, DType dtype) {
  Tensor pe = empty({max_len, d}, f64);
  double* p = pe.data<double>();
  for (int64_t pos = 0; pos < max_len; ++pos) {
    for (int64_t j = 0; j < d; ++j) {
      const double angle = double(pos) * std::pow(10000.0, -double(j - j % 2) / double(d));
      p[pos * d + j] = j % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  }
  return pe.to(dtype);
}

}  // namespace

SinusoidalPositionalEncoding::SinusoidalPositionalEncoding(const PositionalEncodingOptions& options)
    : options_(options) {
  check_options("SinusoidalPositionalEncoding", options.d_model, options.max_len, options.dtype);
  pe_ = register_buffer("pe", sinusoids(options.max_len, options.d_model, options.dtype));
}

Variable SinusoidalPositionalEncoding::forward(const Variable& x) { return forward(x, 0); }

Variable SinusoidalPositionalEncoding::forward(const Variable& x, int64_t start) {
  const int64_t S = checked_length("SinusoidalPositionalEncoding", x, start, options_.d_model, options_.max_len);
  return x + Variable(pe_.slice(0, start, start + S));  // (S, d) broadcast over the batch
}

LearnedPositionalEncoding::LearnedPositionalEncoding(const LearnedPositionalEncodingOptions& options)
    : options_(options) {
  check_options("LearnedPositionalEncoding", options.d_model, options.max_len, options.dtype);
  check<ValueError>(options.std >= 0, "LearnedPositionalEncoding: std must be >= 0, got {}", options.std);
  weight_ = register_parameter("weight", randn({options.max_len, options.d_model}, options.dtype) * options.std);
}

Variable LearnedPositionalEncoding::forward(const Variable& x) { return forward(x, 0); }

Variable LearnedPositionalEncoding::forward(const Variable& x, int64_t start) {
  const int64_t S = checked_length("LearnedPositionalEncoding", x, start, options_.d_model, options_.max_len);
  return x + weight_.slice(0, start, start + S);  // only those S rows get a gradient
}

}  // namespace tg::nn
