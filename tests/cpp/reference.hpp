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

// ---- Broadcasting (numpy semantics, written independently of attnlab::broadcast_to) ----

// Flat index into an operand of shape `operand` (right-aligned against `target`, size-1 and
// missing dimensions broadcast) of the element at flat index `flat` of `target`.
inline int64_t broadcast_index(const std::vector<int64_t>& operand,
                               const std::vector<int64_t>& target, int64_t flat) {
  const size_t n = target.size(), m = operand.size();
  std::vector<int64_t> idx(n);
  for (size_t t = n; t-- > 0;) {
    idx[t] = flat % target[t];
    flat /= target[t];
  }
  int64_t off = 0;
  for (size_t a = 0; a < m; ++a) {
    const int64_t d = operand[a];
    const int64_t i = d == 1 ? 0 : idx[n - m + a];
    off = off * d + i;
  }
  return off;
}

inline int64_t product(const std::vector<int64_t>& s) {
  int64_t p = 1;
  for (int64_t d : s) p *= d;
  return p;
}

// ---- Masked softmax over the last axis ----

// x [batch, Sq, Sk]; allowed(b, i, j) says whether key j is visible, bias(b, i, j) is added
// (may be -inf, which hides the key). A row with no visible key is all zeros.
inline std::vector<double> masked_softmax(
    const std::vector<float>& x, int64_t batch, int64_t Sq, int64_t Sk,
    const std::function<bool(int64_t, int64_t, int64_t)>& allowed,
    const std::function<double(int64_t, int64_t, int64_t)>& bias) {
  std::vector<double> y(static_cast<size_t>(batch * Sq * Sk), 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < Sq; ++i) {
      std::vector<double> s(static_cast<size_t>(Sk));
      std::vector<bool> ok(static_cast<size_t>(Sk));
      for (int64_t j = 0; j < Sk; ++j) {
        ok[j] = allowed(b, i, j);
        s[j] = ok[j] ? x[(b * Sq + i) * Sk + j] + bias(b, i, j) : 0.0;
        if (ok[j] && std::isinf(s[j]) && s[j] < 0) ok[j] = false;
      }
      const Row r = softmax(s, ok);
      for (int64_t j = 0; j < Sk; ++j) y[(b * Sq + i) * Sk + j] = r.w[j];
    }
  return y;
}

// ---- Attention scores a(q, k) ----

// q^T W k with W [Dq, Dk] row-major.
inline double general(const float* q, const float* W, const float* k, int64_t Dq, int64_t Dk) {
  double s = 0.0;
  for (int64_t a = 0; a < Dq; ++a)
    for (int64_t c = 0; c < Dk; ++c) s += static_cast<double>(q[a]) * W[a * Dk + c] * k[c];
  return s;
}

// wv^T tanh(Wq q + Wk k) with Wq [hidden, Dq], Wk [hidden, Dk], wv [hidden].
inline double additive(const float* q, const float* k, const float* Wq, const float* Wk,
                       const float* wv, int64_t hidden, int64_t Dq, int64_t Dk) {
  double s = 0.0;
  for (int64_t h = 0; h < hidden; ++h)
    s += wv[h] * std::tanh(dot(Wq + h * Dq, q, Dq) + dot(Wk + h * Dk, k, Dk));
  return s;
}

// ---- Multi-head attention (PyTorch nn.MultiheadAttention, batch_first, no dropout) ----

// y [rows, out] = x [rows, in] W^T + bias, W [out, in] row-major.
inline std::vector<double> linear(const float* x, int64_t rows, int64_t in, const float* W,
                                  int64_t out, const float* bias) {
  std::vector<double> y(static_cast<size_t>(rows * out));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o)
      y[r * out + o] = dot(x + r * in, W + o * in, in) + (bias ? bias[o] : 0.0);
  return y;
}

struct MhaResult {
  std::vector<double> out;           // [B, L, E]
  std::vector<double> head_weights;  // [B, H, L, S]
  std::vector<double> avg_weights;   // [B, L, S]
};

