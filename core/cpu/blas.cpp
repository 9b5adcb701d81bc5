// What BLAS we run on, and a check that its kernels compute (blas_info, check_blas; declared in core/parallel.h,
// and blas_narrower_than_cpu, kernels.h's):
// Debian's OpenBLAS 0.3.21 falls back to generic kernels on CPUs it does not know, and a wrong OPENBLAS_CORETYPE
// computes garbage. Here in the kernel room, with the products, so that no file of core/ includes OpenBLAS.
#include <cblas.h>

#include <initializer_list>
#include <string>

#include "core/error.h"
#include "core/cpu/kernels.h"
#include "core/parallel.h"

namespace tg {

namespace {

// The x86 core whose kernels fit the CPU's widest vectors: SkylakeX with AVX-512, Haswell with AVX2 ("" elsewhere,
// where OpenBLAS's own detection stands).
const char* suggested_core() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "SkylakeX";
  if (__builtin_cpu_supports("avx2")) return "Haswell";
#endif
  return "";
}

// Whether OpenBLAS's core `core` has kernels narrower than `suggested`'s vectors. The cores with AVX-512
// kernels, and those with AVX2 ones (AMD's Zen included).
bool narrower(const std::string& core, const std::string& suggested) {
  auto one_of = [&](std::initializer_list<const char*> cores) {
    for (const char* c : cores)
      if (core == c) return true;
    return false;
  };
  const bool avx512 = one_of({"SkylakeX", "Cooperlake", "SapphireRapids"});
  const bool avx2 = avx512 || one_of({"Haswell", "Zen"});
  return suggested == "SkylakeX" ? !avx512 : suggested == "Haswell" && !avx2;
}

}  // namespace

BlasInfo blas_info() {
  BlasInfo b{"OpenBLAS", openblas_get_config(), openblas_get_corename(), get_num_threads(), suggested_core(), ""};
  // A CPU with AVX-512 running AVX2 kernels (an OPENBLAS_CORETYPE left in the environment) gets about half its
  // sgemm speed: our own kernel then takes the f32 matrix products (cpu::sgemm_small_takes), not the others.
  if (narrower(b.core, b.suggested_core))
    b.warning = fmt::format("OpenBLAS runs its {} kernels on a CPU with {}: f64 and matrix-vector products run up "
                            "to several times slower; set OPENBLAS_CORETYPE={} in the environment", b.core,
                            b.suggested_core == "SkylakeX" ? "AVX-512" : "AVX2", b.suggested_core);
  return b;
}

namespace cpu {

bool blas_narrower_than_cpu() {
  static const bool answer = narrower(openblas_get_corename(), suggested_core());
  return answer;
}

}  // namespace cpu

void check_blas() {
  // A (3x5) @ B (5x4) with small integers: exact in f32 and f64, so any difference is a broken kernel.
  const int M = 3, K = 5, N = 4;
  float a[M * K], b[K * N], c[M * N];
  double ad[M * K], bd[K * N], cd[M * N];
  for (int i = 0; i < M * K; ++i) a[i] = float(ad[i] = (i * 7) % 5 - 2);
  for (int i = 0; i < K * N; ++i) b[i] = float(bd[i] = (i * 3) % 7 - 3);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0, ad, K, bd, N, 0.0, cd, N);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int k = 0; k < K; ++k) want += ad[i * K + k] * bd[k * N + j];
      check<Error>(c[i * N + j] == float(want) && cd[i * N + j] == want,
                   "check_blas: OpenBLAS core {} computes a wrong product ({} / {} instead of {}); unset "
                   "OPENBLAS_CORETYPE or choose another core", openblas_get_corename(), c[i * N + j], cd[i * N + j],
                   want);
    }
}

}  // namespace tg
