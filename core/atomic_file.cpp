// Atomic whole-file writes with POSIX calls: std::ofstream can neither fsync nor report why a write failed.
#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"

namespace tg {
namespace {

// Writes all of `data` to fd or throws.
void write_all(int fd, std::string_view data, const std::string& who, const std::string& path) {
  while (!data.empty()) {
    ssize_t w = ::write(fd, data.data(), data.size());
    if (w < 0 && errno == EINTR) continue;
    check<Error>(w >= 0, "{} {}: write failed: {}", who, path, std::strerror(errno));
    data.remove_prefix(size_t(w));
  }
}

// A device or FIFO at `path` (/dev/stdout, /dev/null, /dev/full) is written directly: nothing can be renamed
// over it, and a pipe or device cannot be synced. Every write is still checked.
void write_directly(const std::string& path, const std::vector<std::string_view>& chunks, const std::string& who) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  check<Error>(fd >= 0, "{} {}: cannot open: {}", who, path, std::strerror(errno));
  try {
    for (std::string_view c : chunks) write_all(fd, c, who, path);
  } catch (...) {
    ::close(fd);
    throw;
  }
  check<Error>(::close(fd) == 0, "{} {}: close failed: {}", who, path, std::strerror(errno));
}

}  // namespace

void write_file_atomic(const std::string& path, const std::vector<std::string_view>& chunks, const std::string& who) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))  // a directory: rename fails
    return write_directly(path, chunks, who);
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  check<Error>(fd >= 0, "{} {}: cannot open {}: {}", who, path, tmp, std::strerror(errno));
  try {
    for (std::string_view c : chunks) write_all(fd, c, who, path);
    check<Error>(::fsync(fd) == 0, "{} {}: fsync failed: {}", who, path, std::strerror(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  const bool closed = ::close(fd) == 0;  // NFS may report a failed write only here
  const int close_err = errno;
  if (!closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = closed ? errno : close_err;
    ::unlink(tmp.c_str());
    throw Error(fmt::format("{} {}: {} failed: {}", who, path, closed ? "rename" : "close", std::strerror(err)));
  }
  // The rename is durable only once the directory entry is on disk: without this, a power cut can leave
  // the old file (or none) even though the write returned.
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  check<Error>(dfd >= 0, "{} {}: cannot open its directory {}: {}", who, path, dir, std::strerror(errno));
  const bool synced = ::fsync(dfd) == 0;
  const int err = errno;
  ::close(dfd);
  check<Error>(synced, "{} {}: fsync of directory {} failed: {}", who, path, dir, std::strerror(err));
}

}  // namespace tg
