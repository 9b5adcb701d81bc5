// Threads: set_num_threads validation, parallel_for covering its range exactly once, and kernels and matrix
// products giving bit-identical results with 1 and 2 threads on a (1 << 20)-element input, across pool
// resizes; OpenBLAS stays on one thread.
#include <cblas.h>

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <mutex>

#include "core/cpu/kernels.h"
#include "core/error.h"
#include "core/ops.h"
#include "core/parallel.h"
#include "reference.h"

using namespace tg;

namespace {

// Restores the thread count a test changed.
struct ThreadsGuard {
  int saved = get_num_threads();
  ~ThreadsGuard() { set_num_threads(saved); }
};

// The kernels with a threaded path, on one big input; returned as flat f64 vectors to compare bitwise.
std::vector<std::vector<double>> run_kernels(const Tensor& x, const Tensor& y) {
  std::vector<std::vector<double>> out;
  auto keep = [&](const Tensor& t) { out.push_back(t.to_vector<double>()); };
  keep(x + y);              // binary, both contiguous
  keep(x * 0.5);            // binary, scalar operand
  keep(tanh(x));            // unary
  keep(sum(x.view({1024, 1024}), {1}));  // per-row reductions
  keep(logsumexp(x.view({4096, 256}), {1}));
  keep(softmax(x.view({2048, 512}), 1));
  keep(normalize(x.view({1024, 1024}), 1, 1e-5).output);
  Tensor z = x.clone();
  z.addcmul_(x, y, 0.25);  // in place
  keep(z);
  keep(sum(x));  // one long row: serial
  // Products: one large enough to be split by rows (with B's rows 4096 apart, and with A transposed), and
  // 256 small ones spread over the threads.
  const Tensor b = y.view({256, 4096}).slice(1, 0, 256);
  keep(matmul(x.view({4096, 256}), b));
  keep(matmul(x.view({256, 4096}).mT(), b));
  keep(matmul(x.view({256, 64, 64}), y.view({256, 64, 64})));
  keep(linear(x.view({4096, 256}), y.view({4096, 256}).slice(0, 0, 256), y.slice(0, 0, 256)));  // with its bias
  return out;
}

}  // namespace

TEST_CASE("set_num_threads refuses fewer than one thread and more than kMaxThreads") {
  ThreadsGuard guard;
  CHECK_THROWS_WITH_AS(set_num_threads(0), doctest::Contains("set_num_threads: need at least 1 thread, got 0"), ValueError);
  CHECK_THROWS_WITH_AS(set_num_threads(-3), doctest::Contains("got -3"), ValueError);
  // `sentiment --threads 100000` started threads until the machine had no processes left.
  CHECK_THROWS_WITH_AS(set_num_threads(100000), "set_num_threads: at most 1024 threads, got 100000", ValueError);
  CHECK(get_num_threads() == guard.saved);
  set_num_threads(3);
  CHECK(get_num_threads() == 3);
}

TEST_CASE("kernels give identical results with 1 and 2 threads, across pool resizes") {
  ThreadsGuard guard;
  const int64_t n = int64_t(1) << 20;
  Tensor x = tensor(tg::test::sample(n, 3.0, 1), {n}), y = tensor(tg::test::sample(n, 3.0, 2), {n});
  set_num_threads(2);
  auto two = run_kernels(x, y);
  set_num_threads(1);
  auto one = run_kernels(x, y);
  set_num_threads(2);  // grows the pool again after it ran jobs
  auto again = run_kernels(x, y);
  REQUIRE(one.size() == two.size());
  for (size_t k = 0; k < one.size(); ++k) {
    CAPTURE(k);
    CHECK(again[k] == two[k]);
    CHECK(one[k] == two[k]);  // the products split by rows too, on every OpenBLAS core
  }
  // and the threaded result is right, not just repeatable
  std::vector<double> xs = x.to_vector<double>(), ys = y.to_vector<double>();
  for (int64_t i = 0; i < n; i += 4099) CHECK(two[0][i] == double(float(xs[i]) + float(ys[i])));
}

