#pragma once
// A fresh directory for one sentiment test, removed with everything in it at scope exit.
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace sentiment_test {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() / ("sentiment_test_" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string str() const { return path.string(); }
  /// Writes `contents` byte for byte to `name` in this dir and returns its path.
  std::string write(const std::string& name, const std::string& contents) const {
    std::ofstream(path / name, std::ios::binary) << contents;
    return (path / name).string();
  }
};

}  // namespace sentiment_test
