// Reformer's LSH attention against a float64 implementation of the same algorithm (buckets,
// windows and outputs), its error against full shared-QK attention as the rounds grow, and its
// bad inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <tuple>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/lsh_attention.hpp"
#include "attnlab/thread_pool.hpp"
#include "reference.hpp"

using namespace attnlab;

namespace {

struct RefLsh {
  std::vector<double> out;        // [batch, S, Dv]
  std::vector<int32_t> buckets;   // [batch, H, S]
  std::vector<int32_t> attended;  // [batch, H, S, W]
};

// The algorithm in float64, written from the paper's description: argmax of [xR, -xR], stable
// sort by bucket, windows of the chunk before and the own chunk, self at -1e5, rounds combined by
// their log-sum-exp.
RefLsh ref_lsh(const std::vector<float>& qk, const std::vector<float>& v, int64_t batch, int64_t S,
               int64_t D, int64_t Dv, const LshParams& p) {
  const int64_t H = p.n_hashes, half = p.n_buckets / 2, L = p.chunk ? p.chunk : S / p.n_buckets;
  const int64_t chunks = S / L, W = chunks > 1 ? 2 * L : L;
  std::vector<float> R(H * D * half);
  lsh_rotations(p, D, R.data());
  RefLsh r;
  r.out.assign(batch * S * Dv, 0.0);
  r.buckets.resize(batch * H * S);
  r.attended.resize(batch * H * S * W);
  for (int64_t b = 0; b < batch; ++b) {
    const float* x = &qk[b * S * D];
    std::vector<double> lse(H * S), outs(H * S * Dv, 0.0);
    for (int64_t h = 0; h < H; ++h) {
      std::vector<int32_t> bucket(S);
      for (int64_t j = 0; j < S; ++j) {
        std::vector<double> y(2 * half);
        for (int64_t c = 0; c < half; ++c) {
          double acc = 0.0;
          for (int64_t d = 0; d < D; ++d) acc += double(x[j * D + d]) * R[(h * D + d) * half + c];
          y[c] = acc;
          y[c + half] = -acc;
        }
        bucket[j] = int32_t(std::max_element(y.begin(), y.end()) - y.begin());
        r.buckets[(b * H + h) * S + j] = bucket[j];
      }
      std::vector<int32_t> order(S);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t c) { return bucket[a] < bucket[c]; });
      for (int64_t t = 0; t < S; ++t) {
        const int64_t i = order[t], c = t / L;
        std::vector<int64_t> keys;
        if (chunks > 1) {
          const int64_t prev = (c + chunks - 1) % chunks;
          for (int64_t u = prev * L; u < prev * L + L; ++u) keys.push_back(order[u]);
        }
        for (int64_t u = c * L; u < c * L + L; ++u) keys.push_back(order[u]);
        std::vector<double> s(W);
        std::vector<bool> ok(W);
        int64_t others = 0;
        for (int64_t w = 0; w < W; ++w) {
          const int64_t j = keys[w];
          ok[w] = !(p.causal && j > i);
          double norm = 0.0;
          for (int64_t d = 0; d < D; ++d) norm += double(x[j * D + d]) * x[j * D + d];
          norm = std::sqrt(norm);
          if (j == i) s[w] = -1e5;
          else s[w] = ref::dot(&x[i * D], &x[j * D], D) / norm / std::sqrt(double(D));
          if (ok[w] && j != i) ++others;
        }
        const ref::Row row = ref::softmax(s, ok);
        double m = -1e300;
        for (int64_t w = 0; w < W; ++w) if (ok[w]) m = std::max(m, s[w]);
        double sum = 0.0;
        for (int64_t w = 0; w < W; ++w) if (ok[w]) sum += std::exp(s[w] - m);
        lse[h * S + i] = m + std::log(sum);
        for (int64_t w = 0; w < W; ++w) {
          const int64_t j = keys[w];
          r.attended[((b * H + h) * S + i) * W + w] = !ok[w] || (j == i && others > 0) ? -1 : int32_t(j);
          for (int64_t c2 = 0; c2 < Dv; ++c2) outs[(h * S + i) * Dv + c2] += row.w[w] * v[(b * S + j) * Dv + c2];
        }
      }
    }
    for (int64_t i = 0; i < S; ++i) {
      double m = -1e300, total = 0.0;
      for (int64_t h = 0; h < H; ++h) m = std::max(m, lse[h * S + i]);
      for (int64_t h = 0; h < H; ++h) total += std::exp(lse[h * S + i] - m);
      for (int64_t h = 0; h < H; ++h)
        for (int64_t c = 0; c < Dv; ++c)
          r.out[(b * S + i) * Dv + c] += std::exp(lse[h * S + i] - m) / total * outs[(h * S + i) * Dv + c];
    }
  }
  return r;
}

