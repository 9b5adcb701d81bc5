// Storage: a tensor buffer's header and its life. The memory comes from the kernel room's allocator
// (core/cpu/allocator.cpp): small blocks from the pool, large ones as cached whole pages.
#include <atomic>
#include <new>
#include <string>
#include <utility>

#include "core/cpu/kernels.h"
#include "core/pool.h"
#include "core/storage_budget.h"
#include "core/tensor.h"

namespace tg {

namespace {
std::atomic<int64_t> g_live_storages{0};  // relaxed: a count for tests, not a synchronisation point
thread_local StorageBudget* t_budget = nullptr;  // this thread's innermost budget
}  // namespace

StorageBudget::StorageBudget(int64_t max_bytes, std::string what)
    : max_bytes_(max_bytes), what_(std::move(what)), outer_(t_budget) {
  check<ValueError>(max_bytes >= 0, "StorageBudget: max_bytes must be >= 0, got {}", max_bytes);
  t_budget = this;
}

StorageBudget::~StorageBudget() { t_budget = outer_; }

void StorageBudget::charge(int64_t nbytes) {
  const int64_t n = nbytes + 64;  // the header's share: a million empty tensors are not free
  check<StorageBudgetError>(n <= max_bytes_ - used_, "a buffer of {} bytes would pass the budget of {} bytes ({}; {} "
                            "bytes taken so far)", nbytes, max_bytes_, what_, used_);
  used_ += n;
}

int64_t live_storages() { return g_live_storages.load(std::memory_order_relaxed); }

// The header and its buffer. A small buffer sits right after the header (64 bytes on, so it keeps the pool's
// 64-byte alignment) in one pool block; a larger one has its own block, or cached pages above 64 KB
// (except under ASan: every block is then malloc's, exactly sized).
namespace {
constexpr size_t kHeader = 64;
static_assert(sizeof(Storage) <= kHeader);
bool inline_buffer(int64_t n) { return n <= Storage::kInlineBytes; }
bool pooled_buffer(int64_t n) { return kAddressSanitizer || cpu::pooled_size(size_t(n)); }
size_t block_bytes(int64_t n) { return kHeader + (inline_buffer(n) ? size_t(n) : 0); }
}  // namespace

StoragePtr Storage::make(int64_t n) {
  if (t_budget) [[unlikely]] t_budget->charge(n);
  const bool in_block = inline_buffer(n);
  void* block = pool_allocate(block_bytes(n));
  auto* s = new (block) Storage(n);
  try {
    if (in_block) s->data = n > 0 ? static_cast<char*>(block) + kHeader : nullptr;
    else if (pooled_buffer(n)) s->data = pool_allocate(size_t(n));
    else if (!(s->data = cpu::map_pages(size_t(n)))) throw std::bad_alloc();
  } catch (...) {
    pool_deallocate(block, kHeader);
    throw;
  }
  g_live_storages.fetch_add(1, std::memory_order_relaxed);
  return StoragePtr(s);
}

void Storage::drop_strong() noexcept {
  if (!inline_buffer(nbytes)) {
    if (pooled_buffer(nbytes)) pool_deallocate(data, size_t(nbytes));
    else cpu::unmap_pages(data, size_t(nbytes));
    data = nullptr;
  }
  g_live_storages.fetch_sub(1, std::memory_order_relaxed);
  // With no StorageVersion (weak_ == 1, the StoragePtrs' own) none can appear any more: skip the atomic.
  if (weak_.load(std::memory_order_acquire) == 1) pool_deallocate(this, block_bytes(nbytes));
  else drop_weak();
}

void Storage::drop_weak() noexcept {
  if (weak_.fetch_sub(1, std::memory_order_acq_rel) == 1) pool_deallocate(this, block_bytes(nbytes));
}

}  // namespace tg
