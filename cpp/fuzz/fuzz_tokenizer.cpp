// Fuzzes the text side of translation: UTF-8 decoding (any bytes), normalisation, pre-tokenising,
// byte-pair encoding and decoding. No input may crash, and no word may be dropped: every input
// byte sequence encodes to tokens that decode back without throwing.
#include "attnlab/nn/tokenizer.hpp"
#include "fuzz_common.hpp"

using namespace attnlab::nn;

namespace {
const Bpe& bpe() {
  static const Bpe b = Bpe::learn({"le chat dort.", "le chien mange.", "\xC3\xA9t\xC3\xA9 \xC3\xA0 l'\xC3\xA9" "cole !"}, 300);
  return b;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::u32string norm = normalize(text);
  (void)utf8_encode(norm);
  const auto words = pre_tokenize(text);
  (void)bleu_tokens(text);
  (void)detokenize(words, size % 2 ? "fr" : "en");
  const std::vector<int> ids = bpe().encode(text);
  for (int id : ids)
    if (id < 0 || id >= bpe().size()) std::abort();
  // Nothing dropped: a non-blank input gives tokens.
  if (!words.empty() && ids.empty()) std::abort();
  (void)bpe().decode(ids, "en");
  (void)bpe().words(ids);
  return 0;
}
