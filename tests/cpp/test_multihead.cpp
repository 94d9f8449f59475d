// multi_head_attention against a float64 reference with PyTorch nn.MultiheadAttention semantics
// (batch_first, kdim = vdim = E): in-projection split from in_proj_weight, per-head scaled dot
// product, attn_mask (bool true = blocked, or additive), key_padding_mask, output projection,
// weights averaged over heads or per head.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/mask.hpp"
#include "attnlab/multihead.hpp"
#include "attnlab/thread_pool.hpp"
#include "check.hpp"
#include "reference.hpp"

using attnlab::AdditiveMask;
using attnlab::BoolMask;
using attnlab::MaskSet;
using attnlab::MultiHeadParams;
using attnlab::Shape;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

enum class Weights { None, Averaged, PerHead };

struct Mha {
  int64_t B, L, S, E, H;
  std::vector<float> query, key, value, in_w, in_b, out_w, out_b;
  bool with_in_bias = true, with_out_bias = true;

  Mha(int64_t B_, int64_t L_, int64_t S_, int64_t E_, int64_t H_, uint32_t seed,
      bool self_attention = false)
      : B(B_), L(L_), S(S_), E(E_), H(H_) {
    query = ref::random(static_cast<size_t>(B * L * E), seed, -2, 2);
    key = self_attention ? query : ref::random(static_cast<size_t>(B * S * E), seed + 1, -2, 2);
    value = self_attention ? query : ref::random(static_cast<size_t>(B * S * E), seed + 2, -2, 2);
    const float bound = 1.0f / std::sqrt(static_cast<float>(E));
    in_w = ref::random(static_cast<size_t>(3 * E * E), seed + 3, -2 * bound, 2 * bound);
    in_b = ref::random(static_cast<size_t>(3 * E), seed + 4, -0.5f, 0.5f);
    out_w = ref::random(static_cast<size_t>(E * E), seed + 5, -bound, bound);
    out_b = ref::random(static_cast<size_t>(E), seed + 6, -0.5f, 0.5f);
  }
  Shape target() const { return {B, H, L, S}; }
  MultiHeadParams params() const {
    MultiHeadParams p;
    p.embed_dim = E;
    p.num_heads = H;
    p.in_proj_weight = in_w.data();
    p.in_proj_bias = with_in_bias ? in_b.data() : nullptr;
    p.out_proj_weight = out_w.data();
    p.out_proj_bias = with_out_bias ? out_b.data() : nullptr;
    return p;
  }
  struct Result {
    std::vector<float> out, weights;
  };
  Result run(const MaskSet& m, Weights w, attnlab::ThreadPool* pool = nullptr) const {
    Result r;
    r.out.assign(static_cast<size_t>(B * L * E), kNaN);
    if (w == Weights::Averaged) r.weights.assign(static_cast<size_t>(B * L * S), kNaN);
    if (w == Weights::PerHead) r.weights.assign(static_cast<size_t>(B * H * L * S), kNaN);
    attnlab::multi_head_attention(query.data(), key.data(), value.data(), B, L, S, params(), m,
                                  r.out.data(), w == Weights::None ? nullptr : r.weights.data(),
                                  w == Weights::Averaged, pool);
    return r;
  }
  ref::MhaResult reference(
      const std::function<bool(int64_t, int64_t, int64_t, int64_t)>& allowed,
      const std::function<double(int64_t, int64_t, int64_t, int64_t)>& bias) const {
    return ref::multi_head(query.data(), key.data(), value.data(), B, L, S, E, H, in_w.data(),
                           with_in_bias ? in_b.data() : nullptr, out_w.data(),
                           with_out_bias ? out_b.data() : nullptr, allowed, bias);
  }
};

bool All(int64_t, int64_t, int64_t, int64_t) { return true; }
double NoBias(int64_t, int64_t, int64_t, int64_t) { return 0.0; }

// Output and both weight layouts against the reference; the output does not depend on whether
// (or how) weights are requested.
void ExpectMatches(const Mha& t, const MaskSet& m,
                   const std::function<bool(int64_t, int64_t, int64_t, int64_t)>& allowed = All,
                   const std::function<double(int64_t, int64_t, int64_t, int64_t)>& bias = NoBias) {
  const ref::MhaResult want = t.reference(allowed, bias);
  const auto none = t.run(m, Weights::None);
  const auto avg = t.run(m, Weights::Averaged);
  const auto per = t.run(m, Weights::PerHead);
  EXPECT_TRUE(check::AllClose(none.out, want.out));
  EXPECT_TRUE(check::AllClose(avg.weights, want.avg_weights));
  EXPECT_TRUE(check::AllClose(per.weights, want.head_weights));
  EXPECT_TRUE(check::BitwiseEqual(avg.out, none.out));
  EXPECT_TRUE(check::BitwiseEqual(per.out, none.out));
}

}  // namespace

