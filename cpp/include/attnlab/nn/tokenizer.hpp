// Text normalisation and a byte-pair-encoding subword vocabulary learned by attnlab itself.
//
// normalize(): UTF-8 -> code points, typographic variants folded (curly quotes and apostrophes,
// no-break and thin spaces, dashes, ellipsis), canonical composition (NFD input such as
// "e" + U+0301 becomes the same "é" as NFC input), lowercase (accented capitals too: "É" -> "é").
// pre_tokenize(): words and punctuation marks, each punctuation mark its own word; apostrophes and
// hyphens stay inside words ("j'ai", "parle-t-il"), letting BPE split them.
// Bpe: SentencePiece-style pieces ("▁" marks a word start) over characters; characters the
// vocabulary lacks fall back to one token per UTF-8 byte, so no input is ever dropped.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace attnlab::nn {

std::u32string utf8_decode(const std::string& s);  // invalid bytes -> U+FFFD
std::string utf8_encode(const std::u32string& s);
std::string utf8_encode(char32_t c);

std::u32string normalize(const std::string& text);
std::vector<std::string> pre_tokenize(const std::string& text);
// The BLEU tokens of the PyTorch tutorial's normalisation: lowercase, accents stripped, . ! ?
// split off as tokens, every other non-letter dropped.
std::vector<std::string> bleu_tokens(const std::string& text);
// Joins words back into a sentence for `lang` ("en" or "fr"): punctuation spacing, capital first
// letter (and "I" in English).
std::string detokenize(const std::vector<std::string>& words, const std::string& lang);

class Bpe {
 public:
  static constexpr int kPad = 0, kBos = 1, kEos = 2, kUnk = 3, kByte0 = 4, kFirstSymbol = 4 + 256;
  // Learns from raw sentences until the vocabulary holds vocab_size tokens (or no pair repeats).
  static Bpe learn(const std::vector<std::string>& sentences, int vocab_size, int min_char_count = 2);
  // From stored tokens and merges (pairs of token ids, in rank order). Validates both.
  static Bpe from_parts(std::vector<std::string> tokens, std::vector<std::pair<int, int>> merges);

  std::vector<int> encode(const std::string& text) const;
  // Token strings for display: pieces as learned, bytes as <0xNN>.
  std::string piece(int id) const;
  // Words (pieces joined at word starts; byte tokens decoded as UTF-8).
  std::vector<std::string> words(const std::vector<int>& ids) const;
  std::string decode(const std::vector<int>& ids, const std::string& lang) const;
  int size() const { return static_cast<int>(tokens_.size()); }
  const std::vector<std::string>& tokens() const { return tokens_; }
  const std::vector<std::pair<int, int>>& merges() const { return merges_; }

 private:
  void index();
  std::vector<int> encode_word(const std::u32string& word) const;
  std::vector<std::string> tokens_;
  std::vector<std::pair<int, int>> merges_;
  std::unordered_map<std::string, int> tok2id_;
  std::unordered_map<uint64_t, std::pair<int, int>> rank_;  // (a << 32 | b) -> (rank, merged id)
  int marker_id_ = -1;  // the bare word-start marker "▁"
};

}  // namespace attnlab::nn
