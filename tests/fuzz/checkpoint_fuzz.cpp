// libFuzzer target: the metadata of a sentiment checkpoint, as a JSON object of strings (what the safetensors
// header's "__metadata__" holds), read by parse_record. Each input either gives a run record whose counters
// are in range (epoch, step, rollbacks >= 0, lr_scale in (0, 1], no more log entries than epochs), or throws
// tg::Error naming the file.
#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "checkpoint.h"
#include "config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::map<std::string, std::string> metadata;
  try {
    const nlohmann::json meta = nlohmann::json::parse(data, data + size);
    if (!meta.is_object()) return 0;
    for (const auto& [k, v] : meta.items())
      if (v.is_string()) metadata[k] = v.get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
  try {
    const sentiment::RunRecord c = sentiment::parse_record(metadata, "fuzz.safetensors");
    const bool ok = c.epoch >= 0 && c.epoch <= sentiment::kMaxEpochs && c.step >= 0 && c.rollbacks >= 0 &&
                    c.lr_scale > 0 && c.lr_scale <= 1 && c.log.size() <= size_t(c.epoch);
    if (!ok) std::abort();
  } catch (const tg::Error& e) {
    if (std::string(e.what()).find("fuzz.safetensors") == std::string::npos) std::abort();
  }
  return 0;
}