TEST(MultiHead, SelfAttentionUnmasked) {
  Mha t(2, 5, 5, 8, 2, 10, /*self_attention=*/true);
  ExpectMatches(t, MaskSet{});
}

TEST(MultiHead, CrossAttentionLNotEqualS) {
  Mha t(2, 3, 6, 8, 4, 20);
  ExpectMatches(t, MaskSet{});
  Mha u(3, 7, 2, 6, 3, 21);
  ExpectMatches(u, MaskSet{});
}

TEST(MultiHead, SingleHeadAndOneHeadPerFeature) {
  Mha one(2, 4, 5, 6, 1, 30);
  ExpectMatches(one, MaskSet{});
  Mha many(2, 4, 5, 6, 6, 31);  // head dim 1
  ExpectMatches(many, MaskSet{});
}

TEST(MultiHead, NullBiases) {
  for (int combo = 0; combo < 3; ++combo) {
    SCOPED_TRACE("combo " + std::to_string(combo));
    Mha t(2, 4, 5, 8, 2, 40 + static_cast<uint32_t>(combo));
    t.with_in_bias = combo != 1;
    t.with_out_bias = combo != 2;
    if (combo == 0) t.with_in_bias = t.with_out_bias = false;
    ExpectMatches(t, MaskSet{});
  }
}

TEST(MultiHead, BoolAttnMaskTrueMeansBlocked) {
  Mha t(2, 4, 6, 8, 2, 50);
  std::vector<uint8_t> mask(static_cast<size_t>(t.L * t.S));
  for (size_t x = 0; x < mask.size(); ++x) mask[x] = (x * 7 % 5 == 0);
  MaskSet m;
  m.bools.push_back(
      BoolMask{mask.data(), attnlab::broadcast_to({t.L, t.S}, t.target(), "attnMask"), true});
  ExpectMatches(t, m, [&](int64_t, int64_t, int64_t i, int64_t j) { return !mask[i * t.S + j]; });
}

TEST(MultiHead, AdditiveAttnMask) {
  Mha t(2, 4, 6, 8, 2, 60);
  {
    SCOPED_TRACE("[L, S]");
    auto add = ref::random(static_cast<size_t>(t.L * t.S), 61, -2, 2);
    add[3] = add[9] = add[10] = -kInf;
    MaskSet m;
    m.additive.push_back(
        AdditiveMask{add.data(), attnlab::broadcast_to({t.L, t.S}, t.target(), "attnMask")});
    ExpectMatches(t, m, All, [&](int64_t, int64_t, int64_t i, int64_t j) {
      return static_cast<double>(add[i * t.S + j]);
    });
  }
  {
    SCOPED_TRACE("[B*H, L, S] (per batch and head)");
    auto add = ref::random(static_cast<size_t>(t.B * t.H * t.L * t.S), 62, -2, 2);
    for (size_t x = 0; x < add.size(); x += 7) add[x] = -kInf;
    MaskSet m;
    m.additive.push_back(
        AdditiveMask{add.data(), attnlab::broadcast_to(t.target(), t.target(), "attnMask")});
    ExpectMatches(t, m, All, [&](int64_t b, int64_t h, int64_t i, int64_t j) {
      return static_cast<double>(add[((b * t.H + h) * t.L + i) * t.S + j]);
    });
  }
}

TEST(MultiHead, KeyPaddingWithAttnMaskAndCausal) {
  Mha t(2, 5, 5, 8, 2, 70, /*self_attention=*/true);
  std::vector<uint8_t> pad{0, 0, 0, 1, 1,  //
                           0, 1, 0, 0, 0};
  std::vector<uint8_t> attn(static_cast<size_t>(t.L * t.S), 0);
  attn[2 * t.S + 0] = 1;
  MaskSet m;
  m.causal = true;
  m.bools.push_back(BoolMask{pad.data(),
                             attnlab::broadcast_to({t.B, 1, 1, t.S}, t.target(), "keyPaddingMask"),
                             true});
  m.bools.push_back(
      BoolMask{attn.data(), attnlab::broadcast_to({t.L, t.S}, t.target(), "attnMask"), true});
  ExpectMatches(t, m, [&](int64_t b, int64_t, int64_t i, int64_t j) {
    return j <= i && !pad[b * t.S + j] && !attn[i * t.S + j];
  });
}

TEST(MultiHead, ValidLensOverBatch) {
  Mha t(2, 4, 6, 8, 2, 80);
  const std::vector<int32_t> lens{3, 6};
  MaskSet m;
  m.valid_lens = attnlab::make_valid_lens(lens.data(), 2, {t.B, t.H}, t.L, t.S, "validLens");
  ExpectMatches(t, m, [&](int64_t b, int64_t, int64_t, int64_t j) { return j < lens[b]; });
}

