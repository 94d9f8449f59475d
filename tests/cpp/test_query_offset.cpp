// MaskSet::query_offset: query row i sits at key position i + query_offset. The property a
// KV-cached decoder or a chunked prefill relies on: the last n rows of a call over all S queries
// equal a call over those n queries alone with query_offset = S - n, for causal masks, ALiBi, T5,
// Shaw and RoPE; and the offset biases against float64 attention with the shifted distances.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "attnlab/alibi.hpp"
#include "attnlab/error.hpp"
#include "attnlab/attention.hpp"
#include "attnlab/multihead.hpp"
#include "attnlab/relative_position.hpp"
#include "attnlab/softmax.hpp"
#include "attnlab/sparse_attention.hpp"
#include "reference.hpp"

using namespace attnlab;

namespace {

constexpr double kTol = 1e-5;

// Rows [first, first + n) of each of `batch` slices of x [batch, rows, cols].
std::vector<float> rows_of(const std::vector<float>& x, int64_t batch, int64_t rows, int64_t cols,
                           int64_t first, int64_t n) {
  std::vector<float> y;
  for (int64_t b = 0; b < batch; ++b) {
    const auto at = x.begin() + (b * rows + first) * cols;
    y.insert(y.end(), at, at + n * cols);
  }
  return y;
}

std::vector<double> widened(const std::vector<float>& x) { return {x.begin(), x.end()}; }

struct Options {
  bool causal = false, alibi = false, t5 = false;
};

// Attention of q [batch, Sq, D] against k, v [batch, Sk, *] with the options at `offset`.
void run(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
         int64_t H, int64_t batch, int64_t Sq, int64_t Sk, int64_t D, int64_t Dv, Options o,
         int64_t offset, const ShawParams* shaw, std::vector<float>& out,
         std::vector<float>& weights) {
  const std::vector<float> slopes = alibi_slopes(H), t5w = ref::random(H * 8, 9, -2.0f, 2.0f);
  std::vector<float> alibi_table(H * (Sq + Sk - 1)), t5_table(H * (Sq + Sk - 1));
  MaskSet masks;
  masks.causal = o.causal;
  masks.query_offset = offset;
  if (o.alibi) masks.additive.push_back(alibi_bias(slopes.data(), H, batch, Sq, Sk, alibi_table.data(), offset));
  if (o.t5) masks.additive.push_back(t5_bias(t5w.data(), H, {8, 6, true}, batch, Sq, Sk, t5_table.data(), offset));
  out.assign(batch * Sq * Dv, 0.0f);
  weights.assign(batch * Sq * Sk, 0.0f);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  if (shaw) {
    shaw_attention(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, scale, *shaw, masks,
                   out.data(), weights.data(), nullptr);
    return;
  }
  AttentionDims d;
  d.lead = {batch};
  d.Sq = Sq;
  d.Sk = Sk;
  d.Dq = d.Dk = D;
  d.Dv = Dv;
  attention(q.data(), k.data(), v.data(), d, Score::ScaledDot, {}, masks, out.data(),
            weights.data(), nullptr);
}

}  // namespace

