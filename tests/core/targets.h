#pragma once
// Runs a test body once per Highway target that the library was built for and this CPU supports (AVX-512, AVX2,
// SSE4 and scalar on an AVX-512 x86), so that the kernel room's every path is tested here, not only the best.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include <hwy/targets.h>

namespace tg::test {

/// f() under each target in turn (its name in doctest's INFO), then the CPU's own choice again, also when f throws.
/// f may take the target (HWY_AVX3, ..., HWY_SCALAR) as an int64_t.
template <class F>
void for_each_target(F f) {
  struct Restore {
    ~Restore() { hwy::SetSupportedTargetsForTest(0); }
  } restore;
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    INFO("Highway target ", std::string(hwy::TargetName(target)));
    if constexpr (std::is_invocable_v<F, int64_t>) f(target);
    else f();
  }
}

}  // namespace tg::test
