// libFuzzer target: a sentiment config.json of arbitrary bytes, parsed and checked as `train --config` and
// load_model do. Each input either gives a Config that check_config accepts, whose model has at most
// kMaxParameters weights and which survives a JSON round trip unchanged, or throws tg::Error or a JSON error.
#include <cstdint>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "config.h"
#include "core/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const sentiment::Config c = nlohmann::json::parse(data, data + size).get<sentiment::Config>();
    sentiment::check_config(c);
    if (!(sentiment::parameter_count(c.model) <= double(sentiment::kMaxParameters))) std::abort();
    const sentiment::Config back = nlohmann::json::parse(nlohmann::json(c).dump()).get<sentiment::Config>();
    if (nlohmann::json(back) != nlohmann::json(c)) std::abort();
  } catch (const tg::Error&) {
  } catch (const nlohmann::json::exception&) {
  }
  return 0;
}
