#pragma once
// Internal to core: the f32 softmax lines of normalize.cpp on 16 lanes (see softmax_row.cpp).
#include <cstdint>

namespace tg::detail {

/// softmax of the contiguous f32 line in[0, n) into out (which may be in) with the bits of normalize.cpp's
/// portable line: max, exp_f32(x - max), Σ in its 8 lanes, ·(1/Σ). Returns false, writing nothing, where
/// that line must run instead: on a CPU without AVX-512, or when the line's max is -inf (fully masked).
bool softmax_f32_avx512(const float* in, float* out, int64_t n);

/// The same line with -inf where blocked[j] is true (blocked: n bools), as masked_fill then softmax_f32_avx512
/// would give it, without the filled copy; out may be in. Returns false, writing nothing, without
/// AVX-512 or when every element is blocked or -inf (the line's max is -inf).
bool masked_softmax_f32_avx512(const float* in, const bool* blocked, float* out, int64_t n);

/// softmax's gradient on a contiguous f32 line, p·(g - Σ g·p) with the sum in the portable line's 8 lanes;
/// out may be g or p. Returns false, writing nothing, on a CPU without AVX-512.
bool softmax_backward_f32_avx512(const float* g, const float* p, float* out, int64_t n);

/// log_softmax of the contiguous f32 line in[0, n) into out (which may be in) with the bits of normalize.cpp's
/// log_softmax_f32: (x - max) - log Σ exp_f32(x - max), Σ in its 8 lanes. Returns false, writing nothing,
/// where that line must run instead: on a CPU without AVX-512, or when the line's max is not finite.
bool log_softmax_f32_avx512(const float* in, float* out, int64_t n);

/// The portable lines (normalize.cpp) that the ones above stand in for, and that run where they return false.
void softmax_f32_portable(const float* in, float* out, int64_t n);
void log_softmax_f32_portable(const float* in, float* out, int64_t n);
void softmax_backward_f32_portable(const float* g, const float* p, float* out, int64_t n);

/// softmax's gradient on a contiguous f32 line, on AVX-512 where the CPU has it, else the portable line.
void softmax_backward_f32(const float* g, const float* p, float* out, int64_t n);

}  // namespace tg::detail
