// Fuzzes the model-file loader. Inputs are either raw files or edits (xor, truncate, extend) of
// tiny valid GRU and Transformer files; half the time the declared size and the CRC are fixed up
// afterwards so the fuzzer gets past them to the tensor table and config checks. Any input either
// throws attnlab::Error or loads a model that then translates without crashing.
#include <cstring>

#include "attnlab/nn/translate.hpp"
#include "attnlab/nn/weights.hpp"
#include "fuzz_common.hpp"

using namespace attnlab;
using namespace attnlab::nn;

namespace {

std::vector<uint8_t> tiny_model(const std::string& arch, DType dtype) {
  const Bpe src = Bpe::learn({"le chat dort.", "le chien mange."}, 270);
  const Bpe tgt = Bpe::learn({"the cat sleeps.", "the dog eats."}, 270);
  ModelConfig c;
  for (const auto& [k, v] : std::map<std::string, std::string>{
           {"arch", arch}, {"d", "8"}, {"heads", "2"}, {"layers", "1"}, {"ffn", "8"},
           {"max_len", "16"}, {"src_lang", "fr"}, {"tgt_lang", "en"}})
    c.set(k, v);
  c.set("src_vocab", std::to_string(src.size()));
  c.set("tgt_vocab", std::to_string(tgt.size()));
  auto m = make_model(c);
  init_params(*m, 1);
  return save_model(*m, src, tgt, dtype);
}

const std::vector<std::vector<uint8_t>>& templates() {
  static const std::vector<std::vector<uint8_t>> t = {
      tiny_model("gru", DType::I8), tiny_model("transformer", DType::F16),
      tiny_model("gru", DType::F32), tiny_model("transformer", DType::I8)};
  return t;
}

void fix_size_and_crc(std::vector<uint8_t>& b) {
  if (b.size() < 28) return;
  const uint64_t size = b.size();
  std::memcpy(b.data() + 16, &size, 8);
  const uint32_t crc = crc32(b.data(), b.size() - 4);
  std::memcpy(b.data() + b.size() - 4, &crc, 4);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const int mode = in.ConsumeIntegralInRange<int>(0, 4);
  std::vector<uint8_t> file;
  if (mode == 4) {
    file = in.ConsumeRemainingBytes<uint8_t>();
  } else {
    file = templates()[mode];
    for (int edits = in.ConsumeIntegralInRange<int>(1, 8); edits > 0 && in.remaining_bytes(); --edits) {
      const size_t at = in.ConsumeIntegralInRange<size_t>(0, file.size() - 1);
      switch (in.ConsumeIntegralInRange<int>(0, 3)) {
        case 0: file[at] ^= in.ConsumeIntegral<uint8_t>(); break;
        case 1: file.resize(at); break;
        case 2: file.insert(file.begin() + at, in.ConsumeIntegralInRange<size_t>(1, 64), in.ConsumeIntegral<uint8_t>()); break;
        default: {  // overwrite a little-endian u32 (counts, dims, lengths live in u32s)
          const uint32_t v = in.ConsumeIntegral<uint32_t>();
          if (at + 4 <= file.size()) std::memcpy(file.data() + at, &v, 4);
        }
      }
      if (file.empty()) break;
    }
  }
  if (in.ConsumeBool()) fix_size_and_crc(file);
  std::unique_ptr<Translator> tr;
  try {
    tr = Translator::load(file.data(), file.size());
  } catch (const Error&) {
    return 0;
  }
  DecodeOptions opt;
  opt.beam = 2;
  opt.max_len = 6;
  try {
    tr->translate("le chat dort.", opt);
  } catch (const Error&) {
  }
  return 0;
}
