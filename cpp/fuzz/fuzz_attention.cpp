// Fuzzes the shape and mask checks of attention(), attention_scores() and masked_softmax():
// any input either throws attnlab::Error or gives finite outputs with normalised weights.
#include "fuzz_common.hpp"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  AttentionDims d;
  d.lead = fuzz::shape(in, 2);
  d.Sq = fuzz::size(in);
  d.Sk = fuzz::size(in);
  d.Dq = fuzz::size(in);
  d.Dk = in.ConsumeBool() ? d.Dq : fuzz::size(in);
  d.Dv = fuzz::size(in);
  const Score score = static_cast<Score>(in.ConsumeIntegralInRange<int>(0, 3));
  ScoreParams p;
  p.hidden = fuzz::size(in, 0, 4);
  p.scale = in.ConsumeBool() ? 0.0f : in.ConsumeFloatingPoint<float>();

  // Buffers sized from the dims as a caller would; negative dims have no valid buffer at all.
  Shape qs = d.lead, ks = d.lead, vs = d.lead;
  qs.insert(qs.end(), {d.Sq, d.Dq});
  ks.insert(ks.end(), {d.Sk, d.Dk});
  vs.insert(vs.end(), {d.Sk, d.Dv});
  const int64_t nq = fuzz::count(qs), nk = fuzz::count(ks), nv = fuzz::count(vs);
  if (nq < 0 || nk < 0 || nv < 0) {
    // The core must refuse before touching memory: pass null buffers.
    std::vector<float> out(1);
    try {
      attention(nullptr, nullptr, nullptr, d, score, p, MaskSet{}, out.data(), nullptr, nullptr);
    } catch (const Error&) {
      return 0;
    }
    std::abort();
  }
  const auto q = fuzz::values(in, nq), k = fuzz::values(in, nk), v = fuzz::values(in, nv);
  const auto W = fuzz::values(in, std::max<int64_t>(d.Dq, 0) * std::max<int64_t>(d.Dk, 0));
  const auto Wq = fuzz::values(in, p.hidden * std::max<int64_t>(d.Dq, 0));
  const auto Wk = fuzz::values(in, p.hidden * std::max<int64_t>(d.Dk, 0));
  const auto wv = fuzz::values(in, p.hidden);
  p.W = score == Score::General && in.ConsumeBool() ? W.data() : nullptr;
  p.Wq = Wq.data();
  p.Wk = Wk.data();
  p.wv = wv.data();
  if (score == Score::Additive && in.ConsumeBool()) p.wv = nullptr;

  Shape target = d.lead;
  target.insert(target.end(), {d.Sq, d.Sk});
  MaskSet masks;
  masks.causal = in.ConsumeBool();
  // Mostly a cached decoder's offsets; sometimes anything, which must be an Error or hold.
  masks.query_offset = in.ConsumeBool() ? 0 : in.ConsumeBool() ? fuzz::size(in) : in.ConsumeIntegral<int64_t>();
  std::vector<std::vector<uint8_t>> bools;
  std::vector<std::vector<float>> adds;
  std::vector<int32_t> lens;
  try {
    for (int i = in.ConsumeIntegralInRange<int>(0, 2); i > 0; --i) {
      const Shape s = fuzz::shape(in, 4, 1);
      bools.emplace_back(static_cast<size_t>(std::max<int64_t>(fuzz::count(s), 1)));
      for (auto& b : bools.back()) b = in.ConsumeIntegral<uint8_t>() & 1;
      masks.bools.push_back({bools.back().data(), broadcast_to(s, target, "mask"), in.ConsumeBool()});
    }
    for (int i = in.ConsumeIntegralInRange<int>(0, 1); i > 0; --i) {
      const Shape s = fuzz::shape(in, 4, 1);
      adds.push_back(fuzz::values(in, std::max<int64_t>(fuzz::count(s), 1), true));
      masks.additive.push_back({adds.back().data(), broadcast_to(s, target, "additive")});
    }
    if (in.ConsumeBool()) {
      lens.resize(in.ConsumeIntegralInRange<size_t>(0, 40));
      for (auto& l : lens) l = in.ConsumeIntegralInRange<int32_t>(-2, 10);
      masks.valid_lens = make_valid_lens(lens.data(), static_cast<int64_t>(lens.size()), d.lead,
                                         d.Sq, d.Sk, "validLens");
    }
  } catch (const Error&) {
    return 0;
  }

  const int64_t rows = std::max<int64_t>(fuzz::count(d.lead), 0) * std::max<int64_t>(d.Sq, 0);
  std::vector<float> out(static_cast<size_t>(std::max<int64_t>(rows * d.Dv, 1)));
  std::vector<float> w(static_cast<size_t>(std::max<int64_t>(rows * d.Sk, 1)));
  ThreadPool pool(2);
  try {
    attention(q.data(), k.data(), v.data(), d, score, p, masks, out.data(), w.data(), &pool);
  } catch (const Error&) {
    return 0;
  }
  fuzz::require_finite(out.data(), rows * d.Dv);
  fuzz::require_rows_normalised(w.data(), rows, d.Sk);

  std::vector<float> soft(w.size());
  masked_softmax(w.data(), soft.data(), std::max<int64_t>(fuzz::count(d.lead), 0), d.Sq, d.Sk,
                 masks, nullptr);
  fuzz::require_rows_normalised(soft.data(), rows, d.Sk);
  return 0;
}
