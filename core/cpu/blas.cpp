// What BLAS we run on, and a check that its kernels compute (blas_info, check_blas; declared in core/parallel.h):
// Debian's OpenBLAS 0.3.21 falls back to generic kernels on CPUs it does not know, and a wrong OPENBLAS_CORETYPE
// computes garbage. Here in the kernel room, with the products, so that no file of core/ includes OpenBLAS.
#include <cblas.h>

#include <initializer_list>

#include "core/error.h"
#include "core/parallel.h"

namespace tg {

BlasInfo blas_info() {
  BlasInfo b{"OpenBLAS", openblas_get_config(), openblas_get_corename(), get_num_threads(), "", ""};
#if defined(__x86_64__)
  // The suggestion covers the x86 cores whose choice matters most; elsewhere OpenBLAS's own detection stands.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) b.suggested_core = "SkylakeX";
  else if (__builtin_cpu_supports("avx2")) b.suggested_core = "Haswell";
#endif
  // The cores with AVX-512 kernels, and those with AVX2 ones (AMD's Zen included): a CPU with AVX-512 running
  // AVX2 kernels (an OPENBLAS_CORETYPE left in the environment) gets about half its sgemm speed.
  auto one_of = [&](std::initializer_list<const char*> cores) {
    for (const char* c : cores)
      if (b.core == c) return true;
    return false;
  };
  const bool avx512 = one_of({"SkylakeX", "Cooperlake", "SapphireRapids"});
  const bool avx2 = avx512 || one_of({"Haswell", "Zen"});
  const bool weaker = b.suggested_core == "SkylakeX" ? !avx512 : b.suggested_core == "Haswell" && !avx2;
  if (weaker)
    b.warning = fmt::format("OpenBLAS runs its {} kernels on a CPU with {}: GEMMs run up to several times slower; "
                            "set OPENBLAS_CORETYPE={} in the environment", b.core,
                            b.suggested_core == "SkylakeX" ? "AVX-512" : "AVX2", b.suggested_core);
  return b;
}

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