TEST(QueryOffset, LastRowsEqualTheFullCall) {
  const int64_t H = 2, batch = 2 * H, S = 13, D = 8, Dv = 4, kmax = 3;
  const auto q = ref::random(batch * S * D, 1), k = ref::random(batch * S * D, 2),
             v = ref::random(batch * S * Dv, 3);
  const auto aK = ref::random((2 * kmax + 1) * D, 4), aV = ref::random((2 * kmax + 1) * Dv, 5);
  const ShawParams shaw{aK.data(), aV.data(), kmax};
  for (const Options o : {Options{true, false, false}, Options{false, true, false},
                          Options{false, false, true}, Options{true, true, true}}) {
    for (const ShawParams* sh : {static_cast<const ShawParams*>(nullptr), &shaw}) {
      std::vector<float> full_out, full_w;
      run(q, k, v, H, batch, S, S, D, Dv, o, 0, sh, full_out, full_w);
      for (int64_t n : {1, 5}) {
        std::vector<float> out, w;
        run(rows_of(q, batch, S, D, S - n, n), k, v, H, batch, n, S, D, Dv, o, S - n, sh, out, w);
        const auto ctx = ::testing::Message() << "causal " << o.causal << " alibi " << o.alibi
                                              << " t5 " << o.t5 << " shaw " << !!sh << " n " << n;
        EXPECT_LE(ref::max_error(out, widened(rows_of(full_out, batch, S, Dv, S - n, n))), kTol) << ctx;
        EXPECT_LE(ref::max_error(w, widened(rows_of(full_w, batch, S, S, S - n, n))), kTol) << ctx;
      }
    }
  }
}

TEST(QueryOffset, CausalAndAlibiAgainstFloat64) {
  // Offsets that leave some keys past the queries (2), match Sk - Sq (6) or pass the last key (9).
  const int64_t H = 3, batch = H, Sq = 4, Sk = 10, D = 8, Dv = 4;
  const auto q = ref::random(batch * Sq * D, 6), k = ref::random(batch * Sk * D, 7),
             v = ref::random(batch * Sk * Dv, 8);
  const std::vector<float> slopes = alibi_slopes(H);
  for (int64_t offset : {2, 6, 9}) {
    std::vector<float> out, weights;
    run(q, k, v, H, batch, Sq, Sk, D, Dv, {true, true, false}, offset, nullptr, out, weights);
    std::vector<double> want_out, want_weights;
    ref::dot_attention(
        q, k, v, batch, Sq, Sk, D, Dv, 1.0 / std::sqrt(8.0),
        [&](int64_t, int64_t i, int64_t j) { return j <= i + offset; },
        [&](int64_t b, int64_t i, int64_t j) { return -double(slopes[b % H]) * std::abs(i + offset - j); },
        want_out, want_weights);
    EXPECT_LE(ref::max_error(out, want_out), kTol) << offset;
    EXPECT_LE(ref::max_error(weights, want_weights), kTol) << offset;
  }
}

TEST(QueryOffset, T5BucketsOfTheShiftedDistance) {
  const int64_t H = 2, Sq = 3, Sk = 9, offset = 5;
  const T5Params p{8, 6, false};
  const auto w = ref::random(H * 8, 10);
  std::vector<float> table(H * (Sq + Sk - 1));
  const AdditiveMask m = t5_bias(w.data(), H, p, H, Sq, Sk, table.data(), offset);
  for (int64_t b = 0; b < H; ++b)
    for (int64_t i = 0; i < Sq; ++i)
      for (int64_t j = 0; j < Sk; ++j) {
        const float got = m.data[m.at.batch_offset[b] + i * m.at.row_stride + j * m.at.col_stride];
        EXPECT_EQ(got, w[b * 8 + t5_bucket(j - (i + offset), p)]) << b << " " << i << " " << j;
      }
}

TEST(QueryOffset, MaskedSoftmaxCausal) {
  const int64_t batch = 2, Sq = 3, Sk = 7, offset = 4;
  const auto x = ref::random(batch * Sq * Sk, 11);
  MaskSet masks;
  masks.causal = true;
  masks.query_offset = offset;
  std::vector<float> y(x.size());
  masked_softmax(x.data(), y.data(), batch, Sq, Sk, masks, nullptr);
  const auto want = ref::masked_softmax(
      x, batch, Sq, Sk, [&](int64_t, int64_t i, int64_t j) { return j <= i + offset; },
      [](int64_t, int64_t, int64_t) { return 0.0; });
  EXPECT_LE(ref::max_error(y, want), kTol);
}

