// Linear attention against its own float64 formulas: elu(x) + 1 features (Katharopoulos et al.),
// FAVOR+ (Choromanski et al.) and Linformer (Wang et al.); FAVOR+ also against softmax attention.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/linear_attention.hpp"
#include "reference.hpp"

using namespace attnlab;

namespace {

constexpr double kTol = 1e-5;
using Features = std::function<std::vector<double>(const float*)>;

// out_i = sum_j phi(q_i).phi(k_j) v_j / sum_j phi(q_i).phi(k_j), over j <= i when causal.
std::vector<double> kernel_attention(const std::vector<float>& q, const std::vector<float>& k,
                                     const std::vector<float>& v, int64_t batch, int64_t Sq,
                                     int64_t Sk, int64_t D, int64_t Dv, bool causal,
                                     const Features& phi) {
  std::vector<double> out(batch * Sq * Dv, 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < Sq; ++i) {
      const std::vector<double> fq = phi(&q[(b * Sq + i) * D]);
      double den = 0.0;
      for (int64_t j = 0; j < Sk && (!causal || j <= i); ++j) {
        const std::vector<double> fk = phi(&k[(b * Sk + j) * D]);
        double w = 0.0;
        for (size_t c = 0; c < fq.size(); ++c) w += fq[c] * fk[c];
        den += w;
        for (int64_t c = 0; c < Dv; ++c) out[(b * Sq + i) * Dv + c] += w * v[(b * Sk + j) * Dv + c];
      }
      for (int64_t c = 0; c < Dv; ++c) out[(b * Sq + i) * Dv + c] /= den;
    }
  return out;
}

Features elu_features(int64_t D) {
  return [=](const float* x) {
    std::vector<double> f(D);
    for (int64_t c = 0; c < D; ++c) f[c] = x[c] > 0 ? x[c] + 1.0 : std::exp(double(x[c]));
    return f;
  };
}

Features favor_features_ref(const std::vector<float>& W, int64_t m, int64_t D) {
  return [=](const float* x) {
    const double c = std::pow(double(D), -0.25);
    double norm2 = 0.0;
    for (int64_t t = 0; t < D; ++t) norm2 += (c * x[t]) * (c * x[t]);
    std::vector<double> f(m);
    for (int64_t r = 0; r < m; ++r) {
      double wx = 0.0;
      for (int64_t t = 0; t < D; ++t) wx += double(W[r * D + t]) * c * x[t];
      f[r] = std::exp(wx - norm2 / 2) / std::sqrt(double(m));
    }
    return f;
  };
}

struct Inputs {
  int64_t batch, Sq, Sk, D, Dv;
  std::vector<float> q, k, v;
  Inputs(int64_t batch_, int64_t Sq_, int64_t Sk_, int64_t D_, int64_t Dv_, float scale = 1.0f)
      : batch(batch_), Sq(Sq_), Sk(Sk_), D(D_), Dv(Dv_),
        q(ref::random(batch * Sq * D, 31, -scale, scale)),
        k(ref::random(batch * Sk * D, 32, -scale, scale)),
        v(ref::random(batch * Sk * Dv, 33)) {}
  std::vector<float> out() const { return std::vector<float>(batch * Sq * Dv); }
};

}  // namespace

TEST(LinearAttention, EluMatchesItsFormula) {
  for (bool causal : {false, true}) {
    for (const Inputs& in : {Inputs(2, 19, 19, 8, 5, 2.0f), Inputs(1, 7, 23, 16, 3), Inputs(1, 23, 7, 4, 6)}) {
      std::vector<float> out = in.out();
      linear_attention_elu(in.q.data(), in.k.data(), in.v.data(), in.batch, in.Sq, in.Sk, in.D,
                           in.Dv, causal, out.data(), nullptr);
      const auto want = kernel_attention(in.q, in.k, in.v, in.batch, in.Sq, in.Sk, in.D, in.Dv,
                                         causal, elu_features(in.D));
      EXPECT_LE(ref::max_error(out, want), kTol) << "causal " << causal << " Sq " << in.Sq;
    }
  }
}

TEST(LinearAttention, FavorFeaturesAreOrthogonalWithinABlock) {
  const int64_t D = 16, m = 40;  // blocks of 16, 16 and 8 rows
  std::vector<float> W(m * D);
  favor_features(m, D, 5, W.data());
  double mean_norm2 = 0.0;
  for (int64_t r = 0; r < m; ++r) {
    mean_norm2 += ref::dot(&W[r * D], &W[r * D], D) / m;
    for (int64_t s = r + 1; s < m && s / D == r / D; ++s) {
      const double cos = ref::dot(&W[r * D], &W[s * D], D) /
                         std::sqrt(ref::dot(&W[r * D], &W[r * D], D) * ref::dot(&W[s * D], &W[s * D], D));
      EXPECT_LT(std::abs(cos), 1e-5) << r << ", " << s;
    }
  }
  // Row lengths are those of Gaussian vectors: E|w|^2 = D (loose: 40 samples).
  EXPECT_GT(mean_norm2, 0.6 * D);
  EXPECT_LT(mean_norm2, 1.4 * D);
  std::vector<float> again(m * D);
  favor_features(m, D, 5, again.data());
  EXPECT_EQ(again, W);
}

