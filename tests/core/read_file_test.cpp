// read_file: a file read whole up to a limit; devices and streams that never end stop at it; a missing file,
// a directory and a file it may not read are named. escape_bytes, and a safetensors message quoting a NUL.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "core/error.h"
#include "core/read_file.h"
#include "core/safetensors.h"

using namespace tg;
using doctest::Contains;
namespace fs = std::filesystem;

namespace {

struct Dir {
  fs::path path = fs::temp_directory_path() / ("io_test_" + std::to_string(std::random_device()()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

// The message of read_file(path) by a user who may not read the file (empty when it did not throw): this
// process when it is not root, else a child that drops to the user nobody first, since root reads any file.
std::string error_of_unprivileged_read(const std::string& path) {
  auto message = [&]() -> std::string {
    try {
      read_file(path, 10);
    } catch (const ValueError& e) {
      return e.what();
    }
    return "";
  };
  if (geteuid() != 0) return message();
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    const std::string m = setgid(65534) == 0 && setuid(65534) == 0 ? message() : "setuid failed";
    (void)!::write(fds[1], m.data(), m.size());
    _exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, size_t(n));
  ::close(fds[0]);
  ::waitpid(pid, nullptr, 0);
  return out;
}

}  // namespace

TEST_CASE("read_file reads a file whole and refuses one past its limit") {
  Dir d;
  std::ofstream(d / "a.bin", std::ios::binary) << std::string("a\0b\xff", 4);
  CHECK(read_file(d / "a.bin", 4) == std::string("a\0b\xff", 4));
  CHECK(read_file(d / "a.bin", 100) == std::string("a\0b\xff", 4));
  CHECK_THROWS_WITH_AS(read_file(d / "a.bin", 3, "load"), ("load: '" + (d / "a.bin") + "' is larger than the limit of 3 "
                       "bytes").c_str(), ValueError);
}

TEST_CASE("read_file stops at the limit on devices that never end") {
  for (const char* dev : {"/dev/zero", "/dev/urandom"}) {
    CAPTURE(dev);
    CHECK_THROWS_WITH_AS(read_file(dev, 1 << 20, "load"), (std::string("load: '") + dev + "' is larger than the limit "
                         "of 1048576 bytes (a device or stream that does not end?)").c_str(), ValueError);
  }
}

TEST_CASE("read_file names a missing file, a directory, and a file it may not read") {
  Dir d;
  CHECK_THROWS_WITH_AS(read_file(d / "none", 10, "load"), ("load: cannot open '" + (d / "none") + "': No such file or "
                       "directory").c_str(), ValueError);
  CHECK_THROWS_WITH_AS(read_file(d.path.string(), 10, "load"), ("load: '" + d.path.string() + "' is a directory, "
                       "expected a file").c_str(), ValueError);
  std::ofstream(d / "secret") << "x";
  fs::permissions(d / "secret", fs::perms::none);
  CHECK(error_of_unprivileged_read(d / "secret") == "read_file: cannot open '" + (d / "secret") + "': Permission denied");
}

TEST_CASE("read_file quotes a path with control or invalid UTF-8 bytes escaped, in full") {
  Dir d;
  const std::string name = d / "a\x01" "b\xff";
  const std::string shown = d.path.string() + "/a\\x01b\\xFF";
  CHECK_THROWS_WITH_AS(read_file(name, 10, "load"), ("load: cannot open '" + shown + "': No such file or directory").c_str(),
                       ValueError);
  std::ofstream(name) << "too long";
  CHECK_THROWS_WITH_AS(read_file(name, 3, "load"), ("load: '" + shown + "' is larger than the limit of 3 bytes").c_str(),
                       ValueError);
}

TEST_CASE("read_file reads a FIFO up to its end, and stops at the limit on one that never ends") {
  Dir d;
  const std::string fifo = d / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] { std::ofstream(fifo) << "hello"; });
  CHECK(read_file(fifo, 100) == "hello");
  writer.join();
  auto old_handler = std::signal(SIGPIPE, SIG_IGN);  // the writer's end breaks when read_file gives up
  std::thread endless([&] {
    std::ofstream out(fifo);
    for (int i = 0; i < 1000 && out; ++i) out << std::string(1000, 'x') << std::flush;  // stops once the reader closes
  });
  CHECK_THROWS_WITH_AS(read_file(fifo, 10000), Contains("is larger than the limit of 10000 bytes"), ValueError);
  endless.join();
  std::signal(SIGPIPE, old_handler);
}

TEST_CASE("escape_bytes keeps printable text and UTF-8, escapes everything else as \\xNN") {
  CHECK(escape_bytes("plain text, 'quoted'") == "plain text, 'quoted'");
  CHECK(escape_bytes(std::string("a\0b", 3)) == "a\\x00b");
  CHECK(escape_bytes("tab\there\r\n") == "tab\\x09here\\x0D\\x0A");
  CHECK(escape_bytes("back\\slash") == "back\\\\slash");
  CHECK(escape_bytes("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  CHECK(escape_bytes("\xff\xfe") == "\\xFF\\xFE");
  CHECK(escape_bytes("\xc0\xaf") == "\\xC0\\xAF");          // an overlong '/'
  CHECK(escape_bytes("\xed\xa0\x80") == "\\xED\\xA0\\x80");  // a surrogate
  // Past max_bytes the quote stops at a character's start and gives the whole length.
  CHECK(escape_bytes(std::string(3000, 'a')) == std::string(1024, 'a') + "... (3000 bytes)");
  CHECK(escape_bytes(std::string(1024, 'a')) == std::string(1024, 'a'));
  CHECK(escape_bytes("ab\xc3\xa9" "cd", 3) == "ab\xc3\xa9... (6 bytes)");  // é is not cut in two
  CHECK(escape_bytes("\x01\x02\x03", 2) == "\\x01\\x02... (3 bytes)");
  CHECK(escape_bytes("\xc3") == "\\xC3");                    // cut short
  CHECK(escape_bytes("\xc2\x85") == "\\xC2\\x85");           // C1 control NEL
  CHECK(escape_bytes("\x7f") == "\\x7F");
}

TEST_CASE("a safetensors error quotes a name with a NUL in full, escaped") {
  const std::string header = R"({"a\u0000b": {"dtype": "F\u0000\u00ff", "shape": [1], "data_offsets": [0, 4]}})";
  std::string bytes(8, '\0');
  bytes[0] = char(header.size());
  CHECK_THROWS_WITH_AS(parse_safetensors(bytes + header + std::string(4, '\0'), "f.st"),
                       "safetensors f.st: tensor 'a\\x00b' has unsupported dtype 'F\\x00\xc3\xbf' (F32, F64, I64, BOOL)",
                       ValueError);
}
