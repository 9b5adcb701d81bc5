#pragma once
// A cap on the tensor memory that one thread may allocate for a while: what lets nn::load_model build the
// layers that a file's architecture names without trusting its sizes (a crafted d_model of 10^6 is refused
// before its first byte is taken, not met by the OOM killer).
#include <cstdint>
#include <string>

#include "core/error.h"

namespace tg {

/// Thrown by Storage::make when a buffer would take a thread's StorageBudget past its limit.
struct StorageBudgetError : ValueError {
  using ValueError::ValueError;
};

/// While it lives, every tensor buffer made on this thread (Storage::make) counts against `max_bytes`,
/// with 64 bytes for its header, so that many tiny tensors count too. The buffer that would pass the limit
/// is not allocated: StorageBudgetError "a buffer of N bytes would pass the budget of M bytes (<what>; U
/// bytes taken so far)". Bytes count when taken, whether or not freed since (a bound on work, not on peak
/// memory). Buffers made on other threads (a kernel's workers) do not count. Budgets nest: the innermost
/// counts alone until it ends. Not copyable; ends on the thread where it began.
class StorageBudget {
 public:
  /// A budget of `max_bytes` (>= 0, else ValueError naming it); `what` says where the limit comes from.
  StorageBudget(int64_t max_bytes, std::string what);
  ~StorageBudget();
  StorageBudget(const StorageBudget&) = delete;
  StorageBudget& operator=(const StorageBudget&) = delete;

  int64_t used() const { return used_; }  ///< bytes counted so far
  /// Counts a buffer of `nbytes` (Storage::make calls it). StorageBudgetError when the total would pass the limit.
  void charge(int64_t nbytes);

 private:
  int64_t max_bytes_, used_ = 0;
  std::string what_;
  StorageBudget* outer_;
};

}  // namespace tg
