#pragma once
// What the example programs (sentiment, digits, gpt) share about files and streams: a JSON file read within a
// bound, --config's file or name, and a command run so that a failed write to stdout is an error (exit 1)
// rather than output silently lost, and a previous run's file removed. Their other files go through tg::read_file and tg::write_file_atomic.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/read_file.h"

namespace examples {

/// The most bytes read from a config.json (given to --config, or a model directory's): 1 MiB.
inline constexpr int64_t kMaxConfigBytes = int64_t(1) << 20;

/// The JSON value of the file at `path`, read by tg::read_file within `max_bytes`. ValueError naming the file:
/// read_file's messages ("<op>: cannot open 'p': No such file or directory", "<op>: 'p' is larger than the
/// limit of N bytes", ...) and "<op>: 'p' is not valid JSON: <the parser's reason, escaped>".
nlohmann::json read_json(const std::string& path, int64_t max_bytes, std::string_view op);

/// --config's value: nullopt when it names a built-in configuration (no such file, and neither a '/' nor
/// ".json" in it), else the file's JSON (read_json within kMaxConfigBytes, "config" starting its messages).
/// ValueError "config 'p': no such file" for a path that does not exist, "config 'p' is a directory, expected
/// a JSON file" for a directory.
std::optional<nlohmann::json> config_file(const std::string& name_or_path);

/// --config's value read as a program's `Config`: by_name(name_or_path) for a name, else the file's JSON
/// (config_file) converted by Config's from_json. ValueError naming the file for a JSON type error, besides
/// config_file's and from_json's own.
template <class Config, class ByName>
Config load_config(const std::string& name_or_path, ByName by_name) {
  const std::optional<nlohmann::json> j = config_file(name_or_path);
  if (!j) return by_name(name_or_path);
  try {
    return j->get<Config>();
  } catch (const nlohmann::json::exception& e) {
    throw tg::ValueError(fmt::format("config file '{}': {}", name_or_path, tg::escape_bytes(e.what())));
  }
}

/// Removes the previous run's file at `path`, if there is one, so that a run that fails before writing its own
/// leaves none rather than another run's beside this one's files. tg::Error "<op>: cannot remove the previous
/// 'p': <reason>" when it stays (a directory of that name, no permission).
void remove_previous(const std::string& path, std::string_view op);

/// Flushes stdout. tg::Error "cannot write to stdout: <reason>" when this or an earlier write failed
/// (`predict > /dev/full`), so that output printed as it is made (gpt sample) stops at the first failure.
void flush_stdout();

/// Runs a program's command: its exit status, or 1 with "error: <what>" on stderr when it throws, and 1 with
/// "error: cannot write to stdout: <reason>" when stdout could not be written (a buffered write fails only at
/// the flush, which would otherwise happen silently at exit, with status 0).
int run_checked(const std::function<int()>& command);

}  // namespace examples
