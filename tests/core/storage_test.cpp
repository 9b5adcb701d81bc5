// Storage (core/storage.cpp): small buffers share their header's block; a StorageVersion reads the version
// after the tensors are gone; a StorageBudget (core/storage_budget.h) caps what one thread allocates. And the cache of freed large buffers: a request takes a cached block of its own size
// or up to a third larger (one it fills to 3/4 at least), so that batches whose shapes change from step to
// step reuse each other's pages; it keeps the blocks of a peak above 256 MB.
// Sizes are numbers of pages that no other core test maps (strace), and each test's range of sizes
// excludes the blocks the others leave in the cache. Under AddressSanitizer nothing is cached: no checks.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "core/ops.h"
#include "core/storage_budget.h"

using namespace tg;

namespace {
constexpr int64_t kPageFloats = 1024;  // f32 elements per 4 KB page
const void* buffer_of(const Tensor& t) { return t.storage()->data; }
}  // namespace

TEST_CASE("a small buffer sits in its storage's block, 64-byte aligned; a larger one has its own") {
  const Tensor small = empty({4, 4}, f32);  // 64 bytes
  const Tensor large = empty({Storage::kInlineBytes / 4 + 1}, f32);
  CHECK(buffer_of(small) == reinterpret_cast<const char*>(small.storage().get()) + 64);
  CHECK(reinterpret_cast<uintptr_t>(buffer_of(small)) % 64 == 0);
  CHECK(buffer_of(large) != reinterpret_cast<const char*>(large.storage().get()) + 64);
  CHECK(reinterpret_cast<uintptr_t>(buffer_of(large)) % 64 == 0);
}

TEST_CASE("a StorageVersion sees in-place writes through every view, and keeps no tensor alive") {
  for (int64_t n : {int64_t(3), Storage::kInlineBytes}) {  // buffer in the header's block, and apart
    CAPTURE(n);
    const int64_t live = live_storages();
    StorageVersion v;
    {
      Tensor x = zeros({n}, f32);
      v = StorageVersion(x.storage());
      CHECK(x.storage().use_count() == 1);  // the handle is not a StoragePtr
      x.slice(0, 1, 2).fill_(1.0);
      CHECK(v.version() == 1);
    }
    CHECK(live_storages() == live);  // the tensor's storage is gone ...
    CHECK(v.version() == 1);         // ... and its last version still reads (ASan checks the header is alive)
  }
}

TEST_CASE("a freed large buffer serves a later request a little smaller") {
  if (kAddressSanitizer) return;
  const void* p = buffer_of(empty({2501 * kPageFloats}, f32));  // freed at once: cached
  CHECK(buffer_of(empty({2201 * kPageFloats}, f32)) == p);      // 2501 / 2201 = 1.14
}

TEST_CASE("a freed large buffer goes back to the cache whole after a smaller tensor used it") {
  if (kAddressSanitizer) return;
  const void* p = buffer_of(empty({5003 * kPageFloats}, f32));
  CHECK(buffer_of(empty({4103 * kPageFloats}, f32)) == p);  // used and freed as the smaller size
  CHECK(buffer_of(empty({5003 * kPageFloats}, f32)) == p);  // cached again under its own size
}

TEST_CASE("a freed large buffer is not given to a request of half its size") {
  if (kAddressSanitizer) return;
  const void* p = buffer_of(empty({12007 * kPageFloats}, f32));
  CHECK(buffer_of(empty({6005 * kPageFloats}, f32)) != p);
}

TEST_CASE("the cache keeps every block of a peak above 256 MB") {
  if (kAddressSanitizer) return;
  constexpr int64_t n = 30011 * kPageFloats;  // 117 MB, three at once
  {
    std::vector<Tensor> held;
    for (int i = 1; i <= 3; ++i) held.push_back(empty({n}, f32)), held.back().data<float>()[0] = float(i);
  }  // all three freed together
  // Each comes back from the cache with its marker: one unmapped and mapped anew would read 0.
  std::set<float> markers;
  std::vector<Tensor> again;
  for (int i = 0; i < 3; ++i) again.push_back(empty({n}, f32)), markers.insert(again.back().data<float>()[0]);
  CHECK(markers == std::set<float>{1, 2, 3});
}

TEST_CASE("a StorageBudget counts this thread's buffers (and their headers), refuses the one past it, nests") {
  {
    StorageBudget outer(10000, "the outer one");
    const Tensor a = empty({100}, f64);  // 800 + 64 bytes
    CHECK(outer.used() == 864);
    {
      StorageBudget inner(1000, "the inner one");
      CHECK_THROWS_WITH_AS(empty({1000}, f32), "a buffer of 4000 bytes would pass the budget of 1000 bytes (the inner "
                                               "one; 0 bytes taken so far)", StorageBudgetError);
      const Tensor b = empty({200}, f32);  // 864 bytes: counted by the inner budget alone
      CHECK(inner.used() == 864);
      CHECK(outer.used() == 864);
    }
    CHECK_THROWS_WITH_AS(empty({1 << 30}, f64), doctest::Contains("the outer one; 864 bytes taken so far"),
                         StorageBudgetError);
    CHECK(outer.used() == 864);
  }
  CHECK(empty({2000}, f64).numel() == 2000);  // 16000 bytes, no budget any more (pooled: the page cache untouched)
  CHECK_THROWS_WITH_AS(StorageBudget(-1, "x"), "StorageBudget: max_bytes must be >= 0, got -1", ValueError);
}
