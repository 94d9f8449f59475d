// Float64 reference implementations for the tests: the textbook formulas, no tricks.
#pragma once
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

}  // namespace ref
