#pragma once
// Every Highway target the library was built for and this CPU runs (on an AVX-512 x86: AVX-512, AVX2, SSE4
// and the scalar fallback), so that a kernel test checks each one, not only the best.
#include <doctest/doctest.h>

#include <hwy/targets.h>
#include <string>

namespace tg::test {

/// Runs f() once per target, with the kernels' dynamic dispatch choosing that target, named in any failure.
template <class F>
void for_each_target(F&& f) {
  struct Restore {
    ~Restore() { hwy::SetSupportedTargetsForTest(0); }
  } restore;
  for (const int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    const std::string name = hwy::TargetName(target);
    INFO("Highway target ", name);
    f();
  }
}

}  // namespace tg::test
