// Relative position: T5's buckets against torch's (golden vectors), T5's bias and Shaw's relative
// embeddings in attention and multi-head attention against float64 references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "attnlab/attention.hpp"
#include "attnlab/error.hpp"
#include "attnlab/multihead.hpp"
#include "attnlab/relative_position.hpp"
#include "attnlab/thread_pool.hpp"
#include "reference.hpp"

using namespace attnlab;

namespace {
constexpr double kTol = 1e-5;

struct Golden {
  int64_t num_buckets, max_distance;
  bool bidirectional;
  std::vector<int64_t> buckets;  // j - i = -300..300
};
const std::vector<Golden> kGolden = {
#include "t5_buckets_golden.inc"
};

AttentionDims dims(Shape lead, int64_t Sq, int64_t Sk, int64_t D, int64_t Dv) {
  AttentionDims d;
  d.lead = std::move(lead);
  d.Sq = Sq;
  d.Sk = Sk;
  d.Dq = d.Dk = D;
  d.Dv = Dv;
  return d;
}

// Float64 Shaw attention of contiguous q [batch, Sq, D], k, v, with masks allowed(b, i, j).
void ref_shaw(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
              int64_t batch, int64_t Sq, int64_t Sk, int64_t D, int64_t Dv, double scale,
              const std::vector<float>& aK, const std::vector<float>* aV, int64_t kmax,
              const std::function<bool(int64_t, int64_t, int64_t)>& allowed,
              std::vector<double>& out, std::vector<double>& weights) {
  const auto rel = [&](int64_t i, int64_t j) { return std::clamp<int64_t>(j - i, -kmax, kmax) + kmax; };
  ref::attention(
      batch, Sq, Sk, Dv,
      [&](int64_t b, int64_t i, int64_t j) {
        const float* qi = &q[(b * Sq + i) * D];
        return scale * (ref::dot(qi, &k[(b * Sk + j) * D], D) + ref::dot(qi, &aK[rel(i, j) * D], D));
      },
      allowed, v, out, weights);
  if (!aV) return;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < Sq; ++i)
      for (int64_t j = 0; j < Sk; ++j)
        for (int64_t c = 0; c < Dv; ++c)
          out[(b * Sq + i) * Dv + c] += weights[(b * Sq + i) * Sk + j] * (*aV)[rel(i, j) * Dv + c];
}
}  // namespace

TEST(T5, BucketsMatchTorch) {
  ASSERT_EQ(kGolden.size(), 4u);
  for (const Golden& g : kGolden) {
    const T5Params p{g.num_buckets, g.max_distance, g.bidirectional};
    for (int64_t rel = -300; rel <= 300; ++rel) {
      ASSERT_EQ(t5_bucket(rel, p), g.buckets[rel + 300])
          << g.num_buckets << " " << g.max_distance << " " << g.bidirectional << " rel " << rel;
    }
  }
}

TEST(T5, BiasInAttentionOverHeads) {
  const int64_t B = 2, H = 3, D = 8, Dv = 4;
  for (auto [Sq, Sk, causal, bidirectional] :
       {std::tuple{9, 9, false, true}, std::tuple{5, 40, false, true},
        std::tuple{30, 12, true, false}, std::tuple{1, 6, false, false}}) {
    const T5Params p{8, 16, bidirectional};
    const auto w = ref::random(H * 8, 4, -2.0f, 2.0f);
    const auto q = ref::random(B * H * Sq * D, 1), k = ref::random(B * H * Sk * D, 2),
               v = ref::random(B * H * Sk * Dv, 3);
    std::vector<float> table(H * (Sq + Sk - 1));
    MaskSet masks;
    masks.causal = causal;
    masks.additive.push_back(t5_bias(w.data(), H, p, B * H, Sq, Sk, table.data()));
    std::vector<float> out(B * H * Sq * Dv), weights(B * H * Sq * Sk);
    attention(q.data(), k.data(), v.data(), dims({B, H}, Sq, Sk, D, Dv), Score::ScaledDot, {},
              masks, out.data(), weights.data(), nullptr);
    std::vector<double> want_out, want_weights;
    ref::dot_attention(
        q, k, v, B * H, Sq, Sk, D, Dv, 1.0 / std::sqrt(8.0),
        [c = causal](int64_t, int64_t i, int64_t j) { return !c || j <= i; },
        [&](int64_t b, int64_t i, int64_t j) { return double(w[(b % H) * 8 + t5_bucket(j - i, p)]); },
        want_out, want_weights);
    EXPECT_LE(ref::max_error(out, want_out), kTol) << Sq << " " << Sk;
    EXPECT_LE(ref::max_error(weights, want_weights), kTol) << Sq << " " << Sk;
  }
}

