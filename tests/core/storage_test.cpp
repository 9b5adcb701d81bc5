// Storage's cache of freed large buffers (core/storage.cpp): a request takes a cached block of its own size
// or up to a third larger (one it fills to 3/4 at least), so that batches whose shapes change from step to
// step reuse each other's pages.
// Sizes are numbers of pages that no other core test maps (strace), and each test's range of sizes
// excludes the blocks the others leave in the cache. Under AddressSanitizer nothing is cached: no checks.
#include <doctest/doctest.h>

#include "core/ops.h"

using namespace tg;

namespace {
constexpr int64_t kPageFloats = 1024;  // f32 elements per 4 KB page
const void* buffer_of(const Tensor& t) { return t.storage()->data; }
}  // namespace

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
