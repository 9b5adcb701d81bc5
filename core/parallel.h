#pragma once
// Threads: one small pool of our own for large elementwise and reduction kernels and for matrix products,
// which it splits itself: OpenBLAS runs on one thread (set when tensorgrad loads), so that two pools never
// run more threads than asked for.
#include <cstdint>
#include <functional>
#include <string>

namespace tg {

/// The most threads set_num_threads accepts (far above any core count; the pool starts them all at once).
inline constexpr int kMaxThreads = 1024;
/// Sets the thread count of tensorgrad's kernels and matrix products (1 <= n <= kMaxThreads, else
/// ValueError). Products are split so that each element is computed as on one thread (on OpenBLAS's x86
/// cores; see core/cpu/gemm.cpp).
void set_num_threads(int n);
int get_num_threads();
/// Runs task(0) .. task(n - 1), up to get_num_threads() of them at once on the pool: each task on one
/// thread, its kernels and products serial, so a task computes the same bits whatever
/// the thread count. Tasks are taken in index order by whichever thread is free, so they must not depend on
/// each other. An exception from a task is rethrown once all have run (the lowest task's). Serial, in
/// order, with one thread, one task, inside another parallel region, or while another thread holds the pool.
void parallel_tasks(int64_t n, const std::function<void(int64_t)>& task);

/// What BLAS we run on: OpenBLAS's build config, its kernel core (e.g. "SkylakeX", "Prescott"), threads,
/// the core this CPU could use, and a warning when the kernels in use have a narrower instruction set than
/// the CPU (Debian's OpenBLAS 0.3.21 falls back to generic ones on recent Xeons, several times slower GEMMs;
/// OPENBLAS_CORETYPE=Haswell set on an AVX-512 CPU halves their speed).
struct BlasInfo {
  std::string library;         ///< the BLAS library's name
  std::string config;          ///< OpenBLAS's build config (openblas_get_config)
  std::string core;            ///< the kernel core in use, e.g. "SkylakeX"
  int threads = 1;  ///< the threads products run on: get_num_threads() (OpenBLAS's own pool has one)
  std::string suggested_core;  ///< "SkylakeX" (AVX-512), "Haswell" (AVX2) or "" (nothing better known)
  std::string warning;         ///< empty when the core in use is fine
};
BlasInfo blas_info();

/// Multiplies a small f32 and f64 product with the BLAS in use and compares it with a plain loop;
/// throws Error naming the core when they differ (a wrongly chosen OPENBLAS_CORETYPE computes garbage).
void check_blas();

}  // namespace tg
