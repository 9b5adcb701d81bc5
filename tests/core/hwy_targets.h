#pragma once
// Runs a test body once per Highway target this CPU supports and the library was built for (AVX-512, AVX2,
// SSE4 and the scalar fallback on an AVX-512 x86 CPU), so that every path of a kernel is tested, not only
// the best one. The test binary is built with the library's HWY_DISABLED_TARGETS, so that its list of
// targets is the library's.
#include <doctest/doctest.h>

#include <string>

#include <hwy/targets.h>

namespace tg::test {

/// f() under each target in turn (its name captured for failures), then the CPU's own choice again.
template <class F>
void for_each_target(F&& f) {
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    const std::string name = hwy::TargetName(target);
    CAPTURE(name);
    f();
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace tg::test
