#pragma once
// A real write error on demand, for the tests of writers: the process's file size limit (RLIMIT_FSIZE) makes
// a write past it fail with EFBIG ("File too large"), as a full disk fails with ENOSPC.
#include <doctest/doctest.h>
#include <sys/resource.h>

#include <csignal>

namespace tg_test {

/// Runs `f` with the file size limit set to `bytes` and SIGXFSZ ignored, so that a write past the limit fails
/// with EFBIG instead of killing the process; restores both afterwards.
template <class F>
void with_file_size_limit(rlim_t bytes, F f) {
  rlimit old{};
  REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
  rlimit limited = old;
  limited.rlim_cur = bytes;
  auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  REQUIRE(setrlimit(RLIMIT_FSIZE, &limited) == 0);
  try {
    f();
  } catch (...) {
    setrlimit(RLIMIT_FSIZE, &old), std::signal(SIGXFSZ, old_handler);
    throw;
  }
  setrlimit(RLIMIT_FSIZE, &old), std::signal(SIGXFSZ, old_handler);
}

}  // namespace tg_test