TEST(LinearAttention, FavorMatchesItsFormula) {
  const int64_t m = 48;
  for (bool causal : {false, true}) {
    const Inputs in(2, 21, 17, 8, 4, 1.5f);
    std::vector<float> W(m * in.D), out = in.out();
    favor_features(m, in.D, 3, W.data());
    favor_attention(in.q.data(), in.k.data(), in.v.data(), in.batch, in.Sq, in.Sk, in.D, in.Dv,
                    W.data(), m, causal, out.data(), nullptr);
    const auto want = kernel_attention(in.q, in.k, in.v, in.batch, in.Sq, in.Sk, in.D, in.Dv,
                                       causal, favor_features_ref(W, m, in.D));
    EXPECT_LE(ref::max_error(out, want), kTol) << "causal " << causal;
  }
}

TEST(LinearAttention, FavorApproachesSoftmaxAsFeaturesGrow) {
  // Mean |FAVOR+ - softmax attention| over 8 seeds of the features: it must fall with m
  // (Monte Carlo: as 1/sqrt(m)). Inputs of moderate norm: the estimator's variance grows as
  // exp(|q' + k'|^2), so for large q, k it needs many more features (measured at entries in
  // [-1.5, 1.5]: 0.068, 0.065, 0.052 for m = 16, 64, 256, and 0.024 only at m = 4096).
  const Inputs in(1, 64, 64, 16, 8, 0.5f);
  std::vector<double> exact, unused;
  ref::dot_attention(in.q, in.k, in.v, 1, in.Sq, in.Sk, in.D, in.Dv, 0.25,
                     [](int64_t, int64_t, int64_t) { return true; },
                     [](int64_t, int64_t, int64_t) { return 0.0; }, exact, unused);
  std::vector<double> errors;
  for (int64_t m : {16, 64, 256}) {
    double err = 0.0;
    for (uint64_t seed = 0; seed < 8; ++seed) {
      std::vector<float> W(m * in.D), out = in.out();
      favor_features(m, in.D, seed, W.data());
      favor_attention(in.q.data(), in.k.data(), in.v.data(), 1, in.Sq, in.Sk, in.D, in.Dv,
                      W.data(), m, false, out.data(), nullptr);
      for (size_t t = 0; t < out.size(); ++t) err += std::abs(out[t] - exact[t]) / (8.0 * out.size());
    }
    errors.push_back(err);
  }
  EXPECT_GT(errors[0], errors[1]);
  EXPECT_GT(errors[1], errors[2]);
  EXPECT_LT(errors[2], errors[0] / 2.5);
  RecordProperty("favor_errors_16_64_256",
                 std::to_string(errors[0]) + " " + std::to_string(errors[1]) + " " + std::to_string(errors[2]));
}

TEST(LinearAttention, LinformerMatchesItsFormula) {
  const Inputs in(2, 13, 29, 8, 5);
  const int64_t rank = 6;
  std::vector<float> E(rank * in.Sk), F(rank * in.Sk), out = in.out();
  linformer_projections(rank, in.Sk, 4, E.data(), F.data());
  linformer_attention(in.q.data(), in.k.data(), in.v.data(), in.batch, in.Sq, in.Sk, in.D, in.Dv,
                      E.data(), F.data(), rank, out.data(), nullptr);
  // Project in double, then dense softmax attention over the `rank` projected keys and values.
  std::vector<float> kp(in.batch * rank * in.D), vp(in.batch * rank * in.Dv);
  std::vector<double> kp64(kp.size(), 0.0), vp64(vp.size(), 0.0);
  for (int64_t b = 0; b < in.batch; ++b)
    for (int64_t r = 0; r < rank; ++r)
      for (int64_t j = 0; j < in.Sk; ++j) {
        for (int64_t c = 0; c < in.D; ++c) kp64[(b * rank + r) * in.D + c] += double(E[r * in.Sk + j]) * in.k[(b * in.Sk + j) * in.D + c];
        for (int64_t c = 0; c < in.Dv; ++c) vp64[(b * rank + r) * in.Dv + c] += double(F[r * in.Sk + j]) * in.v[(b * in.Sk + j) * in.Dv + c];
      }
  std::vector<double> want(in.batch * in.Sq * in.Dv, 0.0);
  for (int64_t b = 0; b < in.batch; ++b)
    for (int64_t i = 0; i < in.Sq; ++i) {
      std::vector<double> s(rank);
      for (int64_t r = 0; r < rank; ++r) {
        for (int64_t c = 0; c < in.D; ++c) s[r] += double(in.q[(b * in.Sq + i) * in.D + c]) * kp64[(b * rank + r) * in.D + c];
        s[r] /= std::sqrt(double(in.D));
      }
      const ref::Row w = ref::softmax(s, std::vector<bool>(rank, true));
      for (int64_t r = 0; r < rank; ++r)
        for (int64_t c = 0; c < in.Dv; ++c) want[(b * in.Sq + i) * in.Dv + c] += w.w[r] * vp64[(b * rank + r) * in.Dv + c];
    }
  EXPECT_LE(ref::max_error(out, want), kTol);
}

