#pragma once
// A bounded read for every loader of the library and the examples: a file that never ends (/dev/zero,
// /dev/urandom, a FIFO) or one absurdly large is an error naming the file and the limit, not bad_alloc.
// escape_bytes quotes what was read in error messages. Writes go through write_file_atomic (core/atomic_file.h).
#include <cstdint>
#include <string>
#include <string_view>

namespace tg {

/// Reads all of `path`, at most `max_bytes` bytes. It reads up to the limit rather than asking for the size
/// first, so a FIFO or a character device stops at the limit too. `op` starts each message. Throws ValueError
/// naming the file: "<op>: cannot open 'p': No such file or directory" (or the OS reason: Permission denied,
/// ...), "<op>: 'p' is a directory, expected a file", "<op>: 'p' is larger than the limit of N bytes",
/// "<op>: cannot read 'p': <reason>".
std::string read_file(const std::string& path, int64_t max_bytes, std::string_view op = "read_file");

/// `bytes` (file contents) for quoting in a message: printable ASCII and valid UTF-8 are kept, a backslash is
/// doubled, and every other byte (control characters, NUL, bytes of invalid UTF-8) becomes \xNN, so a message
/// shows binary data instead of stopping at a NUL or printing broken characters. Longer than `max_bytes`, the
/// quote stops at the first character that starts past them and says how long the whole was, "abc... (3000000
/// bytes)": a line of a binary file with no newline in it keeps the message readable.
std::string escape_bytes(std::string_view bytes, size_t max_bytes = 1024);

}  // namespace tg
