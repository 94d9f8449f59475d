// Float64 reference implementations for the tests: the textbook formulas, no tricks.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <vector>

namespace ref {

inline std::vector<float> random(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> x(n);
  for (auto& v : x) v = dist(rng);
  return x;
}

// allowed(b, i, j) and bias(b, i, j) describe the masks; score(b, i, j) the raw score.
struct Row {
  std::vector<double> w;
  bool any = false;
};

inline Row softmax(const std::vector<double>& s, const std::vector<bool>& allowed) {
  Row r;
  r.w.assign(s.size(), 0.0);
  double m = -std::numeric_limits<double>::infinity();
  for (size_t j = 0; j < s.size(); ++j)
    if (allowed[j] && s[j] > m) m = s[j];
  if (!std::isfinite(m)) return r;
  double sum = 0.0;
  for (size_t j = 0; j < s.size(); ++j)
    if (allowed[j]) sum += (r.w[j] = std::exp(s[j] - m));
  for (auto& w : r.w) w /= sum;
  r.any = true;
  return r;
}

// out[b, i, :] = sum_j w_ij v[b, j, :]; weights [b, i, j].
inline void attention(int64_t batch, int64_t Sq, int64_t Sk, int64_t Dv,
                      const std::function<double(int64_t, int64_t, int64_t)>& score,
                      const std::function<bool(int64_t, int64_t, int64_t)>& allowed,
                      const std::vector<float>& v, std::vector<double>& out,
                      std::vector<double>& weights) {
  out.assign(batch * Sq * Dv, 0.0);
  weights.assign(batch * Sq * Sk, 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < Sq; ++i) {
      std::vector<double> s(Sk);
      std::vector<bool> ok(Sk);
      for (int64_t j = 0; j < Sk; ++j) {
        ok[j] = allowed(b, i, j);
        s[j] = ok[j] ? score(b, i, j) : 0.0;
        if (ok[j] && std::isinf(s[j]) && s[j] < 0) ok[j] = false;
      }
      const Row r = softmax(s, ok);
      for (int64_t j = 0; j < Sk; ++j) {
        weights[(b * Sq + i) * Sk + j] = r.w[j];
        for (int64_t c = 0; c < Dv; ++c)
          out[(b * Sq + i) * Dv + c] += r.w[j] * v[(b * Sk + j) * Dv + c];
      }
    }
}

inline double dot(const float* a, const float* b, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// Dense scaled-dot-product attention of q [batch, Sq, D], k [batch, Sk, D], v [batch, Sk, Dv]
// where key j is visible to query i of slice b when allowed(b, i, j); bias(b, i, j) is added.
inline void dot_attention(const std::vector<float>& q, const std::vector<float>& k,
                          const std::vector<float>& v, int64_t batch, int64_t Sq, int64_t Sk,
                          int64_t D, int64_t Dv, double scale,
                          const std::function<bool(int64_t, int64_t, int64_t)>& allowed,
                          const std::function<double(int64_t, int64_t, int64_t)>& bias,
                          std::vector<double>& out, std::vector<double>& weights) {
  attention(
      batch, Sq, Sk, Dv,
      [&](int64_t b, int64_t i, int64_t j) {
        return scale * dot(&q[(b * Sq + i) * D], &k[(b * Sk + j) * D], D) + bias(b, i, j);
      },
      allowed, v, out, weights);
}

// Largest |got - want| / max(1, |want|): relative error, absolute near zero.
inline double max_error(const std::vector<float>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return std::numeric_limits<double>::infinity();
  double worst = 0.0;
  for (size_t t = 0; t < got.size(); ++t) {
    const double e = std::abs(got[t] - want[t]) / std::max(1.0, std::abs(want[t]));
    if (!(e <= worst)) worst = e;  // NaN propagates as worst
  }
  return worst;
}

// Rotary embedding of x [outer, S, inner, D] in place (Su et al.): pair (c0, c1) of the vector at
// position offset + s turns by (offset + s) * base^(-2c/D).
inline void rope(std::vector<double>& x, int64_t outer, int64_t S, int64_t inner, int64_t D,
                 double base, int64_t offset, bool interleaved) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t n = 0; n < inner; ++n)
        for (int64_t c = 0; c < D / 2; ++c) {
          const double angle = static_cast<double>(offset + s) * std::pow(base, -2.0 * c / D);
          const int64_t at = ((o * S + s) * inner + n) * D;
          const int64_t c0 = interleaved ? at + 2 * c : at + c;
          const int64_t c1 = interleaved ? c0 + 1 : c0 + D / 2;
          const double a = x[c0], b = x[c1];
          x[c0] = a * std::cos(angle) - b * std::sin(angle);
          x[c1] = a * std::sin(angle) + b * std::cos(angle);
        }
}

// nn.MultiheadAttention (batch_first, no biases) in double: queries [B, L, E], keys and values
// [B, S, E]. `rotate` may change the projected queries and keys [B, n, E] in place;
// bias(b, h, i, j) is added to the scaled scores. out [B, L, E].
inline void multi_head(const std::vector<float>& query, const std::vector<float>& key,
                       const std::vector<float>& value, int64_t B, int64_t L, int64_t S,
                       int64_t E, int64_t H, const std::vector<float>& in_w,
                       const std::vector<float>& out_w,
                       const std::function<void(std::vector<double>&, int64_t n)>& rotate,
                       const std::function<double(int64_t, int64_t, int64_t, int64_t)>& bias,
                       bool causal, std::vector<double>& out) {
  const auto project = [&](const std::vector<float>& x, int64_t rows, int64_t part) {
    std::vector<double> y(rows * E, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < E; ++o)
        for (int64_t c = 0; c < E; ++c) y[r * E + o] += double(x[r * E + c]) * in_w[(part * E + o) * E + c];
    return y;
  };
  std::vector<double> Q = project(query, B * L, 0), K = project(key, B * S, 1), V = project(value, B * S, 2);
  rotate(Q, L);
  rotate(K, S);
  const int64_t hd = E / H;
  std::vector<double> heads(B * L * E, 0.0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L; ++i) {
        std::vector<double> s(S);
        std::vector<bool> ok(S);
        for (int64_t j = 0; j < S; ++j) {
          double d = 0.0;
          for (int64_t c = 0; c < hd; ++c) d += Q[(b * L + i) * E + h * hd + c] * K[(b * S + j) * E + h * hd + c];
          s[j] = d / std::sqrt(double(hd)) + bias(b, h, i, j);
          ok[j] = !causal || j <= i;
        }
        const Row r = softmax(s, ok);
        for (int64_t j = 0; j < S; ++j)
          for (int64_t c = 0; c < hd; ++c) heads[(b * L + i) * E + h * hd + c] += r.w[j] * V[(b * S + j) * E + h * hd + c];
      }
  out.assign(B * L * E, 0.0);
  for (int64_t r = 0; r < B * L; ++r)
    for (int64_t o = 0; o < E; ++o)
      for (int64_t c = 0; c < E; ++c) out[r * E + o] += heads[r * E + c] * out_w[o * E + c];
}

}  // namespace ref