TEST(LinearAttention, LinformerProjectionsAreSeededGaussians) {
  const int64_t rank = 32, Sk = 500;
  std::vector<float> E(rank * Sk), F(rank * Sk), E2(rank * Sk), F2(rank * Sk);
  linformer_projections(rank, Sk, 8, E.data(), F.data());
  linformer_projections(rank, Sk, 8, E2.data(), F2.data());
  EXPECT_EQ(E, E2);
  EXPECT_EQ(F, F2);
  EXPECT_NE(E, F);
  double mean = 0.0, var = 0.0;
  for (float x : E) mean += x / E.size();
  for (float x : E) var += (x - mean) * (x - mean) / E.size();
  EXPECT_LT(std::abs(mean), 0.01);
  EXPECT_NEAR(var, 1.0 / rank, 0.1 / rank);
}

TEST(LinearAttention, NoKeysGivesZeros) {
  const Inputs in(1, 3, 0, 4, 2);
  std::vector<float> out(in.Sq * in.Dv, 7.0f);
  linear_attention_elu(in.q.data(), nullptr, nullptr, 1, 3, 0, 4, 2, false, out.data(), nullptr);
  for (float x : out) EXPECT_EQ(x, 0.0f);
}

TEST(LinearAttention, ThreadCountDoesNotChangeTheResult) {
  const Inputs in(4, 30, 30, 8, 8);
  std::vector<float> W(32 * in.D), a = in.out(), b = in.out();
  favor_features(32, in.D, 1, W.data());
  ThreadPool pool(3);
  favor_attention(in.q.data(), in.k.data(), in.v.data(), 4, 30, 30, 8, 8, W.data(), 32, true, a.data(), nullptr);
  favor_attention(in.q.data(), in.k.data(), in.v.data(), 4, 30, 30, 8, 8, W.data(), 32, true, b.data(), &pool);
  EXPECT_EQ(a, b);
}

// The state and normaliser are float32: large finite inputs that take them past its range are an
// Error naming the arguments and the query, never a silent NaN or inf (or 0 from x / inf).
std::string overflow_message(const std::function<void()>& run) {
  try {
    run();
  } catch (const Error& e) {
    return e.what();
  }
  return "no Error";
}

TEST(LinearAttention, OverflowIsAnErrorNotNaN) {
  const auto filled = [](size_t n, float x) { return std::vector<float>(n, x); };
  std::vector<float> out(3 * 2);
  // elu: phi(q).z near 4 * 1e19 * 5e19 (NaN as inf / inf before).
  auto q = filled(12, 1e19f), k = filled(20, 1e19f), v = filled(10, 0.5f);
  EXPECT_EQ(overflow_message([&] { linear_attention_elu(q.data(), k.data(), v.data(), 1, 3, 5, 4, 2, false, out.data(), nullptr); }),
            "q, k: the normaliser phi(q).z overflows float32 (beyond ±3.4e38) at query 0 of slice 0; scale the inputs down");
  // elu: the state sum_j phi(k_j) v_j overflows (inf before; the true output is 1e38).
  q = filled(12, 0.1f), k = filled(20, 0.1f), v = filled(10, 1e38f);
  EXPECT_EQ(overflow_message([&] { linear_attention_elu(q.data(), k.data(), v.data(), 1, 3, 5, 4, 2, true, out.data(), nullptr); }),
            "q, k, v: the output overflows float32 (beyond ±3.4e38) at query 0 of slice 0; scale the inputs down");
  // FAVOR+: |x'|^2 past float32 makes the exponents inf - inf.
  const Inputs big(2, 3, 5, 4, 2, 1e20f);
  std::vector<float> W(8 * 4), out2(2 * 3 * 2);
  favor_features(8, 4, 0, W.data());
  EXPECT_EQ(overflow_message([&] { favor_attention(big.q.data(), big.k.data(), big.v.data(), 2, 3, 5, 4, 2, W.data(), 8, false, out2.data(), nullptr); })
                .rfind("q, k: the normaliser phi(q).z overflows float32 (beyond ±3.4e38) at query 0 of slice ", 0),
            0u);
}

TEST(LinearAttention, RejectsBadSizes) {
  std::vector<float> x(16);
  EXPECT_THROW(linear_attention_elu(x.data(), x.data(), x.data(), 1, 2, 2, 0, 2, false, x.data(), nullptr), Error);
  EXPECT_THROW(favor_features(0, 4, 0, x.data()), Error);
  EXPECT_THROW(linformer_projections(0, 4, 0, x.data(), x.data()), Error);
}
