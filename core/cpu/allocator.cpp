// Where tensor buffers and autograd's small objects come from: the pool of small blocks (core/pool.h) and the
// cache of large page-mapped blocks (kernels.h). Small buffers are recycled per thread; large ones are mapped
// from the kernel and cached by size, so that a training step, which allocates the same sizes step after step,
// neither faults pages in again nor leaves freed memory stranded in malloc's heap.
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>

#include "core/cpu/kernels.h"
#include "core/pool.h"
#include "core/tensor.h"

namespace tg {

namespace {
// Small blocks (64 B .. 64 KB, power-of-two classes; pool.h) are recycled through per-thread free lists:
// autograd on small tensors makes and drops a few storages and nodes per op, and malloc/free
// were a third of its time. A list is a chain through the free blocks themselves, and the lists are
// constant-initialised, so that reaching them costs no thread_local initialisation check. A class keeps up
// to kKeepBytes of blocks (at least 64), enough for the graph of a few hundred small ops; a block freed on
// another thread joins that thread's list. Under AddressSanitizer nothing is kept and every block is
// exactly the size asked for, so that a use after free or one element past the end is still reported.
constexpr int kClasses = 11;
constexpr size_t kKeepBytes = size_t(256) << 10;
constexpr size_t keep(int c) { return kAddressSanitizer ? 0 : std::max<size_t>(64, kKeepBytes >> (6 + c)); }
int size_class(size_t bytes) {  // the smallest c with 64 << c >= bytes, or -1 when too large
  const int c = bytes <= 64 ? 0 : int(std::bit_width(bytes - 1)) - 6;
  return c < kClasses ? c : -1;
}
struct FreeList {
  void* head = nullptr;  // each free block's first word points to the next one
  size_t count = 0;
  size_t limit = 0;  // blocks kept at most: keep(c), and 0 once ~ListsOwner ran (frees then go to free())
};
// The limits are in the lists themselves, so that a free reads one thread-local line and tests one bound.
constexpr std::array<FreeList, kClasses> initial_lists() {
  std::array<FreeList, kClasses> lists{};
  for (int c = 0; c < kClasses; ++c) lists[size_t(c)].limit = keep(c);
  return lists;
}
constinit thread_local std::array<FreeList, kClasses> t_lists = initial_lists();
constinit thread_local bool t_owner_made = false;
struct ListsOwner {  // frees this thread's kept blocks when it ends; made by the first block kept
  bool made = false;
  ~ListsOwner() {
    for (FreeList& l : t_lists)
      l.limit = 0;
    for (FreeList& l : t_lists)
      while (l.head) {
        void* next = *static_cast<void**>(l.head);
        std::free(l.head);
        l.head = next;
      }
  }
};
thread_local ListsOwner t_owner;
[[gnu::noinline]] void make_owner() { t_owner_made = true, t_owner.made = true; }  // registers the cleanup

// Large buffers (above the small classes) are whole pages from mmap, returned with munmap, except that a freed one
// waits in a process-wide cache for a later request. malloc served these from its heap once its mmap threshold had
// risen to the largest block freed (glibc's dynamic threshold), and its heap then held about as much freed memory as
// the step used (peak RSS twice the live buffers). Mapping every buffer anew instead costs a page fault per 4 KB
// touched at every step; the cache avoids both (bench/RESULTS.md has the numbers).
// A request takes the smallest cached block that holds it, not only one of its exact size: batches padded
// to their longest sentence change every buffer's size from step to step, and exact sizes then missed,
// filled the cache with sizes seen once and mapped and faulted in the rest. But only a block the request fills
// to 3/4 at least: a small request that takes a large block sends the next large one to mmap.
// The cache holds up to the most bytes of large blocks ever in use at once plus 256 MB, so that all of a
// step's buffers come back from it at the next step: with a fixed cap, the part of a step's peak above it was
// unmapped at the end of each step and faulted in again in the next one's forward. Memory the process has
// needed once stays mapped.
constexpr size_t kPage = 4096;
constexpr size_t kCacheSlack = size_t(256) << 20;
struct LargeCache {
  std::mutex mutex;
  std::multimap<size_t, void*> blocks;          // free blocks: size in bytes (whole pages) -> block
  std::unordered_map<void*, size_t> oversized;  // blocks in use that are larger than their request
  size_t bytes = 0;                             // in `blocks`
  size_t in_use = 0, peak_in_use = 0;           // bytes of the blocks handed out (now, and at most)
  void take(size_t size) { peak_in_use = std::max(peak_in_use, in_use += size); }
};
LargeCache& large_cache() {
  static auto* cache = new LargeCache;  // never destroyed: storages may be freed during static destruction
  return *cache;
}
size_t pages_for(size_t bytes) { return (bytes + kPage - 1) / kPage * kPage; }

}  // namespace

void* cpu::map_pages(size_t bytes) {
  const size_t size = pages_for(bytes);
  LargeCache& c = large_cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (auto it = c.blocks.lower_bound(size); it != c.blocks.end() && it->first - it->first / 4 <= size) {
      void* p = it->second;
      if (it->first != size) c.oversized.emplace(p, it->first);
      c.bytes -= it->first;
      c.take(it->first);
      c.blocks.erase(it);
      return p;
    }
  }
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  std::lock_guard<std::mutex> lock(c.mutex);
  c.take(size);
  return p;
}

void cpu::unmap_pages(void* p, size_t bytes) noexcept {
  size_t size = pages_for(bytes);  // the block may be larger (see `oversized`)
  LargeCache& c = large_cache();
  {
    std::lock_guard<std::mutex> lock(c.mutex);
    if (auto it = c.oversized.find(p); it != c.oversized.end()) size = it->second, c.oversized.erase(it);
    c.in_use -= size;
    if (c.bytes + size <= c.peak_in_use + kCacheSlack) {
      c.blocks.emplace(size, p);
      c.bytes += size;
      return;
    }
  }
  munmap(p, size);
}

bool cpu::pooled_size(size_t bytes) { return size_class(bytes) >= 0; }

void* pool_allocate(size_t bytes) {
  const int c = size_class(bytes);
  if (c >= 0 && t_lists[size_t(c)].head) {
    FreeList& l = t_lists[size_t(c)];
    void* p = l.head;
    l.head = *static_cast<void**>(p);
    --l.count;
    return p;
  }
  void* p = nullptr;
  if (kAddressSanitizer) {
    // posix_memalign: ASan's aligned_alloc insists on a size that is a multiple of the alignment.
    if (posix_memalign(&p, 64, std::max<size_t>(bytes, 1)) != 0) p = nullptr;
  } else {
    p = std::aligned_alloc(64, c >= 0 ? size_t(64) << c : (bytes + 63) / 64 * 64);
  }
  if (!p) throw std::bad_alloc();
  return p;
}

void pool_deallocate(void* p, size_t bytes) noexcept {
  const int c = size_class(bytes);
  if (c < 0) return std::free(p);
  FreeList& l = t_lists[size_t(c)];
  if (l.count >= l.limit) return std::free(p);
  if (!t_owner_made) [[unlikely]] make_owner();
  *static_cast<void**>(p) = l.head;
  l.head = p;
  ++l.count;
}

}  // namespace tg