TEST(T5, RejectsBucketsAndDistancesOutOfRange) {
  EXPECT_THROW(check_t5({3, 128, true}), Error);   // 1 bucket per direction
  EXPECT_THROW(check_t5({1, 128, false}), Error);
  EXPECT_THROW(check_t5({32, 8, true}), Error);    // maxDistance inside the exact buckets
  EXPECT_THROW(check_t5({33, 128, true}), Error);  // odd: a bucket no distance reaches
  EXPECT_NO_THROW(check_t5({33, 128, false}));
  EXPECT_NO_THROW(check_t5({32, 9, true}));
  EXPECT_NO_THROW(check_t5({2, 2, false}));
  std::vector<float> w(3 * 8), table(3 * 7);
  EXPECT_THROW(t5_bias(w.data(), 3, {8, 16, true}, 4, 4, 4, table.data()), Error);
}

TEST(Shaw, AttentionAgainstFloat64) {
  const int64_t batch = 3, D = 6, Dv = 5;
  for (auto [Sq, Sk, kmax, causal, with_values] :
       {std::tuple{7, 7, 2, false, true}, std::tuple{9, 13, 3, true, true},
        std::tuple{12, 5, 0, false, false}, std::tuple{4, 20, 30, false, true}}) {
    const auto q = ref::random(batch * Sq * D, 1), k = ref::random(batch * Sk * D, 2),
               v = ref::random(batch * Sk * Dv, 3);
    const auto aK = ref::random((2 * kmax + 1) * D, 4), aV = ref::random((2 * kmax + 1) * Dv, 5);
    MaskSet masks;
    masks.causal = causal;
    const ShawParams shaw{aK.data(), with_values ? aV.data() : nullptr, kmax};
    std::vector<float> out(batch * Sq * Dv), weights(batch * Sq * Sk);
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));
    shaw_attention(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, scale, shaw, masks,
                   out.data(), weights.data(), nullptr);
    std::vector<double> want_out, want_weights;
    ref_shaw(q, k, v, batch, Sq, Sk, D, Dv, scale, aK, with_values ? &aV : nullptr, kmax,
             [c = causal](int64_t, int64_t i, int64_t j) { return !c || j <= i; }, want_out,
             want_weights);
    EXPECT_LE(ref::max_error(out, want_out), kTol) << Sq << " " << Sk << " " << kmax;
    EXPECT_LE(ref::max_error(weights, want_weights), kTol) << Sq << " " << Sk << " " << kmax;
  }
}

// Scores float32 cannot hold (1e40; inf - inf between q.k and q.a_K; every visible score at
// -1e40) get the float64 answer, as attention's fused kernel gives: before, such rows came out
// as NaN-free zeros or equal shares.
TEST(Shaw, ScoresPastFloat32MatchFloat64) {
  const int64_t batch = 2, Sq = 6, Sk = 7, D = 4, Dv = 3, kmax = 2;
  const auto scaled = [](std::vector<float> x, float s, bool positive) {
    for (auto& e : x) e = s * (positive ? std::abs(e) + 0.1f : e);
    return x;
  };
  const auto base_q = ref::random(batch * Sq * D, 1), base_k = ref::random(batch * Sk * D, 2);
  const auto v = ref::random(batch * Sk * Dv, 3), aV = ref::random((2 * kmax + 1) * Dv, 5);
  const auto aK1 = ref::random((2 * kmax + 1) * D, 4);
  struct Case { const char* name; std::vector<float> q, k, aK; bool causal; };
  const std::vector<Case> cases = {
      {"scores of 1e40", scaled(base_q, 1e20f, false), scaled(base_k, 1e20f, false), aK1, false},
      {"q.k against q.a_K, both past float32", scaled(base_q, 1e20f, true), scaled(base_k, 1e20f, true),
       scaled(aK1, -1e20f, true), true},
      {"every score near -1e40", scaled(base_q, 1e20f, true), scaled(base_k, -1e20f, true), aK1, true},
  };
  for (const Case& c : cases) {
    MaskSet masks;
    masks.causal = c.causal;
    const ShawParams shaw{c.aK.data(), aV.data(), kmax};
    std::vector<float> out(batch * Sq * Dv), weights(batch * Sq * Sk);
    const float scale = 0.5f;
    shaw_attention(c.q.data(), c.k.data(), v.data(), batch, Sq, Sk, D, Dv, scale, shaw, masks,
                   out.data(), weights.data(), nullptr);
    std::vector<double> want_out, want_weights;
    ref_shaw(c.q, c.k, v, batch, Sq, Sk, D, Dv, scale, c.aK, &aV, kmax,
             [causal = c.causal](int64_t, int64_t i, int64_t j) { return !causal || j <= i; }, want_out,
             want_weights);
    for (float o : out) ASSERT_TRUE(std::isfinite(o)) << c.name;
    EXPECT_LE(ref::max_error(out, want_out), kTol) << c.name;
    EXPECT_LE(ref::max_error(weights, want_weights), kTol) << c.name;
  }
}

