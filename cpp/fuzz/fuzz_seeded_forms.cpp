// Fuzzes the forms whose random draws the core makes from a seed: linear_attention() by method
// name (FAVOR+'s features, Linformer's E and F), the random synthesizers without a given matrix,
// and ALiBi with the paper's slopes. Any sizes and seeds either throw attnlab::Error or give
// finite outputs.
#include "fuzz_common.hpp"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const int64_t batch = fuzz::size(in, -1, 2), Sq = fuzz::size(in), Sk = fuzz::size(in), D = fuzz::size(in, -1, 4),
                Dv = fuzz::size(in, -1, 3);
  const uint64_t seed = in.ConsumeIntegral<uint64_t>();
  const int form = in.ConsumeIntegralInRange<int>(0, 3);
  const bool ok = batch >= 0 && Sq >= 0 && Sk >= 0 && D >= 0 && Dv >= 0;
  const bool v_ok = batch >= 0 && Sk >= 0 && Dv >= 0;
  const auto q = fuzz::values(in, ok ? batch * Sq * D : 0), k = fuzz::values(in, ok ? batch * Sk * D : 0),
             v = fuzz::values(in, v_ok ? batch * Sk * Dv : 0);
  std::vector<float> out(static_cast<size_t>(ok ? std::max<int64_t>(batch * Sq * Dv, 1) : 1));
  try {
    if (form == 0) {
      const char* names[] = {"elu", "favor+", "linformer", "performer"};
      LinearSpec s;
      s.method = parse_linear_method(names[in.ConsumeIntegralInRange<int>(0, 3)]);
      s.causal = in.ConsumeBool();
      s.features = fuzz::size(in, -1, 8);
      s.rank = fuzz::size(in, -1, 4);
      s.seed = seed;
      if (!ok) {
        linear_attention(nullptr, nullptr, nullptr, batch, Sq, Sk, D, Dv, s, out.data(), nullptr);
        std::abort();  // negative sizes must throw
      }
      linear_attention(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, s, out.data(), nullptr);
      fuzz::require_finite(out.data(), batch * Sq * Dv);
    } else if (form == 1 || form == 2) {
      SynthesizerParams p;
      p.kind = form == 1 ? SynthKind::Random : SynthKind::FactorizedRandom;
      p.rank = fuzz::size(in, -1, 3);
      const int64_t S = Sk;  // the random forms read no tokens: Sq and D play no part
      const bool sizes_ok = batch >= 0 && S >= 0 && Dv >= 0;
      std::vector<float> w(static_cast<size_t>(sizes_ok ? std::max<int64_t>(batch * S * S, 1) : 1));
      std::vector<float> o(static_cast<size_t>(sizes_ok ? std::max<int64_t>(batch * S * Dv, 1) : 1));
      if (!sizes_ok) {
        synthesizer_seeded(nullptr, nullptr, batch, S, 0, Dv, p, seed, o.data(), nullptr, nullptr);
        std::abort();
      }
      synthesizer_seeded(nullptr, v.data(), batch, S, 0, Dv, p, seed, o.data(), w.data(), nullptr);
      fuzz::require_finite(o.data(), batch * S * Dv);
      fuzz::require_rows_normalised(w.data(), batch * S, S);
    } else {
      const int64_t heads = fuzz::size(in, -1, 4);
      if (Sq < 1 || Sk < 1 || batch < 0) return 0;  // the caller's contract: no table for empty scores
      std::vector<float> table(static_cast<size_t>(std::max<int64_t>(heads, 1) * (Sq + Sk - 1)));
      alibi_bias(nullptr, heads, batch * std::max<int64_t>(heads, 1), Sq, Sk, table.data());
      fuzz::require_finite(table.data(), static_cast<int64_t>(table.size()));
    }
  } catch (const Error&) {
  }
  return 0;
}
