// Fuzzes the safetensors checkpoint loader (cpp/src/pretrained): any input is a model.safetensors
// for a micro GPT-2 config (vocab 4, 4 positions, width 4, one layer, one head). It either throws
// attnlab::Error (at the header, the config check, or finish()) or loads a model that then runs a
// forward and a KV-cache step without crashing; loaded both in fp32 and quantised to int8 (whose
// weights stream through their own path). Corpus: tests/fuzz/corpus/safetensors
// (tests/pretrained/make_fixtures.py writes it).
#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/pretrained.hpp"

using namespace attnlab;
using namespace attnlab::pretrained;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string config =
      "{\"architectures\": [\"GPT2LMHeadModel\"], \"vocab_size\": 4, \"n_positions\": 4, \"n_embd\": 4,"
      " \"n_layer\": 1, \"n_head\": 1, \"n_inner\": 4}";
  for (bool quantize : {false, true}) {
    try {
      auto m = load(config, data, size, uint64_t(1) << 26, quantize);
      m->forward({0, 3}, nullptr, true);
      m->extend({1}, true);
    } catch (const Error&) {
    }
  }
  return 0;
}
