// The bounded read on a POSIX file descriptor (a stream's failure bit says nothing of the reason, while each
// system call here is checked and its errno named in the message), and escape_bytes for quoting what was read.
#include "core/read_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"

namespace tg {

namespace {

// Closes `fd` on every path out of read_file.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string read_file(const std::string& path, int64_t max_bytes, std::string_view op) {
  const std::string shown = escape_bytes(path, path.size());  // the path in messages: binary bytes escaped, in full
  check<ValueError>(max_bytes >= 0, "{}: the limit for '{}' must be >= 0, got {}", op, shown, max_bytes);
  const Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  check<ValueError>(f.fd >= 0, "{}: cannot open '{}': {}", op, shown, std::strerror(errno));
  struct stat st {};
  check<ValueError>(::fstat(f.fd, &st) == 0, "{}: cannot read '{}': {}", op, shown, std::strerror(errno));
  check<ValueError>(!S_ISDIR(st.st_mode), "{}: '{}' is a directory, expected a file", op, shown);
  auto too_large = [&] {
    return ValueError(fmt::format("{}: '{}' is larger than the limit of {} bytes{}", op, shown, max_bytes,
                                  S_ISREG(st.st_mode) ? "" : " (a device or stream that does not end?)"));
  };
  if (S_ISREG(st.st_mode) && st.st_size > max_bytes) throw too_large();  // a regular file's size is known
  std::string out;
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(f.fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    check<ValueError>(n >= 0, "{}: cannot read '{}': {}", op, shown, std::strerror(errno));
    if (n == 0) return out;
    if (int64_t(out.size()) + n > max_bytes) throw too_large();
    out.append(chunk, size_t(n));
  }
}

namespace {

// The length of the valid, printable UTF-8 sequence at the start of `s` (>= 2 bytes), or 0 (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF; C1 controls U+0080..U+009F count as not printable).
size_t utf8_sequence(std::string_view s) {
  const auto b = [&](size_t i) { return uint8_t(s[i]); };
  const uint8_t c = b(0);
  const size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i)
    if (b(i) < 0x80 || b(i) > 0xBF) return 0;
  const uint8_t lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80, hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
  if (b(1) < lo || b(1) > hi || (c == 0xC2 && b(1) < 0xA0)) return 0;
  return n;
}

}  // namespace

std::string escape_bytes(std::string_view bytes, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(bytes.size(), max_bytes));
  for (size_t i = 0; i < bytes.size();) {
    if (i >= max_bytes) return out + fmt::format("... ({} bytes)", bytes.size());
    const uint8_t c = uint8_t(bytes[i]);
    if (c == '\\') {
      out += "\\\\", ++i;
    } else if (c >= 0x20 && c < 0x7F) {
      out += char(c), ++i;
    } else if (const size_t n = c >= 0x80 ? utf8_sequence(bytes.substr(i)) : 0; n > 0) {
      out.append(bytes.substr(i, n)), i += n;
    } else {
      out += fmt::format("\\x{:02X}", c), ++i;
    }
  }
  return out;
}

}  // namespace tg
