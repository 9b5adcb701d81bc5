// libFuzzer target: tg::parse_safetensors on arbitrary bytes. A file either parses into tensors whose bytes
// all lie in the input, or fails with tg::Error; anything else (a crash, a sanitizer report, another
// exception type escaping) is a bug.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/error.h"
#include "core/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    tg::Safetensors st = tg::parse_safetensors(bytes, "fuzz");
    int64_t total = 0;
    for (const auto& [name, t] : st.tensors) {
      total += t.numel() * tg::dtype_size(t.dtype());
      (void)t.to_vector<double>();  // reads every element
    }
    if (total > int64_t(size)) std::abort();  // tensors hold more bytes than the file has
  } catch (const tg::Error&) {}
  return 0;
}
