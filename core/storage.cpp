// Storage: where tensor buffers come from and go back to. Small buffers are recycled per thread; large
// ones are mapped from the kernel and cached by size, so that a training step, which allocates the same
// sizes step after step, neither faults pages in again nor leaves freed memory stranded in malloc's heap.
#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

#include "core/tensor.h"

namespace tg {

namespace {
std::atomic<int64_t> g_live_storages{0};  // relaxed: a count for tests, not a synchronisation point

// Small buffers (64 B .. 64 KB, power-of-two classes) are recycled through per-thread free lists: autograd
// on small tensors allocates and frees a few buffers per op, and aligned_alloc/free were a third of its
// time. A list keeps at most kKeep buffers; a buffer freed on another thread joins that thread's list.
// Under AddressSanitizer nothing is kept, so that a use after free is still reported.
constexpr int kClasses = 11;
constexpr size_t kKeep = kAddressSanitizer ? 0 : 64;
struct FreeLists {
  std::vector<void*> lists[kClasses];
  FreeLists() {
    for (auto& l : lists) l.reserve(kKeep);  // so that a destructor's push_back never allocates
  }
  ~FreeLists();
};
thread_local bool t_lists_gone = false;  // trivially destructible: still readable after ~FreeLists
thread_local FreeLists t_free;
FreeLists::~FreeLists() {
  t_lists_gone = true;  // storages freed later on this thread (statics) go straight to free()
  for (auto& l : lists)
    for (void* p : l) std::free(p);
}

int size_class(size_t bytes) {  // the smallest c with 64 << c >= bytes, or -1 when too large
  int c = 0;
  while (c < kClasses && (size_t(64) << c) < bytes) ++c;
  return c < kClasses ? c : -1;
}

// Large buffers (above the small classes) are whole pages from mmap, returned with munmap, except that a
// freed one waits in a process-wide cache for the next request of its exact size, up to kCacheLimit bytes
// in all. malloc served these from its heap once its mmap threshold had risen to the largest block freed
// (glibc's dynamic threshold), and its heap then held about as much freed memory as the step used: peak
// RSS of one training step of bench config M was 776 MB with 377 MB in live buffers. Mapping every buffer
// anew instead costs a page fault per 4 KB touched (+50 % time per step on M); the cache avoids both.
constexpr size_t kPage = 4096;
constexpr size_t kCacheLimit = size_t(256) << 20;
struct LargeCache {
  std::mutex mutex;
  std::multimap<size_t, void*> blocks;  // size in bytes (whole pages) -> block
  size_t bytes = 0;
};
LargeCache& large_cache() {
  static auto* cache = new LargeCache;  // never destroyed: storages may be freed during static destruction
  return *cache;
}
size_t pages_for(int64_t nbytes) { return (size_t(nbytes) + kPage - 1) / kPage * kPage; }

void* map_large(size_t size) {
  LargeCache& c = large_cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (auto it = c.blocks.find(size); it != c.blocks.end()) {
      void* p = it->second;
      c.blocks.erase(it);
      c.bytes -= size;
      return p;
    }
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void unmap_large(void* p, size_t size) {
  LargeCache& c = large_cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (c.bytes + size <= kCacheLimit) {
      c.blocks.emplace(size, p);
      c.bytes += size;
      return;
    }
  }
  munmap(p, size);
}
}  // namespace

int64_t live_storages() { return g_live_storages.load(std::memory_order_relaxed); }

Storage::Storage(int64_t n) : nbytes(n) {
  size_t bytes = size_t((n + 63) / 64 * 64);
  const int c = bytes ? size_class(bytes) : -1;
  if (c >= 0 && !t_lists_gone && !t_free.lists[c].empty()) {
    data = t_free.lists[c].back();
    t_free.lists[c].pop_back();
  } else if (kAddressSanitizer) {
    // Exactly n bytes, unpadded, so that ASan reports an access one element past the end (posix_memalign:
    // ASan's aligned_alloc insists on a size that is a multiple of the alignment).
    if (bytes && posix_memalign(&data, 64, size_t(n)) != 0) data = nullptr;
  } else if (c < 0 && bytes) {
    data = map_large(pages_for(n));
  } else {
    data = bytes ? std::aligned_alloc(64, size_t(64) << c) : nullptr;
  }
  if (bytes && !data) throw std::bad_alloc();
  g_live_storages.fetch_add(1, std::memory_order_relaxed);  // after the throw: a failed ctor runs no dtor
}
Storage::~Storage() {
  const int c = data ? size_class(size_t((nbytes + 63) / 64 * 64)) : -1;
  if (c >= 0 && !t_lists_gone && t_free.lists[c].size() < kKeep) t_free.lists[c].push_back(data);
  else if (data && c < 0 && !kAddressSanitizer) unmap_large(data, pages_for(nbytes));
  else std::free(data);
  g_live_storages.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace tg
