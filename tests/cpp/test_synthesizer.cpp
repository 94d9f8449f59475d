// Synthesizer attention: each form (dense, random, factorized dense and random, mixed with dot
// products, causal) against float64 references of the paper's formulas, and missing parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/synthesizer.hpp"
#include "attnlab/thread_pool.hpp"
#include "reference.hpp"

using namespace attnlab;

namespace {

constexpr int64_t B = 2, S = 12, D = 5, Dv = 3, Hd = 7;

// Float64 MLP on token x: W2 relu(W1 x + b1) + b2.
std::vector<double> ref_mlp(const float* x, const std::vector<float>& W1, const std::vector<float>& b1,
                            const std::vector<float>& W2, const std::vector<float>& b2, int64_t out) {
  std::vector<double> h(Hd), y(out);
  for (int64_t t = 0; t < Hd; ++t) h[t] = std::max(0.0, ref::dot(&W1[t * D], x, D) + b1[t]);
  for (int64_t o = 0; o < out; ++o) {
    y[o] = b2[o];
    for (int64_t t = 0; t < Hd; ++t) y[o] += double(W2[o * Hd + t]) * h[t];
  }
  return y;
}

struct Mlp {
  std::vector<float> W1, b1, W2, b2;
  Mlp(int64_t out, uint32_t seed)
      : W1(ref::random(Hd * D, seed)), b1(ref::random(Hd, seed + 1)),
        W2(ref::random(out * Hd, seed + 2)), b2(ref::random(out, seed + 3)) {}
  SynthMlp view(int64_t out) const { return {W1.data(), b1.data(), W2.data(), b2.data(), Hd, out}; }
  std::vector<double> at(const float* x, int64_t out) const { return ref_mlp(x, W1, b1, W2, b2, out); }
};

void expect_matches(const SynthesizerParams& p, const std::vector<float>& x, const std::vector<float>& v,
                    const std::function<double(int64_t, int64_t, int64_t)>& synth, const char* what) {
  std::vector<float> out(B * S * Dv), weights(B * S * S);
  synthesizer(x.data(), v.data(), B, S, D, Dv, p, out.data(), weights.data(), nullptr);
  std::vector<double> want_out, want_w;
  ref::attention(
      B, S, S, Dv,
      [&](int64_t b, int64_t i, int64_t j) {
        double s = synth(b, i, j);
        if (p.dot_weight > 0) {
          s = (1.0 - p.dot_weight) * s +
              p.dot_weight * ref::dot(p.q + (b * S + i) * p.Dqk, p.k + (b * S + j) * p.Dqk, p.Dqk) / std::sqrt(double(p.Dqk));
        }
        return s;
      },
      [&](int64_t, int64_t i, int64_t j) { return !p.causal || j <= i; }, v, want_out, want_w);
  EXPECT_LE(ref::max_error(out, want_out), 1e-5) << what;
  EXPECT_LE(ref::max_error(weights, want_w), 1e-5) << what;
}

}  // namespace

TEST(Synthesizer, EveryFormAgainstFloat64) {
  const auto x = ref::random(B * S * D, 1), v = ref::random(B * S * Dv, 2);
  const auto q = ref::random(B * S * 4, 3), k = ref::random(B * S * 4, 4);
  const Mlp dense(S, 10), fa(4, 20), fb(3, 30);  // 4 * 3 = S
  std::vector<float> R(S * S), R1(S * 2), R2(S * 2);
  synthesizer_random(S, S, 5, R.data());
  synthesizer_random(S, 2, 6, R1.data());
  synthesizer_random(S, 2, 7, R2.data());
  for (bool causal : {false, true}) {
    for (float w : {0.0f, 0.25f, 1.0f}) {
      SynthesizerParams base;
      base.causal = causal;
      if (w > 0) {
        base.q = q.data();
        base.k = k.data();
        base.Dqk = 4;
        base.dot_weight = w;
      }
      SynthesizerParams p = base;
      p.mlp = dense.view(S);
      expect_matches(p, x, v, [&](int64_t b, int64_t i, int64_t j) { return dense.at(&x[(b * S + i) * D], S)[j]; }, "dense");
      p = base;
      p.kind = SynthKind::FactorizedDense;
      p.mlp = fa.view(4);
      p.mlp_b = fb.view(3);
      expect_matches(p, x, v, [&](int64_t b, int64_t i, int64_t j) {
        const float* xi = &x[(b * S + i) * D];
        return fa.at(xi, 4)[j % 4] * fb.at(xi, 3)[j / 4];
      }, "factorized dense");
      p = base;
      p.kind = SynthKind::Random;
      p.R = R.data();
      expect_matches(p, x, v, [&](int64_t, int64_t i, int64_t j) { return double(R[i * S + j]); }, "random");
      p = base;
      p.kind = SynthKind::FactorizedRandom;
      p.R1 = R1.data();
      p.R2 = R2.data();
      p.rank = 2;
      expect_matches(p, x, v, [&](int64_t, int64_t i, int64_t j) { return ref::dot(&R1[i * 2], &R2[j * 2], 2); }, "factorized random");
    }
  }
}

