// The toy sequence tasks the in-browser trainer learns: reverse, sort or copy a random string of
// letters. Symbols are the byte tokens of 'a'.. so a model's pieces print as the letters.
#pragma once
#include <string>
#include <vector>

#include "attnlab/nn/random.hpp"

namespace attnlab::nn {

enum class ToyTask { Reverse, Sort, Copy };

// "reverse" | "sort" | "copy"; throws attnlab::Error naming `name` otherwise.
ToyTask parse_toy_task(const std::string& name);

struct ToyTaskConfig {
  ToyTask task = ToyTask::Reverse;
  int symbols = 8;            // alphabet size, letters 'a'..
  int min_len = 3, max_len = 6;
};

// The token of symbol s (0-based) and back.
int toy_token(int symbol);
char toy_letter(int token);

// One example: a source of uniform length in [min_len, max_len] and uniform symbols, and its
// target under the task. Draws from `rng` in a fixed order (length, then each symbol).
void toy_example(const ToyTaskConfig& c, Mt19937& rng, std::vector<int>& src, std::vector<int>& tgt);

}  // namespace attnlab::nn