TEST_CASE("cpu::parallel_for covers [0, n) exactly once, in chunks of at least grain, split from two grains") {
  ThreadsGuard guard;
  for (int threads : {1, 2, 4}) {
    set_num_threads(threads);
    for (int64_t n : {0, 1, 7, 100, 199, 200, 1000, 100003}) {
      CAPTURE(threads);
      CAPTURE(n);
      std::vector<std::atomic<int>> hits(n);
      std::atomic<int64_t> smallest{n};
      std::atomic<int> calls{0};
      cpu::parallel_for(n, 100, [&](int64_t lo, int64_t hi) {
        ++calls;
        if (hi - lo < smallest) smallest = hi - lo;
        for (int64_t i = lo; i < hi; ++i) ++hits[i];
      });
      bool once = true;
      for (auto& h : hits) once &= h == 1;
      CHECK(once);
      CHECK(calls <= threads);
      if (n == 0) CHECK(calls == 0);
      if (n > 0 && n < 200) CHECK(calls == 1);
      if (n >= 200) CHECK(calls == std::min<int64_t>(threads, n / 100));  // nothing else holds the pool here
      if (calls > 1) CHECK(smallest >= 100);
    }
  }
}

TEST_CASE("a cpu::parallel_for nested inside another runs serially and still covers its range") {
  ThreadsGuard guard;
  set_num_threads(2);
  std::atomic<int64_t> total{0};
  cpu::parallel_for(4, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i)
      cpu::parallel_for(1000, 10, [&](int64_t a, int64_t b) { total += b - a; });
  });
  CHECK(total == 4000);
}

TEST_CASE("parallel_tasks runs every task once, on up to the threads") {
  ThreadsGuard guard;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    for (int64_t n : {0, 1, 2, 5}) {
      CAPTURE(threads);
      CAPTURE(n);
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> running{0}, most{0};
      parallel_tasks(n, [&](int64_t i) {
        most = std::max(most.load(), ++running);
        ++hits[size_t(i)];
        --running;
      });
      for (auto& h : hits) CHECK(h == 1);
      CHECK(most <= threads);
    }
  }
}

TEST_CASE("parallel_tasks runs serially in index order with one thread, and inside a parallel region") {
  ThreadsGuard guard;
  set_num_threads(1);
  std::vector<int64_t> order;
  parallel_tasks(4, [&](int64_t i) { order.push_back(i); });
  CHECK(order == std::vector<int64_t>{0, 1, 2, 3});
  set_num_threads(2);
  std::vector<std::vector<int64_t>> inner(2);
  parallel_tasks(2, [&](int64_t outer) { parallel_tasks(3, [&](int64_t i) { inner[size_t(outer)].push_back(i); }); });
  CHECK(inner[0] == std::vector<int64_t>{0, 1, 2});
  CHECK(inner[1] == std::vector<int64_t>{0, 1, 2});
}

TEST_CASE("parallel_tasks rethrows the lowest task's exception after running all of them") {
  ThreadsGuard guard;
  for (int threads : {1, 2}) {
    CAPTURE(threads);
    set_num_threads(threads);
    std::atomic<int> ran{0};
    CHECK_THROWS_WITH_AS(parallel_tasks(5, [&](int64_t i) {
                           ++ran;
                           if (i == 1 || i == 3) throw ValueError(fmt::format("task {} failed", i));
                         }),
                         "task 1 failed", ValueError);
    CHECK(ran == (threads == 1 ? 2 : 5));  // serial: stops at the first, as a loop would
    parallel_tasks(3, [&](int64_t) { ++ran; });  // the pool works after a failed region
    CHECK(ran == (threads == 1 ? 5 : 8));
  }
}

TEST_CASE("kernels inside parallel_tasks give the same bits as on one thread") {
  ThreadsGuard guard;
  const int64_t n = int64_t(1) << 20;  // run_kernels' views need this size
  Tensor x = tensor(tg::test::sample(n, 3.0, 3), {n}), y = tensor(tg::test::sample(n, 3.0, 4), {n});
  set_num_threads(1);
  const auto one = run_kernels(x, y);
  set_num_threads(2);
  std::vector<std::vector<std::vector<double>>> each(3);
  parallel_tasks(3, [&](int64_t i) { each[size_t(i)] = run_kernels(x, y); });
  for (const auto& e : each) CHECK(e == one);
}

TEST_CASE("blas_info names OpenBLAS and its kernel core; OpenBLAS runs on one thread at any thread count") {
  ThreadsGuard guard;
  BlasInfo info = blas_info();
  CHECK(info.library == "OpenBLAS");
  CHECK_FALSE(info.core.empty());
  CHECK(info.threads == get_num_threads());
  CHECK(openblas_get_num_threads() == 1);  // set when tensorgrad loads, whatever OPENBLAS_NUM_THREADS says
  set_num_threads(3);
  CHECK(blas_info().threads == 3);
  CHECK(openblas_get_num_threads() == 1);
  // our own kernel takes over f32 products exactly when OpenBLAS runs kernels narrower than the CPU, which warns
  CHECK(cpu::blas_narrower_than_cpu() == !info.warning.empty());
}
