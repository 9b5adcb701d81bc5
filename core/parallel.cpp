// A small thread pool for our kernels and our matrix products. Workers sleep on a condition variable between
// jobs (no spinning). OpenBLAS runs on the calling thread only: its own pool spun with sched_yield between
// GEMMs and took the core our workers needed (config S with 2 threads: 12.0 ms per step against 8.2 ms with
// one, 60 % of its profile in sched_yield and the VM's kernel), so linalg.cpp splits products over this pool.
#include "core/parallel.h"

#include <cblas.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <initializer_list>
#include <mutex>
#include <thread>
#include <vector>

#include "core/error.h"

namespace tg {
namespace {

class Pool {
 public:
  explicit Pool(int n) { resize(n); }
  ~Pool() { stop(); }
  int size() const { return int(workers_.size()) + 1; }

  void resize(int n) {
    stop();
    done_ = false;
    // New workers start at the current generation: the last job is finished and its job_ gone.
    for (int i = 1; i < n; ++i) workers_.emplace_back([this, i, g = generation_] { loop(i, g); });
  }

  // Runs chunk(i) for i in [0, chunks); the caller runs chunk 0 itself.
  void run(int chunks, const std::function<void(int)>& chunk) {
    std::unique_lock lock(mu_);
    job_ = &chunk, chunks_ = chunks, pending_ = chunks - 1, ++generation_;
    lock.unlock();
    wake_.notify_all();
    chunk(0);
    lock.lock();
    finished_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  void loop(int id, uint64_t seen) {
    for (;;) {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return done_ || generation_ != seen; });
      if (done_) return;
      seen = generation_;
      if (id >= chunks_) continue;
      const auto* job = job_;
      lock.unlock();
      (*job)(id);
      lock.lock();
      if (--pending_ == 0) finished_.notify_one();
    }
  }
  void stop() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, finished_;
  const std::function<void(int)>* job_ = nullptr;
  int chunks_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
  bool done_ = false;
};

int default_threads() { return std::max(1, int(std::thread::hardware_concurrency())); }
// Set at load, before any product: OpenBLAS starts with as many threads as cores (or OPENBLAS_NUM_THREADS).
const bool g_blas_on_one_thread = (openblas_set_num_threads(1), true);
std::atomic<int> g_threads = default_threads();  // written under g_pool_mu, read anywhere
thread_local bool t_in_parallel = false;
std::mutex g_pool_mu;  // one parallel region at a time; others run serially

Pool& pool() {
  static Pool p(g_threads);
  return p;
}

}  // namespace

void set_num_threads(int n) {
  check<ValueError>(n >= 1, "set_num_threads: need at least 1 thread, got {}", n);
  // Each thread is a worker started now: set_num_threads(100000) started threads until the system ran out
  // of processes (for root there is no RLIMIT_NPROC), taking other programs down with it.
  check<ValueError>(n <= kMaxThreads, "set_num_threads: at most {} threads, got {}", kMaxThreads, n);
  std::lock_guard lock(g_pool_mu);
  g_threads = n;
  pool().resize(n);
}

int get_num_threads() { return g_threads; }

int threads_here() { return t_in_parallel ? 1 : g_threads.load(); }

void parallel_for_chunks(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  if (n <= 0) return;
  const int64_t most = (n + grain - 1) / std::max<int64_t>(grain, 1);
  std::unique_lock lock(g_pool_mu, std::defer_lock);
  if (most <= 1 || t_in_parallel || !lock.try_lock()) return f(0, n);
  // Read the thread count under the lock that set_num_threads resizes the pool under: read before it, a
  // concurrent shrink would leave chunks without a worker, and run() would wait for them forever.
  const int64_t chunks = std::min<int64_t>(g_threads, most);
  if (chunks <= 1) return lock.unlock(), f(0, n);
  t_in_parallel = true;
  pool().run(int(chunks), [&](int i) {
    bool outer = t_in_parallel;
    t_in_parallel = true;
    f(n * i / chunks, n * (i + 1) / chunks);
    t_in_parallel = outer;
  });
  t_in_parallel = false;
}

void parallel_tasks(int64_t n, const std::function<void(int64_t)>& task) {
  std::unique_lock lock(g_pool_mu, std::defer_lock);
  const int64_t threads = n > 1 && !t_in_parallel && lock.try_lock() ? std::min<int64_t>(g_threads, n) : 1;
  if (threads <= 1) {
    if (lock.owns_lock()) lock.unlock();
    for (int64_t i = 0; i < n; ++i) task(i);
    return;
  }
  // Dealt out one at a time rather than in fixed ranges: 3 tasks of equal length on 2 threads take 2 task
  // times either way, but tasks of unequal length balance. Which thread runs a task changes no result.
  std::atomic<int64_t> next = 0;
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  t_in_parallel = true;
  pool().run(int(threads), [&](int) {
    bool outer = t_in_parallel;
    t_in_parallel = true;
    for (int64_t i = next++; i < n; i = next++) {
      try {
        task(i);
      } catch (...) {
        errors[size_t(i)] = std::current_exception();
      }
    }
    t_in_parallel = outer;
  });
  t_in_parallel = false;
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

BlasInfo blas_info() {
  BlasInfo b{"OpenBLAS", openblas_get_config(), openblas_get_corename(), get_num_threads(), "", ""};
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) b.suggested_core = "SkylakeX";
  else if (__builtin_cpu_supports("avx2")) b.suggested_core = "Haswell";
  // The cores with AVX-512 kernels, and those with AVX2 ones (AMD's Zen included). On an AMD EPYC of family
  // 26 (AVX-512) with OPENBLAS_CORETYPE=Haswell in its environment: sgemm 90-94 GFLOP/s per core against
  // 160-175 with SkylakeX, and no warning before.
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
