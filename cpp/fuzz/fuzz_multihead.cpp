// Fuzzes multi_head_attention()'s dimension checks and masks: any input either throws
// attnlab::Error or gives finite outputs with normalised weights.
#include "fuzz_common.hpp"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const int64_t B = fuzz::size(in, -1, 3), L = fuzz::size(in), S = fuzz::size(in);
  MultiHeadParams p;
  p.embed_dim = fuzz::size(in, -1, 8);
  p.num_heads = fuzz::size(in, -1, 4);
  const int64_t E = p.embed_dim;
  if (B < 0 || L < 0 || S < 0 || E < 0) {
    std::vector<float> out(1);
    try {
      multi_head_attention(nullptr, nullptr, nullptr, B, L, S, p, MaskSet{}, out.data(), nullptr,
                           true, nullptr);
    } catch (const Error&) {
      return 0;
    }
    if (B * L * S * E != 0) std::abort();  // negative sizes must be refused
    return 0;
  }
  const auto query = fuzz::values(in, B * L * E), key = fuzz::values(in, B * S * E),
             value = fuzz::values(in, B * S * E), in_w = fuzz::values(in, 3 * E * E),
             in_b = fuzz::values(in, 3 * E), out_w = fuzz::values(in, E * E),
             out_b = fuzz::values(in, E);
  p.in_proj_weight = in.ConsumeBool() ? in_w.data() : nullptr;
  p.in_proj_bias = in.ConsumeBool() ? in_b.data() : nullptr;
  p.out_proj_weight = out_w.data();
  p.out_proj_bias = in.ConsumeBool() ? out_b.data() : nullptr;

  MaskSet masks;
  masks.causal = in.ConsumeBool();
  masks.query_offset = in.ConsumeBool() ? 0 : in.ConsumeBool() ? fuzz::size(in) : in.ConsumeIntegral<int64_t>();
  std::vector<uint8_t> kpm(static_cast<size_t>(std::max<int64_t>(B * S, 1)));
  for (auto& b : kpm) b = in.ConsumeIntegral<uint8_t>() & 1;
  const bool average = in.ConsumeBool();
  const int64_t H = std::max<int64_t>(p.num_heads, 1);
  try {
    if (in.ConsumeBool())
      masks.bools.push_back({kpm.data(), broadcast_to({B, 1, 1, S}, {B, H, L, S}, "kpm"), true});
  } catch (const Error&) {
    return 0;
  }
  std::vector<float> out(static_cast<size_t>(std::max<int64_t>(B * L * E, 1)));
  std::vector<float> w(static_cast<size_t>(std::max<int64_t>(B * H * L * S, 1)));
  try {
    multi_head_attention(query.data(), key.data(), value.data(), B, L, S, p, masks, out.data(),
                         w.data(), average, nullptr);
  } catch (const Error&) {
    return 0;
  }
  fuzz::require_finite(out.data(), B * L * E);
  fuzz::require_rows_normalised(w.data(), average ? B * L : B * H * L, S);
  return 0;
}
