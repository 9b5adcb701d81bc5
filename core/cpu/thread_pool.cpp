// A small thread pool for our kernels and our matrix products. Workers sleep on a condition variable between
// jobs (no spinning). OpenBLAS runs on the calling thread only: its own pool spins with sched_yield between
// GEMMs and takes the core our workers need (bench/RESULTS.md), so linalg.cpp splits products over this pool.
#include <cblas.h>

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/cpu/kernels.h"
#include "core/error.h"
#include "core/parallel.h"

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

}  // namespace tg

namespace tg::cpu {

int threads_here() { return t_in_parallel ? 1 : g_threads.load(); }

void parallel_for_chunks(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& f) {
  if (n <= 0) return;
  const int64_t most = n / std::max<int64_t>(grain, 1);  // chunks of a grain or more
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

}  // namespace tg::cpu
