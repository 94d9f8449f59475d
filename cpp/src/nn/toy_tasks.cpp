#include "attnlab/nn/toy_tasks.hpp"

#include <algorithm>
#include <random>

#include "attnlab/error.hpp"
#include "attnlab/nn/tokenizer.hpp"

namespace attnlab::nn {

ToyTask parse_toy_task(const std::string& name) {
  if (name == "reverse") return ToyTask::Reverse;
  if (name == "sort") return ToyTask::Sort;
  if (name == "copy") return ToyTask::Copy;
  throw Error("task: expected 'reverse', 'sort' or 'copy', got '" + name + "'");
}

int toy_token(int symbol) { return Bpe::kByte0 + 'a' + symbol; }
char toy_letter(int token) { return static_cast<char>(token - Bpe::kByte0); }

void toy_example(const ToyTaskConfig& c, Mt19937& rng, std::vector<int>& src, std::vector<int>& tgt) {
  std::uniform_int_distribution<int> length(c.min_len, c.max_len), symbol(0, c.symbols - 1);
  const int n = length(rng);
  src.clear();
  for (int i = 0; i < n; ++i) src.push_back(toy_token(symbol(rng)));
  tgt = src;
  if (c.task == ToyTask::Reverse) std::reverse(tgt.begin(), tgt.end());
  if (c.task == ToyTask::Sort) std::sort(tgt.begin(), tgt.end());
}

}  // namespace attnlab::nn