// allowed(b, h, i, j) and bias(b, h, i, j) describe the masks. A query with no visible key gets
// zero weights, so its output is the output projection's bias. `rotate`, when given, changes the
// projected queries and keys [B, n, E] in place (RoPE).
inline MhaResult multi_head(
    const float* query, const float* key, const float* value, int64_t B, int64_t L, int64_t S,
    int64_t E, int64_t H, const float* in_w, const float* in_b, const float* out_w,
    const float* out_b,
    const std::function<bool(int64_t, int64_t, int64_t, int64_t)>& allowed,
    const std::function<double(int64_t, int64_t, int64_t, int64_t)>& bias,
    const std::function<void(std::vector<double>&, int64_t n)>& rotate = nullptr) {
  const int64_t hd = E / H;
  std::vector<double> Q = linear(query, B * L, E, in_w, E, in_b);
  std::vector<double> K = linear(key, B * S, E, in_w + E * E, E, in_b ? in_b + E : nullptr);
  if (rotate) {
    rotate(Q, L);
    rotate(K, S);
  }
  const std::vector<double> V =
      linear(value, B * S, E, in_w + 2 * E * E, E, in_b ? in_b + 2 * E : nullptr);
  MhaResult r;
  r.head_weights.assign(static_cast<size_t>(B * H * L * S), 0.0);
  r.avg_weights.assign(static_cast<size_t>(B * L * S), 0.0);
  std::vector<double> heads(static_cast<size_t>(B * L * E), 0.0);
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L; ++i) {
        std::vector<double> s(static_cast<size_t>(S));
        std::vector<bool> ok(static_cast<size_t>(S));
        for (int64_t j = 0; j < S; ++j) {
          ok[j] = allowed(b, h, i, j);
          double acc = 0.0;
          for (int64_t c = 0; c < hd; ++c)
            acc += Q[(b * L + i) * E + h * hd + c] * K[(b * S + j) * E + h * hd + c];
          s[j] = ok[j] ? acc * scale + bias(b, h, i, j) : 0.0;
          if (ok[j] && std::isinf(s[j]) && s[j] < 0) ok[j] = false;
        }
        const Row w = softmax(s, ok);
        for (int64_t j = 0; j < S; ++j) {
          r.head_weights[((b * H + h) * L + i) * S + j] = w.w[j];
          r.avg_weights[(b * L + i) * S + j] += w.w[j] / static_cast<double>(H);
          for (int64_t c = 0; c < hd; ++c)
            heads[(b * L + i) * E + h * hd + c] += w.w[j] * V[(b * S + j) * E + h * hd + c];
        }
      }
  r.out.assign(static_cast<size_t>(B * L * E), 0.0);
  for (int64_t row = 0; row < B * L; ++row)
    for (int64_t o = 0; o < E; ++o) {
      double acc = out_b ? out_b[o] : 0.0;
      for (int64_t c = 0; c < E; ++c) acc += heads[row * E + c] * out_w[o * E + c];
      r.out[row * E + o] = acc;
    }
  return r;
}

// ---- Nadaraya-Watson kernel regression ----

enum class Kern { Gaussian, Boxcar, Epanechnikov, Triangular };

inline double kernel(Kern k, double u) {
  switch (k) {
    case Kern::Gaussian: return std::exp(-0.5 * u * u);
    case Kern::Boxcar: return u <= 1.0 ? 1.0 : 0.0;
    case Kern::Epanechnikov: return u < 1.0 ? 1.0 - u * u : 0.0;
    case Kern::Triangular: return u < 1.0 ? 1.0 - u : 0.0;
  }
  return 0.0;
}

// queries [batch, Nq, D], keys [batch, Nk, D], values [batch, Nk, Dv]; w_j = K(|q - k_j| / h)
// normalised (all zero when no key has positive weight). Gaussian weights are normalised in the
// log domain so tiny bandwidths give the nearest neighbour instead of 0/0.
inline void nadaraya_watson(const std::vector<float>& q, const std::vector<float>& k,
                            const std::vector<float>& v, int64_t batch, int64_t Nq, int64_t Nk,
                            int64_t D, int64_t Dv, Kern kern, double h, std::vector<double>& out,
                            std::vector<double>& weights) {
  out.assign(static_cast<size_t>(batch * Nq * Dv), 0.0);
  weights.assign(static_cast<size_t>(batch * Nq * Nk), 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < Nq; ++i) {
      std::vector<double> w(static_cast<size_t>(Nk));
      for (int64_t j = 0; j < Nk; ++j) {
        double d2 = 0.0;
        for (int64_t c = 0; c < D; ++c) {
          const double diff = static_cast<double>(q[(b * Nq + i) * D + c]) - k[(b * Nk + j) * D + c];
          d2 += diff * diff;
        }
        const double u = std::sqrt(d2) / h;
        w[j] = kern == Kern::Gaussian ? -0.5 * u * u : kernel(kern, u);
      }
      if (kern == Kern::Gaussian) {
        w = softmax(w, std::vector<bool>(static_cast<size_t>(Nk), true)).w;
      } else {
        double sum = 0.0;
        for (double x : w) sum += x;
        for (double& x : w) x = sum > 0.0 ? x / sum : 0.0;
      }
      for (int64_t j = 0; j < Nk; ++j) {
        weights[(b * Nq + i) * Nk + j] = w[j];
        for (int64_t c = 0; c < Dv; ++c)
          out[(b * Nq + i) * Dv + c] += w[j] * v[(b * Nk + j) * Dv + c];
      }
    }
}

// ---- Positional encoding ----

// P[i, 2j] = sin(i / 10000^(2j/dim)), P[i, 2j+1] = cos(i / 10000^(2j/dim)).
inline double sinusoidal(int64_t i, int64_t c, int64_t dim) {
  const int64_t two_j = c - c % 2;
  const double angle = static_cast<double>(i) / std::pow(10000.0, static_cast<double>(two_j) / dim);
  return c % 2 == 0 ? std::sin(angle) : std::cos(angle);
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

}  // namespace ref
