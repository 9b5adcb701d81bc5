// write_file_atomic: the file holds exactly the chunks, replaces a previous one whole, and a failed write
// names the file and leaves no temporary file and the previous contents behind.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/atomic_file.h"
#include "core/error.h"

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
