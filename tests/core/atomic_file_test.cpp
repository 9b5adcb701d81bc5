// write_file_atomic: the file holds exactly the chunks, replaces a previous one whole, and a failed write
// names the file and leaves no temporary file and the previous contents behind: a full disk (/dev/full), the
// file size limit (EFBIG); a device or FIFO is written directly.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/atomic_file.h"
#include "core/error.h"
#include "file_size_limit.h"

using namespace tg;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("tg-atomic-{}-{}", name, ::getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("write_file_atomic writes the chunks in order and replaces a previous file") {
  const fs::path dir = fresh_dir("write");
  const std::string path = (dir / "f.txt").string();
  write_file_atomic(path, {"old contents, longer than the new"});
  const std::string bytes("a\0b", 3);
  write_file_atomic(path, {"head ", bytes, "", " tail\n"});
  CHECK(read(path) == "head " + bytes + " tail\n");
  CHECK_FALSE(fs::exists(path + ".tmp"));
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomic names the file when it cannot write, keeping the previous one") {
  const fs::path dir = fresh_dir("fail");
  const std::string missing = (dir / "no" / "f.txt").string(), expected = "save_thing " + missing + ": cannot open";
  CHECK_THROWS_WITH_AS(write_file_atomic(missing, {"x"}, "save_thing"), doctest::Contains(expected.c_str()), Error);
  // A non-empty directory where the file should go: the rename fails after the data was written.
  const fs::path blocked = dir / "blocked";
  fs::create_directories(blocked / "inside");
  CHECK_THROWS_WITH_AS(write_file_atomic(blocked.string(), {"x"}), doctest::Contains(": rename failed:"), Error);
  CHECK(fs::is_directory(blocked / "inside"));
  CHECK_FALSE(fs::exists(blocked.string() + ".tmp"));
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomic on a full disk (/dev/full) names the file and ENOSPC") {
  CHECK_THROWS_WITH_AS(write_file_atomic("/dev/full", {"x"}, "save"),
                       "save /dev/full: write failed: No space left on device", Error);
}

TEST_CASE("a write that fails half-way (EFBIG) keeps the previous file and removes the temporary one") {
  const fs::path dir = fresh_dir("efbig");
  const std::string path = (dir / "f.txt").string();
  write_file_atomic(path, {"good"});
  std::string error;
  tg_test::with_file_size_limit(1000, [&] {
    try {
      write_file_atomic(path, {std::string(5000, 'x')});
    } catch (const Error& e) {
      error = e.what();
    }
  });
  CHECK(error == "write_file_atomic " + path + ": write failed: File too large");
  CHECK(read(path) == "good");
  CHECK_FALSE(fs::exists(path + ".tmp"));
  fs::remove_all(dir);
}

TEST_CASE("write_file_atomic writes straight to a device or FIFO, where nothing can be renamed") {
  CHECK_NOTHROW(write_file_atomic("/dev/null", {"x"}));
  const fs::path dir = fresh_dir("fifo");
  const std::string fifo = (dir / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string got;
  std::thread reader([&] { got = read(fifo); });
  write_file_atomic(fifo, {"through ", "the pipe"});
  reader.join();
  CHECK(got == "through the pipe");
  CHECK(fs::is_fifo(fifo));
  fs::remove_all(dir);
}
