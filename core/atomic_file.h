#pragma once
// Whole-file writes that either replace the file or leave it as it was: a crash, a full disk or a failed
// write never leaves a half-written model, checkpoint or picture behind.
#include <string>
#include <string_view>
#include <vector>

namespace tg {

/// Writes the concatenation of `chunks` to `path` atomically: a temporary file `<path>.tmp` in the same
/// folder, fsync, rename over `path`, fsync of the folder. On failure the temporary file is removed, a
/// previous file at `path` is intact, and tg::Error says "<who> <path>: <what failed>: <reason>" (e.g.
/// "write failed: No space left on device", "rename failed: Is a directory"). A `path` that is a device or a
/// FIFO (/dev/stdout, /dev/null) is written directly, every write checked, since nothing can be renamed over it.
void write_file_atomic(const std::string& path, const std::vector<std::string_view>& chunks,
                       const std::string& who = "write_file_atomic");

}  // namespace tg