TEST(QueryOffset, MultiHeadRopeLastRows) {
  // The queries turn at rotary.offset + query_offset + i, the keys at rotary.offset + j.
  const int64_t B = 2, S = 9, n = 3, E = 12, H = 3;
  const auto x = ref::random(B * S * E, 12);
  const auto in_w = ref::random(3 * E * E, 13, -0.5f, 0.5f), out_w = ref::random(E * E, 14, -0.5f, 0.5f);
  MultiHeadParams p;
  p.embed_dim = E;
  p.num_heads = H;
  p.in_proj_weight = in_w.data();
  p.out_proj_weight = out_w.data();
  RopeParams rp;
  rp.offset = 5;
  MaskSet masks;
  masks.causal = true;
  std::vector<float> full(B * S * E), tail(B * n * E);
  multi_head_attention(x.data(), x.data(), x.data(), B, S, S, p, masks, full.data(), nullptr, true,
                       nullptr, &rp);
  masks.query_offset = S - n;
  multi_head_attention(rows_of(x, B, S, E, S - n, n).data(), x.data(), x.data(), B, n, S, p, masks,
                       tail.data(), nullptr, true, nullptr, &rp);
  EXPECT_LE(ref::max_error(tail, widened(rows_of(full, B, S, E, S - n, n))), kTol);
}

// The core refuses what the bindings never pass (negative, past 2^53, a shifted sparse pattern):
// a native caller gets an Error, not a negative key range written outside the output.
TEST(QueryOffset, OutOfRangeIsAnError) {
  const int64_t S = 4, D = 2;
  const std::vector<float> x = ref::random(S * D, 3, -1.0f, 1.0f);
  std::vector<float> out(S * D), w(S * S), table(2 * S - 1);
  for (const int64_t bad : {int64_t{-1}, -(int64_t{1} << 62), (int64_t{1} << 53) + 1}) {
    MaskSet m;
    m.causal = true;
    m.query_offset = bad;
    EXPECT_THROW(attention(x.data(), x.data(), x.data(), {{1}, S, S, D, D, D}, Score::ScaledDot, {}, m,
                           out.data(), w.data(), nullptr),
                 Error);
    EXPECT_THROW(masked_softmax(w.data(), w.data(), 1, S, S, m, nullptr), Error);
    // The additive score does not go through the fused kernel; with Sk = 0 nothing is scored.
    ScoreParams add;
    const std::vector<float> wq = ref::random(3 * D, 4, -1.0f, 1.0f), wv = ref::random(3, 5, -1.0f, 1.0f);
    add.Wq = wq.data(), add.Wk = wq.data(), add.wv = wv.data(), add.hidden = 3;
    EXPECT_THROW(attention(x.data(), x.data(), x.data(), {{1}, S, S, D, D, D}, Score::Additive, add, m, out.data(),
                           nullptr, nullptr),
                 Error);
    EXPECT_THROW(attention(x.data(), x.data(), x.data(), {{1}, S, 0, D, D, D}, Score::ScaledDot, {}, m, out.data(),
                           nullptr, nullptr),
                 Error);
    EXPECT_THROW(alibi_bias(nullptr, 1, 1, S, S, table.data(), bad), Error);
    EXPECT_THROW(t5_bias(x.data(), 1, {2, 2, false}, 1, S, S, table.data(), bad), Error);
  }
  MaskSet shifted;
  shifted.query_offset = 1;
  EXPECT_THROW(sparse_attention(x.data(), x.data(), x.data(), 1, D, D, 1.0f,
                                make_pattern({PatternType::Local, 1}, S, S), shifted, out.data(), nullptr, nullptr),
               Error);
  MaskSet ok;
  ok.causal = true;
  ok.query_offset = int64_t{1} << 53;  // the largest: every key visible, no overflow
  attention(x.data(), x.data(), x.data(), {{1}, S, S, D, D, D}, Score::ScaledDot, {}, ok, out.data(), w.data(), nullptr);
  for (float o : out) EXPECT_TRUE(std::isfinite(o));
}