// Full shared-QK attention (unit keys, self at -1e5), the limit LSH approximates.
std::vector<double> full_shared_qk(const std::vector<float>& qk, const std::vector<float>& v,
                                   int64_t S, int64_t D, int64_t Dv, bool causal) {
  std::vector<double> out, weights;
  std::vector<double> norm(S);
  for (int64_t j = 0; j < S; ++j) norm[j] = std::sqrt(ref::dot(&qk[j * D], &qk[j * D], D));
  ref::attention(
      1, S, S, Dv,
      [&](int64_t, int64_t i, int64_t j) {
        return i == j ? -1e5 : ref::dot(&qk[i * D], &qk[j * D], D) / norm[j] / std::sqrt(double(D));
      },
      [&](int64_t, int64_t i, int64_t j) { return !causal || j <= i; }, v, out, weights);
  return out;
}

}  // namespace

TEST(LshAttention, MatchesFloat64OfTheSameAlgorithm) {
  for (auto [S, D, nb, nh, chunk, causal] :
       {std::tuple{32, 8, 4, 1, 0, false}, std::tuple{48, 6, 8, 3, 0, true},
        std::tuple{40, 4, 6, 2, 10, false}, std::tuple{16, 8, 2, 4, 16, true},
        std::tuple{24, 5, 12, 2, 12, false}}) {
    const int64_t batch = 2, Dv = 3;
    const auto qk = ref::random(batch * S * D, 1), v = ref::random(batch * S * Dv, 2);
    LshParams p;
    p.n_buckets = nb;
    p.n_hashes = nh;
    p.chunk = chunk;
    p.causal = causal;
    p.seed = 7;
    const int64_t L = lsh_chunk(p, S), W = S / L > 1 ? 2 * L : L;
    std::vector<float> out(batch * S * Dv);
    std::vector<int32_t> buckets(batch * nh * S), attended(batch * nh * S * W);
    lsh_attention(qk.data(), v.data(), batch, S, D, Dv, p, out.data(), buckets.data(),
                  attended.data(), nullptr);
    const RefLsh want = ref_lsh(qk, v, batch, S, D, Dv, p);
    EXPECT_EQ(buckets, want.buckets) << S << " " << nb;
    EXPECT_EQ(attended, want.attended) << S << " " << nb;
    EXPECT_LE(ref::max_error(out, want.out), 1e-5) << S << " " << nb;
  }
}

// Shared query-keys whose |x|^2 overflows (1e20) or underflows (1e-25) float32, and queries whose
// scores do (2e38): the same buckets, windows and outputs as float64. Before, such keys were
// zeroed (every score 0: a plain average) and such rows were NaN.
TEST(LshAttention, HugeAndTinyInputsMatchFloat64) {
  const int64_t batch = 2, S = 32, D = 8, Dv = 3;
  const auto base = ref::random(batch * S * D, 1), v = ref::random(batch * S * Dv, 2);
  for (const float mag : {1e-25f, 1e20f, 2e38f}) {
    std::vector<float> qk(base);
    // 2e38: entries in [1e38, 2e38], so |qk_i| and the scores pass float32 (about 4e38).
    for (auto& x : qk) x = mag == 2e38f ? mag * (0.75f + 0.25f * x) : mag * x;
    for (const bool causal : {false, true}) {
      LshParams p;
      p.n_buckets = 4;
      p.n_hashes = 2;
      p.causal = causal;
      p.seed = 5;
      const int64_t W = 2 * (S / 4);
      std::vector<float> out(batch * S * Dv);
      std::vector<int32_t> buckets(batch * 2 * S), attended(batch * 2 * S * W);
      lsh_attention(qk.data(), v.data(), batch, S, D, Dv, p, out.data(), buckets.data(),
                    attended.data(), nullptr);
      const RefLsh want = ref_lsh(qk, v, batch, S, D, Dv, p);
      EXPECT_EQ(buckets, want.buckets) << mag;
      EXPECT_EQ(attended, want.attended) << mag;
      for (float o : out) ASSERT_TRUE(std::isfinite(o)) << mag;
      EXPECT_LE(ref::max_error(out, want.out), 1e-5) << mag << " causal " << causal;
    }
  }
}

TEST(LshAttention, ThreadCountInvariance) {
  // Without the optional outputs, on 3 threads: the same output, bit for bit.
  const int64_t batch = 3, S = 48, D = 6, Dv = 5;
  const auto qk = ref::random(batch * S * D, 1), v = ref::random(batch * S * Dv, 2);
  LshParams p;
  p.n_buckets = 8;
  p.n_hashes = 3;
  p.causal = true;
  std::vector<float> one(batch * S * Dv), three(one.size());
  lsh_attention(qk.data(), v.data(), batch, S, D, Dv, p, one.data(), nullptr, nullptr, nullptr);
  ThreadPool pool(3);
  lsh_attention(qk.data(), v.data(), batch, S, D, Dv, p, three.data(), nullptr, nullptr, &pool);
  EXPECT_EQ(one, three);
}

