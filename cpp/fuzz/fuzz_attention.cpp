// Fuzzes the shape and mask checks of make_masks(), attention(), attention_scores() and
// masked_softmax(): any input either throws attnlab::Error or gives finite outputs with
// normalised weights.
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

  // The masks as the bindings describe them (make_masks), ALiBi and T5 included, with the last
  // leading axis as heads.
  MaskSpec spec;
  spec.causal = in.ConsumeBool();
  // Mostly a cached decoder's offsets; sometimes anything, which must be an Error or hold.
  spec.query_offset = in.ConsumeBool() ? 0 : in.ConsumeBool() ? fuzz::size(in) : in.ConsumeIntegral<int64_t>();
  std::vector<std::vector<uint8_t>> bools;
  std::vector<std::vector<float>> adds;
  for (int i = in.ConsumeIntegralInRange<int>(0, 2); i > 0; --i) {
    const Shape s = fuzz::shape(in, 4, 1);
    bools.emplace_back(static_cast<size_t>(std::max<int64_t>(fuzz::count(s), 1)));
    for (auto& b : bools.back()) b = in.ConsumeIntegral<uint8_t>() & 1;
    spec.bools.push_back({bools.back().data(), s, in.ConsumeBool()});
  }
  for (int i = in.ConsumeIntegralInRange<int>(0, 1); i > 0; --i) {
    const Shape s = fuzz::shape(in, 4, 1);
    adds.push_back(fuzz::values(in, std::max<int64_t>(fuzz::count(s), 1), true));
    spec.additive.push_back({adds.back().data(), s});
  }
  std::vector<int32_t> lens;
  if (in.ConsumeBool()) {
    lens.resize(in.ConsumeIntegralInRange<size_t>(0, 40));
    for (auto& l : lens) l = in.ConsumeIntegralInRange<int32_t>(-2, 10);
    spec.valid_lens = {lens.data(), static_cast<int64_t>(lens.size())};
  }
  const int64_t heads = d.lead.empty() ? 1 : d.lead.back();
  const size_t diagonals = static_cast<size_t>(std::max<int64_t>(heads * (d.Sq + d.Sk - 1), 1));
  std::vector<float> slopes, alibi_table(diagonals), t5_weights, t5_table(diagonals);
  if (in.ConsumeBool()) {
    if (in.ConsumeBool()) slopes = fuzz::values(in, std::max<int64_t>(heads, 1));
    spec.alibi = {slopes.empty() ? nullptr : slopes.data(), heads, alibi_table.data()};
  }
  if (in.ConsumeBool()) {
    spec.t5.params = {fuzz::size(in, 0, 40), fuzz::size(in, 0, 200), in.ConsumeBool()};
    t5_weights = fuzz::values(in, std::max<int64_t>(heads * spec.t5.params.num_buckets, 1));
    spec.t5 = {t5_weights.data(), heads, spec.t5.params, t5_table.data()};
  }
  MaskSet masks;
  try {
    masks = make_masks(spec, d.scores());
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
