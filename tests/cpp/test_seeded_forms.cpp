// What moved out of the bindings into the core: the default scale, ALiBi's paper slopes, and the
// seeded random draws of FAVOR+, Linformer and the random synthesizers. Each is checked bit for
// bit against the explicit call the bindings used to make.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attnlab/alibi.hpp"
#include "attnlab/error.hpp"
#include "attnlab/linear_attention.hpp"
#include "attnlab/random.hpp"
#include "attnlab/scoring.hpp"
#include "attnlab/synthesizer.hpp"

using namespace attnlab;

namespace {
std::vector<float> normal(int64_t n, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = static_cast<float>(rng.normal());
  return v;
}
}  // namespace

TEST(SeededForms, DefaultScale) {
  EXPECT_EQ(resolve_scale(Score::ScaledDot, 0.0f, 16), 0.25f);
  EXPECT_EQ(resolve_scale(Score::Dot, 0.0f, 16), 1.0f);
  EXPECT_EQ(resolve_scale(Score::ScaledDot, 0.5f, 16), 0.5f);
  EXPECT_EQ(resolve_scale(Score::Dot, 3.0f, 16), 3.0f);
}

TEST(SeededForms, AlibiNullSlopesAreThePapers) {
  const int64_t H = 6, Sq = 3, Sk = 5, len = Sq + Sk - 1;
  std::vector<float> a(static_cast<size_t>(H * len)), b(a.size());
  const std::vector<float> slopes = alibi_slopes(H);
  alibi_bias(nullptr, H, 2 * H, Sq, Sk, a.data());
  alibi_bias(slopes.data(), H, 2 * H, Sq, Sk, b.data());
  EXPECT_EQ(a, b);
}

TEST(SeededForms, LinearAttentionDrawsWhatTheExplicitCallsTake) {
  const int64_t batch = 2, Sq = 5, Sk = 6, D = 4, Dv = 3, m = 8, rank = 3;
  const auto q = normal(batch * Sq * D, 1), k = normal(batch * Sk * D, 2), v = normal(batch * Sk * Dv, 3);
  std::vector<float> got(static_cast<size_t>(batch * Sq * Dv)), want(got.size());
  for (bool causal : {false, true}) {
    LinearSpec s;
    s.method = LinearMethod::Favor;
    s.features = m;
    s.seed = 42;
    s.causal = causal;
    linear_attention(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, s, got.data(), nullptr);
    std::vector<float> W(static_cast<size_t>(m * D));
    favor_features(m, D, 42, W.data());
    favor_attention(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, W.data(), m, causal, want.data(), nullptr);
    EXPECT_EQ(got, want) << "favor+ causal=" << causal;
    s.method = LinearMethod::Elu;
    linear_attention(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, s, got.data(), nullptr);
    linear_attention_elu(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, causal, want.data(), nullptr);
    EXPECT_EQ(got, want) << "elu causal=" << causal;
  }
  LinearSpec s;
  s.method = LinearMethod::Linformer;
  s.rank = rank;
  s.seed = 9;
  linear_attention(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, s, got.data(), nullptr);
  std::vector<float> E(static_cast<size_t>(rank * Sk)), F(E.size());
  linformer_projections(rank, Sk, 9, E.data(), F.data());
  linformer_attention(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, E.data(), F.data(), rank, want.data(), nullptr);
  EXPECT_EQ(got, want) << "linformer, drawn";
  // Given E and F are taken as they are.
  s.E = F.data();
  s.F = E.data();
  linear_attention(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, s, got.data(), nullptr);
  linformer_attention(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, F.data(), E.data(), rank, want.data(), nullptr);
  EXPECT_EQ(got, want) << "linformer, given";
  s.rank = 0;
  EXPECT_THROW(linear_attention(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, s, got.data(), nullptr), Error);
  s.method = LinearMethod::Favor;
  s.features = 0;
  EXPECT_THROW(linear_attention(q.data(), k.data(), v.data(), batch, Sq, Sk, D, Dv, s, got.data(), nullptr), Error);
  EXPECT_EQ(parse_linear_method("favor+"), LinearMethod::Favor);
  EXPECT_THROW(parse_linear_method("performer"), Error);
}

TEST(SeededForms, RandomSynthesizersDrawWhatTheExplicitCallsTake) {
  const int64_t batch = 2, S = 5, Dv = 3, rank = 2;
  const auto v = normal(batch * S * Dv, 4);
  std::vector<float> got(static_cast<size_t>(batch * S * Dv)), want(got.size());
  SynthesizerParams p;
  p.kind = SynthKind::Random;
  synthesizer_seeded(nullptr, v.data(), batch, S, 0, Dv, p, 5, got.data(), nullptr, nullptr);
  std::vector<float> R(static_cast<size_t>(S * S));
  synthesizer_random(S, S, 5, R.data());
  p.R = R.data();
  synthesizer(nullptr, v.data(), batch, S, 0, Dv, p, want.data(), nullptr, nullptr);
  EXPECT_EQ(got, want) << "random";
  SynthesizerParams f;
  f.kind = SynthKind::FactorizedRandom;
  f.rank = rank;
  synthesizer_seeded(nullptr, v.data(), batch, S, 0, Dv, f, 6, got.data(), nullptr, nullptr);
  std::vector<float> R12(static_cast<size_t>(2 * S * rank));
  synthesizer_random(2 * S, rank, 6, R12.data());
  f.R1 = R12.data();
  f.R2 = R12.data() + S * rank;
  synthesizer(nullptr, v.data(), batch, S, 0, Dv, f, want.data(), nullptr, nullptr);
  EXPECT_EQ(got, want) << "factorized-random";
  // Given matrices are taken as they are.
  synthesizer_seeded(nullptr, v.data(), batch, S, 0, Dv, f, 99, got.data(), nullptr, nullptr);
  EXPECT_EQ(got, want) << "factorized-random, given";
  EXPECT_EQ(parse_synth_kind("factorized-dense"), SynthKind::FactorizedDense);
  EXPECT_THROW(parse_synth_kind("fixed"), Error);
}