TEST(MultiHead, FullyMaskedQueryRowGivesOutputBias) {
  Mha t(2, 4, 5, 8, 2, 90);
  // Batch 1 pads every key; in batch 0 the attention mask blocks query row 2 entirely.
  std::vector<uint8_t> pad{0, 0, 1, 0, 0,  //
                           1, 1, 1, 1, 1};
  std::vector<uint8_t> attn(static_cast<size_t>(t.L * t.S), 0);
  for (int64_t j = 0; j < t.S; ++j) attn[2 * t.S + j] = 1;
  MaskSet m;
  m.bools.push_back(BoolMask{pad.data(),
                             attnlab::broadcast_to({t.B, 1, 1, t.S}, t.target(), "keyPaddingMask"),
                             true});
  m.bools.push_back(
      BoolMask{attn.data(), attnlab::broadcast_to({t.L, t.S}, t.target(), "attnMask"), true});
  auto allowed = [&](int64_t b, int64_t, int64_t i, int64_t j) {
    return !pad[b * t.S + j] && !attn[i * t.S + j];
  };
  ExpectMatches(t, m, allowed);
  auto masked_row = [&](int64_t b, int64_t i) { return b == 1 || i == 2; };
  for (bool out_bias : {true, false}) {
    SCOPED_TRACE(out_bias ? "with out_proj_bias" : "without out_proj_bias");
    t.with_out_bias = out_bias;
    const auto avg = t.run(m, Weights::Averaged);
    const auto per = t.run(m, Weights::PerHead);
    for (int64_t b = 0; b < t.B; ++b)
      for (int64_t i = 0; i < t.L; ++i) {
        if (!masked_row(b, i)) continue;
        for (int64_t c = 0; c < t.E; ++c)
          EXPECT_EQ(avg.out[(b * t.L + i) * t.E + c], out_bias ? t.out_b[c] : 0.0f)
              << "b=" << b << " i=" << i << " c=" << c;
        EXPECT_TRUE(check::AllZero(avg.weights.data() + (b * t.L + i) * t.S, t.S));
        for (int64_t h = 0; h < t.H; ++h)
          EXPECT_TRUE(check::AllZero(per.weights.data() + ((b * t.H + h) * t.L + i) * t.S, t.S));
      }
    for (float x : avg.out) EXPECT_FALSE(std::isnan(x));
  }
}

TEST(MultiHead, InvalidArgumentsThrow) {
  Mha t(2, 3, 4, 8, 2, 100);
  std::vector<float> out(static_cast<size_t>(t.B * t.L * t.E));
  auto call = [&](MultiHeadParams p) {
    return [&t, &out, p] {
      attnlab::multi_head_attention(t.query.data(), t.key.data(), t.value.data(), t.B, t.L, t.S,
                                    p, MaskSet{}, out.data(), nullptr, true, nullptr);
    };
  };
  for (int64_t heads : {3, 5, 16, 0, -2}) {
    MultiHeadParams p = t.params();
    p.num_heads = heads;
    EXPECT_TRUE(check::ThrowsError(call(p), "numHeads")) << heads;
  }
  MultiHeadParams p = t.params();
  p.in_proj_weight = nullptr;
  EXPECT_TRUE(check::ThrowsError(call(p), "inProjWeight"));
  p = t.params();
  p.out_proj_weight = nullptr;
  EXPECT_TRUE(check::ThrowsError(call(p), "outProjWeight"));
}

TEST(MultiHead, ThreadCountInvariance) {
  // L = 40 spans three 16-row tasks per (batch, head).
  Mha t(2, 40, 37, 8, 2, 110);
  std::vector<uint8_t> pad(static_cast<size_t>(t.B * t.S), 0);
  for (size_t x = 0; x < pad.size(); x += 5) pad[x] = 1;
  const auto add = ref::random(static_cast<size_t>(t.L * t.S), 111, -1, 1);
  MaskSet m;
  m.causal = true;
  m.bools.push_back(BoolMask{pad.data(),
                             attnlab::broadcast_to({t.B, 1, 1, t.S}, t.target(), "keyPaddingMask"),
                             true});
  m.additive.push_back(
      AdditiveMask{add.data(), attnlab::broadcast_to({t.L, t.S}, t.target(), "attnMask")});
  for (Weights w : {Weights::Averaged, Weights::PerHead}) {
    const auto base = t.run(m, w, nullptr);
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      attnlab::ThreadPool pool(threads);
      const auto r = t.run(m, w, &pool);
      EXPECT_TRUE(check::BitwiseEqual(r.out, base.out));
      EXPECT_TRUE(check::BitwiseEqual(r.weights, base.weights));
    }
  }
  // And the big case is right, too.
  const ref::MhaResult want = t.reference(
      [&](int64_t b, int64_t, int64_t i, int64_t j) { return j <= i && !pad[b * t.S + j]; },
      [&](int64_t, int64_t, int64_t i, int64_t j) { return static_cast<double>(add[i * t.S + j]); });
  EXPECT_TRUE(check::AllClose(t.run(m, Weights::Averaged).out, want.out));
}
