// ALiBi: the paper's slopes, and the bias inside attention and multi-head attention against
// float64 attention with -slope * |i - j| added to the scores.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <tuple>
#include <vector>

#include "attnlab/alibi.hpp"
#include "attnlab/attention.hpp"
#include "attnlab/error.hpp"
#include "attnlab/multihead.hpp"
#include "reference.hpp"

using namespace attnlab;

namespace {
constexpr double kTol = 1e-5;
}

TEST(Alibi, SlopesOfThePaper) {
  // Press et al.'s get_slopes(n).
  const auto expect_slopes = [](int64_t n, const std::vector<double>& exponents) {
    const std::vector<float> got = alibi_slopes(n);
    ASSERT_EQ(got.size(), exponents.size());
    for (size_t h = 0; h < got.size(); ++h) EXPECT_FLOAT_EQ(got[h], std::exp2(exponents[h])) << n << " " << h;
  };
  expect_slopes(1, {-8});
  expect_slopes(8, {-1, -2, -3, -4, -5, -6, -7, -8});
  expect_slopes(4, {-2, -4, -6, -8});
  expect_slopes(6, {-2, -4, -6, -8, -1, -3});
  expect_slopes(12, {-1, -2, -3, -4, -5, -6, -7, -8, -0.5, -1.5, -2.5, -3.5});
  EXPECT_THROW(alibi_slopes(0), Error);
}

TEST(Alibi, InAttentionOverHeads) {
  // q [2, 3, Sq, D]: heads are the last leading axis.
  const int64_t B = 2, H = 3, D = 8, Dv = 4;
  const std::vector<float> slopes = alibi_slopes(H);
  for (auto [Sq, Sk, causal] : {std::tuple{9, 9, false}, std::tuple{5, 11, false},
                                std::tuple{11, 5, true}, std::tuple{1, 6, false}}) {
    const auto q = ref::random(B * H * Sq * D, 1), k = ref::random(B * H * Sk * D, 2),
               v = ref::random(B * H * Sk * Dv, 3);
    std::vector<float> table(H * (Sq + Sk - 1));
    MaskSet masks;
    masks.causal = causal;
    masks.additive.push_back(alibi_bias(slopes.data(), H, B * H, Sq, Sk, table.data()));
    AttentionDims d;
    d.lead = {B, H};
    d.Sq = Sq;
    d.Sk = Sk;
    d.Dq = d.Dk = D;
    d.Dv = Dv;
    std::vector<float> out(B * H * Sq * Dv), weights(B * H * Sq * Sk);
    attention(q.data(), k.data(), v.data(), d, Score::ScaledDot, {}, masks, out.data(),
              weights.data(), nullptr);
    std::vector<double> want_out, want_weights;
    ref::dot_attention(
        q, k, v, B * H, Sq, Sk, D, Dv, 1.0 / std::sqrt(8.0),
        [is_causal = causal](int64_t, int64_t i, int64_t j) { return !is_causal || j <= i; },
        [&](int64_t b, int64_t i, int64_t j) { return -double(slopes[b % H]) * std::abs(i - j); },
        want_out, want_weights);
    EXPECT_LE(ref::max_error(out, want_out), kTol) << Sq << " " << Sk;
    EXPECT_LE(ref::max_error(weights, want_weights), kTol) << Sq << " " << Sk;
  }
}

TEST(Alibi, InMultiHeadAttention) {
  // Multi-head attention's masks run over [B, H]: the bias goes in as one more additive mask.
  const int64_t B = 2, L = 6, S = 6, E = 8, H = 4;
  const auto query = ref::random(B * L * E, 5), in_w = ref::random(3 * E * E, 8, -0.5f, 0.5f),
             out_w = ref::random(E * E, 9, -0.5f, 0.5f);
  const std::vector<float> slopes = alibi_slopes(H);
  std::vector<float> table(H * (L + S - 1));
  MaskSet masks;
  masks.causal = true;
  masks.additive.push_back(alibi_bias(slopes.data(), H, B * H, L, S, table.data()));
  MultiHeadParams p;
  p.embed_dim = E;
  p.num_heads = H;
  p.in_proj_weight = in_w.data();
  p.out_proj_weight = out_w.data();
  std::vector<float> out(B * L * E);
  multi_head_attention(query.data(), query.data(), query.data(), B, L, S, p, masks, out.data(),
                       nullptr, true, nullptr);
  const ref::MhaResult want = ref::multi_head(
      query.data(), query.data(), query.data(), B, L, S, E, H, in_w.data(), nullptr, out_w.data(),
      nullptr, [](int64_t, int64_t, int64_t i, int64_t j) { return j <= i; },
      [&](int64_t, int64_t h, int64_t i, int64_t j) { return -double(slopes[h]) * std::abs(i - j); });
  EXPECT_LE(ref::max_error(out, want.out), kTol);
}

TEST(Alibi, RejectsHeadsThatDoNotDivideTheBatch) {
  std::vector<float> slopes = {0.5f, 0.25f, 0.125f}, table(3 * 7);
  EXPECT_THROW(alibi_bias(slopes.data(), 3, 4, 4, 4, table.data()), Error);
}

TEST(Alibi, RejectsNegativeOrNonFiniteSlopes) {
  std::vector<float> table(2 * 7);
  for (const float bad : {-0.5f, INFINITY, NAN}) {
    const std::vector<float> slopes = {0.5f, bad};
    EXPECT_THROW(alibi_bias(slopes.data(), 2, 2, 4, 4, table.data()), Error) << bad;
  }
  const std::vector<float> zero = {0.0f, 0.5f};
  EXPECT_NO_THROW(alibi_bias(zero.data(), 2, 2, 4, 4, table.data()));
}
