// libFuzzer target: sentiment::Lexicon::parse on arbitrary bytes. Each input either gives a lexicon whose
// text() parses back to the same text, every valence in [-5, 5], or throws tg::ValueError naming the file.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/error.h"
#include "lexicon.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const sentiment::Lexicon lex = sentiment::Lexicon::parse(std::string(reinterpret_cast<const char*>(data), size),
                                                             "fuzz.tsv");
    if (lex.size() < 1) std::abort();
    const std::string text = lex.text();
    if (sentiment::Lexicon::parse(text, "again.tsv").text() != text) std::abort();
  } catch (const tg::ValueError& e) {
    if (std::string(e.what()).find("fuzz.tsv") == std::string::npos) std::abort();
  }
  return 0;
}
