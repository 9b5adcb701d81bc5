#pragma once
// Small blocks from per-thread free lists: tensor buffers up to 64 KB, and the bookkeeping that every op
// makes and drops again (storage headers, autograd's nodes and records), which malloc served at
// about 200 instructions a block once its per-size cache of 7 was full.
#include <cstddef>

namespace tg {

/// A block of at least `bytes`, 64-byte aligned: from this thread's free list of its size class (64 B,
/// 128 B, ... 64 KB) when one waits there, else from malloc. Throws std::bad_alloc.
void* pool_allocate(size_t bytes);
/// Returns a block of pool_allocate(bytes) (the same `bytes`) to this thread's list, or to free() when
/// that list is full or the block is larger than 64 KB.
void pool_deallocate(void* p, size_t bytes) noexcept;

/// A standard allocator over pool_allocate, for std::allocate_shared and containers of small objects.
template <class T>
struct PoolAllocator {
  using value_type = T;  ///< what it allocates
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) {}  ///< stateless: any one converts to any other
  /// n T's from the pool (pool_allocate).
  T* allocate(size_t n) { return static_cast<T*>(pool_allocate(n * sizeof(T))); }
  /// Returns what allocate(n) gave to the pool.
  void deallocate(T* p, size_t n) noexcept { pool_deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const { return true; }  ///< all are equal: one pool
};

}  // namespace tg