TEST(Synthesizer, RejectsMissingParametersAndBadFactors) {
  const auto x = ref::random(S * D, 1), v = ref::random(S * Dv, 2);
  std::vector<float> out(S * Dv);
  const auto run = [&](const SynthesizerParams& p) { synthesizer(x.data(), v.data(), 1, S, D, Dv, p, out.data(), nullptr, nullptr); };
  SynthesizerParams p;
  EXPECT_THROW(run(p), Error);  // dense without an MLP
  const Mlp dense(S + 1, 10), fa(5, 20), fb(3, 30);
  p.mlp = dense.view(S + 1);
  EXPECT_THROW(run(p), Error);  // one score too many
  p.kind = SynthKind::FactorizedDense;
  p.mlp = fa.view(5);
  p.mlp_b = fb.view(3);
  EXPECT_THROW(run(p), Error);  // 5 * 3 != 12
  p.kind = SynthKind::Random;
  EXPECT_THROW(run(p), Error);
  p.kind = SynthKind::FactorizedRandom;
  EXPECT_THROW(run(p), Error);
}

// Scores past float32 are the learned parameters' doing: an Error naming them, never NaN or a
// guessed softmax (they were +inf or NaN rows before).
TEST(Synthesizer, ScoresPastFloat32AreAnErrorNamingTheParameters) {
  const auto x = ref::random(S * D, 1), v = ref::random(S * Dv, 2);
  std::vector<float> out(S * Dv);
  const auto message = [&](const SynthesizerParams& p) -> std::string {
    try {
      synthesizer(x.data(), v.data(), 1, S, D, Dv, p, out.data(), nullptr, nullptr);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  auto R1 = ref::random(S * 2, 3), R2 = ref::random(S * 2, 4);
  for (auto& r : R1) r *= 1e20f;
  for (auto& r : R2) r *= 1e20f;
  SynthesizerParams p;
  p.kind = SynthKind::FactorizedRandom;
  p.R1 = R1.data();
  p.R2 = R2.data();
  p.rank = 2;
  EXPECT_EQ(message(p).rfind("options.R1, options.R2: the scores overflow float32", 0), 0u) << message(p);
  Mlp dense(S, 10);
  for (auto& w : dense.W1) w *= 1e20f;  // hidden units near 1e20,
  for (auto& w : dense.W2) w *= 1e20f;  // scores near 1e40
  p = SynthesizerParams{};
  p.mlp = dense.view(S);
  EXPECT_EQ(message(p).rfind("x, options.dense: the scores overflow float32", 0), 0u) << message(p);
  // The same parameters scaled back are fine.
  for (auto& w : dense.W2) w /= 1e20f;
  EXPECT_EQ(message(p), "no error");
}

TEST(Synthesizer, ThreadCountInvariance) {
  const auto x = ref::random(B * S * D, 1), v = ref::random(B * S * Dv, 2);
  const Mlp dense(S, 10);
  SynthesizerParams p;
  p.mlp = dense.view(S);
  p.causal = true;
  std::vector<float> one(B * S * Dv), two(one.size());
  synthesizer(x.data(), v.data(), B, S, D, Dv, p, one.data(), nullptr, nullptr);
  ThreadPool pool(2);
  synthesizer(x.data(), v.data(), B, S, D, Dv, p, two.data(), nullptr, &pool);
  EXPECT_EQ(one, two);
}
