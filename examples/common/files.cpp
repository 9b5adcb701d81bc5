// The example programs' shared file and stream handling (files.h).
#include "files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace examples {

nlohmann::json read_json(const std::string& path, int64_t max_bytes, std::string_view op) {
  const std::string text = tg::read_file(path, max_bytes, op);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw tg::ValueError(fmt::format("{}: '{}' is not valid JSON: {}", op, path, tg::escape_bytes(e.what())));
  }
}

std::optional<nlohmann::json> config_file(const std::string& name_or_path) {
  namespace fs = std::filesystem;
  if (!fs::exists(name_or_path)) {
    tg::check<tg::ValueError>(name_or_path.find('/') == std::string::npos && !name_or_path.ends_with(".json"),
                              "config '{}': no such file", name_or_path);
    return std::nullopt;
  }
  tg::check<tg::ValueError>(!fs::is_directory(name_or_path), "config '{}' is a directory, expected a JSON file",
                            name_or_path);
  return read_json(name_or_path, kMaxConfigBytes, "config");
}

void remove_previous(const std::string& path, std::string_view op) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  tg::check<tg::Error>(!ec, "{}: cannot remove the previous '{}': {}", op, tg::escape_bytes(path), ec.message());
}

void flush_stdout() {
  // fflush's errno when it fails now; ferror without errno when an earlier buffered write failed.
  const bool flushed = std::fflush(stdout) == 0;
  const int error = errno;
  tg::check<tg::Error>(flushed && !std::ferror(stdout), "cannot write to stdout: {}",
                       flushed ? "an earlier write failed" : std::strerror(error));
}

int run_checked(const std::function<int()>& command) {
  int status = 1;
  try {
    status = command();
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
  }
  try {
    flush_stdout();
  } catch (const tg::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return status;
}

}  // namespace examples
