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

}  // namespace attnlab::nn
