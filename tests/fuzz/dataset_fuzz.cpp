// libFuzzer target: sentiment::read_examples on a file holding arbitrary bytes, read as TSV, as CSV and
// sniffed (no known extension), strict and with skip_malformed. Each read either returns examples whose
// labels are in range and whose text is not blank, or throws tg::Error naming file:line.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "core/error.h"
#include "dataset.h"

namespace {

std::string temp_path(const char* ext) {
  static const std::string dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  return dir + "/tg_fuzz_dataset_" + std::to_string(getpid()) + ext;
}

void read_as(const char* ext, const uint8_t* data, size_t size) {
  const std::string path = temp_path(ext);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data), std::streamsize(size));
  for (bool skip : {false, true}) {
    try {
      int64_t skipped = -1;
      auto examples = sentiment::read_examples(path, {.num_classes = 3, .skip_malformed = skip}, &skipped);
      if (skipped < 0 || (!skip && skipped != 0)) std::abort();
      for (const auto& e : examples)
        if (e.label < 0 || e.label >= 3 || e.text.find_first_not_of(" \t\r\n\f\v") == std::string::npos) std::abort();
    } catch (const tg::Error&) {}
  }
  std::remove(path.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  read_as(".tsv", data, size);
  read_as(".csv", data, size);
  read_as(".txt", data, size);
  return 0;
}