TEST(Shaw, MultiHeadSharesTheEmbeddingsOverHeads) {
  const int64_t B = 2, L = 5, S = 7, E = 8, H = 2, hd = E / H, kmax = 2;
  const auto query = ref::random(B * L * E, 5), key = ref::random(B * S * E, 6),
             in_w = ref::random(3 * E * E, 8, -0.5f, 0.5f), out_w = ref::random(E * E, 9, -0.5f, 0.5f);
  const auto aK = ref::random((2 * kmax + 1) * hd, 10), aV = ref::random((2 * kmax + 1) * hd, 11);
  MultiHeadParams p;
  p.embed_dim = E;
  p.num_heads = H;
  p.in_proj_weight = in_w.data();
  p.out_proj_weight = out_w.data();
  MaskSet masks;
  const ShawParams shaw{aK.data(), aV.data(), kmax};
  std::vector<float> out(B * L * E);
  multi_head_attention(query.data(), key.data(), key.data(), B, L, S, p, masks, out.data(), nullptr,
                       true, nullptr, nullptr, &shaw);
  // Reference: float projections regrouped per head, float64 Shaw attention, output projection.
  const auto Q = ref::linear(query.data(), B * L, E, in_w.data(), E, nullptr);
  const auto K = ref::linear(key.data(), B * S, E, in_w.data() + E * E, E, nullptr);
  const auto V = ref::linear(key.data(), B * S, E, in_w.data() + 2 * E * E, E, nullptr);
  const auto per_head = [&](const std::vector<double>& X, int64_t n) {
    std::vector<float> y(B * H * n * hd);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < n; ++t)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t c = 0; c < hd; ++c) y[((b * H + h) * n + t) * hd + c] = float(X[(b * n + t) * E + h * hd + c]);
    return y;
  };
  std::vector<double> heads, w;
  ref_shaw(per_head(Q, L), per_head(K, S), per_head(V, S), B * H, L, S, hd, hd, 1.0 / std::sqrt(double(hd)),
           aK, &aV, kmax, [](int64_t, int64_t, int64_t) { return true; }, heads, w);
  std::vector<double> want(B * L * E, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < L; ++i)
      for (int64_t o = 0; o < E; ++o)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t c = 0; c < hd; ++c)
            want[(b * L + i) * E + o] += heads[((b * H + h) * L + i) * hd + c] * out_w[o * E + h * hd + c];
  EXPECT_LE(ref::max_error(out, want), 1e-4);
}

TEST(Shaw, RejectsMissingEmbeddingsAndNegativeDistances) {
  const std::vector<float> x(2 * 4), aK(3 * 4);
  std::vector<float> out(2 * 4);
  EXPECT_THROW(shaw_attention(x.data(), x.data(), x.data(), 1, 2, 2, 4, 4, 0.5f, {nullptr, nullptr, 1},
                              {}, out.data(), nullptr, nullptr),
               Error);
  EXPECT_THROW(shaw_attention(x.data(), x.data(), x.data(), 1, 2, 2, 4, 4, 0.5f, {aK.data(), nullptr, -1},
                              {}, out.data(), nullptr, nullptr),
               Error);
}

TEST(Shaw, ThreadCountInvariance) {
  const int64_t batch = 3, Sq = 40, Sk = 37, D = 8, Dv = 4, kmax = 3;
  const auto q = ref::random(batch * Sq * D, 1), k = ref::random(batch * Sk * D, 2),
             v = ref::random(batch * Sk * Dv, 3), aK = ref::random((2 * kmax + 1) * D, 4),
             aV = ref::random((2 * kmax + 1) * Dv, 5);
  MaskSet masks;
  masks.causal = true;
  std::vector<float> one(batch * Sq * Dv), three(one.size());
  shaw_attention(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, 0.3f, {aK.data(), aV.data(), kmax},
                 masks, one.data(), nullptr, nullptr);
  ThreadPool pool(3);
  shaw_attention(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, 0.3f, {aK.data(), aV.data(), kmax},
                 masks, three.data(), nullptr, &pool);
  EXPECT_EQ(one, three);
}
