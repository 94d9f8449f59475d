// A Translation laid out for display: the best hypothesis's attention as dense tensors and every
// beam's tokens and text, what translate() returns to JavaScript.
#pragma once
#include <string>
#include <vector>

#include "attnlab/nn/translate.hpp"

namespace attnlab::nn {

struct AttentionMaps {
  // [layers, heads, T, S] over the best hypothesis's T tokens and the S source tokens (GRU: the
  // alignment, one layer and head).
  std::vector<float> cross;
  // [layers, heads, T, T], zeros above the diagonal (Transformer; empty otherwise).
  std::vector<float> decoder_self;
};

AttentionMaps attention_maps(const Translation& t);

// Beam b's target pieces as learned ("</s>" for EOS) and its detokenised text.
std::vector<std::string> beam_pieces(const Translator& tr, const Hypothesis& h);
std::string beam_text(const Translator& tr, const Hypothesis& h);

// A result's strings as one UTF-8 text and each string's length in UTF-16 code units, so that
// JavaScript decodes once and slices, where a string per token crossed the boundary one by one
// (about 1% of a beam-5 Transformer translation in Node 20). Each string goes in as valid UTF-8,
// bytes that are not as U+FFFD (utf8_decode), so every decoder reads the same characters.
struct PackedStrings {
  std::string text;
  std::vector<int32_t> units;
  void add(const std::string& s);
};

// What translate() hands to JavaScript, in the order web/lib/translator.ts reads it: every string
// in one (the text, the S source and T target tokens, then each beam's text and its pieces);
// counts [S, T, beams, each beam's piece count]; each beam's score, then each beam's
// log-probability; each beam's Hypothesis::cut (1 or 0); the best hypothesis's attention, and
// the rest of the Translation that JavaScript shows.
struct TranslationView {
  PackedStrings strings;
  std::vector<int32_t> counts;
  std::vector<float> scores;
  std::vector<int32_t> cut;
  AttentionMaps maps;
  size_t source_pieces = 0;
  AttentionLayout layout;
  std::vector<float> encoder_self;
};

TranslationView translation_view(const Translator& tr, const Translation& t);

}  // namespace attnlab::nn