TEST(LshAttention, CausalFirstTokenSeesOnlyItself) {
  const int64_t S = 8, D = 4, Dv = 2;
  const auto qk = ref::random(S * D, 3), v = ref::random(S * Dv, 4);
  LshParams p;
  p.n_buckets = 2;
  p.causal = true;
  std::vector<float> out(S * Dv);
  lsh_attention(qk.data(), v.data(), 1, S, D, Dv, p, out.data(), nullptr, nullptr, nullptr);
  EXPECT_FLOAT_EQ(out[0], v[0]);
  EXPECT_FLOAT_EQ(out[1], v[1]);
}

// The error against full attention falls as rounds are added (Kitaev et al., table 2's trend).
// Clustered tokens (16 directions plus noise, as similar tokens in text): each query's large
// weights fall on its cluster, which a round may split across buckets.
TEST(LshAttention, ErrorFallsAsHashesGrow) {
  const int64_t S = 256, D = 16, Dv = 8;
  std::vector<double> curve;
  for (int64_t nh : {1, 2, 4, 8}) {
    double total = 0.0;
    for (uint32_t seed = 0; seed < 4; ++seed) {
      const auto centers = ref::random(16 * D, 100 + seed), noise = ref::random(S * D, 200 + seed, -0.3f, 0.3f);
      std::vector<float> qk(S * D);
      for (int64_t j = 0; j < S; ++j)
        for (int64_t d = 0; d < D; ++d) qk[j * D + d] = 8.0f * (centers[(j * 7 % 16) * D + d] + noise[j * D + d]);
      // Values of a cluster alike too, so full attention's output is far from the mean value.
      const auto vc = ref::random(16 * Dv, 300 + seed), vn = ref::random(S * Dv, 400 + seed, -0.2f, 0.2f);
      std::vector<float> v(S * Dv);
      for (int64_t j = 0; j < S; ++j)
        for (int64_t c = 0; c < Dv; ++c) v[j * Dv + c] = vc[(j * 7 % 16) * Dv + c] + vn[j * Dv + c];
      LshParams p;
      p.n_buckets = 16;
      p.n_hashes = nh;
      p.seed = seed;
      std::vector<float> out(S * Dv);
      lsh_attention(qk.data(), v.data(), 1, S, D, Dv, p, out.data(), nullptr, nullptr, nullptr);
      const auto exact = full_shared_qk(qk, v, S, D, Dv, false);
      double err = 0.0, ref_norm = 0.0;
      for (size_t t = 0; t < out.size(); ++t) {
        err += (out[t] - exact[t]) * (out[t] - exact[t]);
        ref_norm += exact[t] * exact[t];
      }
      total += std::sqrt(err / ref_norm);
    }
    curve.push_back(total / 4);
  }
  RecordProperty("relative_error_nhashes_1_2_4_8",
                 std::to_string(curve[0]) + " " + std::to_string(curve[1]) + " " +
                     std::to_string(curve[2]) + " " + std::to_string(curve[3]));
  std::printf("LSH relative error vs full attention, nHashes 1 2 4 8: %.4f %.4f %.4f %.4f\n",
              curve[0], curve[1], curve[2], curve[3]);
  for (size_t t = 1; t < curve.size(); ++t) EXPECT_LT(curve[t], curve[t - 1]) << t;
  EXPECT_LT(curve[3], 0.7 * curve[0]);  // measured 0.390 0.288 0.247 0.241
}

TEST(LshAttention, RejectsBadBucketsAndChunks) {
  const std::vector<float> x(12 * 4);
  std::vector<float> out(12 * 4);
  const auto run = [&](int64_t nb, int64_t nh, int64_t chunk) {
    LshParams p;
    p.n_buckets = nb;
    p.n_hashes = nh;
    p.chunk = chunk;
    lsh_attention(x.data(), x.data(), 1, 12, 4, 4, p, out.data(), nullptr, nullptr, nullptr);
  };
  EXPECT_THROW(run(3, 1, 0), Error);   // odd
  EXPECT_THROW(run(8, 1, 0), Error);   // 8 does not divide 12
  EXPECT_THROW(run(4, 0, 0), Error);   // no rounds
  EXPECT_THROW(run(4, 1, 5), Error);   // chunk does not divide 12
  EXPECT_NO_THROW(run(8, 1, 6));       // an explicit chunk lifts the divisibility of nBuckets
  EXPECT_NO_THROW(run(4, 2, 0));
}
