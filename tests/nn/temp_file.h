#pragma once
// Files for the save/load tests: a temporary safetensors path removed at the end of the test, and a layer's
// state as raw bytes (equal means bit-exact).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "nn/layer.h"

namespace tg::test {

// A fresh file path in the temporary folder, removed at the end of the test.
struct TempFile {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / fmt::format("tg_nn_test_{}_{}.safetensors", ::getpid(), counter()++);
  ~TempFile() { std::filesystem::remove(path); }
  static int& counter() {
    static int n = 0;
    return n;
  }
  std::string bytes() const {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  void write(const std::string& bytes) const { std::ofstream(path, std::ios::binary) << bytes; }
};

// The raw bytes of every state tensor, in key order: equality means bit-exact.
inline std::vector<std::string> raw_state(const nn::Layer& l) {
  std::vector<std::string> out;
  for (const auto& [k, t] : l.state_dict()) {
    const Tensor c = t.contiguous();
    out.emplace_back(static_cast<const char*>(c.storage()->data) + c.offset() * dtype_size(c.dtype()),
                     size_t(c.numel() * dtype_size(c.dtype())));
  }
  return out;
}

}  // namespace tg::test
