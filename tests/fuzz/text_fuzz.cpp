// libFuzzer target: the sentiment tokenizer and vocabulary on arbitrary bytes. The first byte picks
// max_len, min_freq and max_size; the rest is split at its middle: the first half builds a vocabulary,
// the second is encoded with it. The vocabulary also goes through save/load, and the bytes themselves
// are read as a vocabulary file. Only tg::Error may escape, and the invariants below must hold.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>

#include "core/error.h"
#include "text.h"

namespace {

void require(bool cond) {
  if (!cond) std::abort();
}

std::string temp_path() {
  static const std::string dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  return dir + "/tg_fuzz_vocab_" + std::to_string(getpid()) + ".txt";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using sentiment::Vocab;
  const uint8_t knobs = data[0];
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string_view train = text.substr(0, text.size() / 2), rest = text.substr(text.size() / 2);

  auto tokens = sentiment::tokenize(train);
  for (const std::string& t : tokens) {
    require(!t.empty());
    for (char c : t) require((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '\'');
  }
  Vocab vocab =
      Vocab::build({tokens}, {.min_freq = 1 + (knobs & 3), .max_size = (knobs >> 2) & 7 ? ((knobs >> 2) & 7) + 1 : 0});
  for (int64_t i = 0; i < vocab.size(); ++i) require(vocab.id(vocab.token(i)) == i);

  const int64_t max_len = knobs >> 5;
  auto query = sentiment::tokenize(rest);
  auto ids = vocab.encode(query, max_len);
  require(max_len == 0 ? ids.size() == query.size() : ids.size() <= size_t(max_len));
  for (size_t i = 0; i < ids.size(); ++i) {
    require(ids[i] >= 0 && ids[i] < vocab.size() && ids[i] != Vocab::kPad);
    require(ids[i] == Vocab::kUnk || vocab.token(ids[i]) == query[i]);
  }

  const std::string path = temp_path();
  vocab.save(path);
  Vocab again = Vocab::load(path);
  require(again.size() == vocab.size());
  std::ofstream(path, std::ios::binary).write(text.data(), std::streamsize(text.size()));
  try {
    Vocab loaded = Vocab::load(path);
    for (int64_t i = 0; i < loaded.size(); ++i) require(loaded.id(loaded.token(i)) == i);
  } catch (const tg::Error&) {}
  std::remove(path.c_str());
  return 0;
}
