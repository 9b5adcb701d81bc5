// libFuzzer target: gpt::parse_corpus (the corpus reader of `gpt`) on arbitrary bytes: the corpus up to the
// first 0xFF byte (never part of UTF-8 text), the splits file after it (none: the corpus alone, with an empty
// splits file). Each input either gives a corpus whose three parts, each a run of whole documents, add up to
// the file, and that the byte vocabulary of the file encodes; or throws tg::ValueError naming the corpus or
// the splits file.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/error.h"
#include "text.h"

namespace {

void require(bool cond) {
  if (!cond) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t cut = std::min(in.find('\xFF'), in.size());
  const std::string_view splits = cut < in.size() ? in.substr(cut + 1) : std::string_view();
  try {
    const gpt::Corpus c = gpt::parse_corpus(std::string(in.substr(0, cut)), splits, "fuzz.txt", "fuzz_splits.txt");
    require(c.all == in.substr(0, cut) && c.train.size() + c.valid.size() + c.test.size() == c.all.size());
    for (const std::string* part : {&c.train, &c.valid, &c.test})
      require(part->empty() || part->ends_with(gpt::kSeparator));
    const gpt::ByteVocab vocab = gpt::ByteVocab::of(c.all);
    require(vocab.encode(c.all, "fuzz").size() == c.all.size());
  } catch (const tg::ValueError& e) {
    const std::string what = e.what();
    require(what.find("fuzz.txt") != std::string::npos || what.find("fuzz_splits.txt") != std::string::npos);
  }
  return 0;
}
