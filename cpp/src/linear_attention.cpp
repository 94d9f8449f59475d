#include "attnlab/linear_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "attnlab/attention.hpp"
#include "attnlab/error.hpp"
#include "attnlab/random.hpp"
#include "kernels.hpp"

namespace attnlab {
namespace {

void check_dims(int64_t batch, int64_t Sq, int64_t Sk, int64_t D, int64_t Dv, int64_t m,
                const char* m_name) {
  require(batch >= 0 && Sq >= 0 && Sk >= 0 && D >= 1 && Dv >= 1 && m >= 1, [&] {
    return "q, k, v: expected non-negative lengths and positive sizes, got batch=" +
           std::to_string(batch) + " Sq=" + std::to_string(Sq) + " Sk=" + std::to_string(Sk) +
           " D=" + std::to_string(D) + " Dv=" + std::to_string(Dv) + " " + m_name + "=" +
           std::to_string(m);
  });
}

// One batch slice of kernelised attention, given the key features fk [Sk, m]; the query
// features are made row by row by phi_q(q_i, f). See the header for the formula.
void feature_attention(const float* q, const float* fk, const float* v, int64_t Sq, int64_t Sk,
                       int64_t D, int64_t m, int64_t Dv, bool causal,
                       const std::function<void(const float*, float*)>& phi_q, float* out) {
  std::vector<float> S(static_cast<size_t>(m * Dv), 0.0f), z(static_cast<size_t>(m), 0.0f),
      f(static_cast<size_t>(m));
  const auto add_key = [&](int64_t j) {
    const float* fj = fk + j * m;
    kernels::axpy(1.0f, fj, z.data(), m);
    for (int64_t c = 0; c < m; ++c) kernels::axpy(fj[c], v + j * Dv, S.data() + c * Dv, Dv);
  };
  int64_t added = 0;
  if (!causal) {
    for (; added < Sk; ++added) add_key(added);
  }
  for (int64_t i = 0; i < Sq; ++i) {
    for (; causal && added < Sk && added <= i; ++added) add_key(added);
    float* oi = out + i * Dv;
    std::memset(oi, 0, sizeof(float) * static_cast<size_t>(Dv));
    phi_q(q + i * D, f.data());
    const float den = kernels::dot(f.data(), z.data(), m);
    if (den <= 0.0f) continue;  // no key seen (Sk = 0) or every feature underflowed: output 0
    for (int64_t c = 0; c < m; ++c) kernels::axpy(f[c], S.data() + c * Dv, oi, Dv);
    kernels::scale(oi, 1.0f / den, Dv);
  }
}

void elu_plus_one(const float* x, float* f, int64_t n) {
  for (int64_t c = 0; c < n; ++c) f[c] = x[c] > 0.0f ? x[c] + 1.0f : std::exp(x[c]);
}

// a[r] = w_r . x' - |x'|^2 / 2 with x' = x / D^(1/4): the log of FAVOR+'s feature r, before the
// 1/sqrt(m) factor (it cancels between numerator and denominator, as do the shifts below).
void favor_exponents(const float* x, const float* W, int64_t m, int64_t D, float* xs, float* a) {
  const float c = 1.0f / std::pow(static_cast<float>(D), 0.25f);
  for (int64_t t = 0; t < D; ++t) xs[t] = x[t] * c;
  const float half_norm = 0.5f * kernels::dot(xs, xs, D);
  for (int64_t r = 0; r < m; ++r) a[r] = kernels::dot(W + r * D, xs, D) - half_norm;
}

}  // namespace

void linear_attention_elu(const float* q, const float* k, const float* v, int64_t batch,
                          int64_t Sq, int64_t Sk, int64_t D, int64_t Dv, bool causal, float* out,
                          ThreadPool* pool) {
  check_dims(batch, Sq, Sk, D, Dv, D, "D");
  parallel_for(pool, batch, [&](int64_t b) {
    std::vector<float> fk(static_cast<size_t>(Sk * D));
    elu_plus_one(k + b * Sk * D, fk.data(), Sk * D);
    feature_attention(q + b * Sq * D, fk.data(), v + b * Sk * Dv, Sq, Sk, D, D, Dv, causal,
                      [&](const float* x, float* f) { elu_plus_one(x, f, D); },
                      out + b * Sq * Dv);
  });
}

void favor_features(int64_t m, int64_t D, uint64_t seed, float* W) {
  require(m >= 1 && D >= 1, [&] {
    return "features: expected m >= 1 and D >= 1, got m=" + std::to_string(m) +
           " D=" + std::to_string(D);
  });
  Rng rng(seed);
  std::vector<double> G(static_cast<size_t>(D * D));
  for (int64_t r0 = 0; r0 < m; r0 += D) {
    for (double& x : G) x = rng.normal();
    // Modified Gram-Schmidt on the rows: Gaussian rows are independent with probability 1.
    for (int64_t r = 0; r < D; ++r) {
      double* gr = G.data() + r * D;
      for (int64_t p = 0; p < r; ++p) {
        const double* gp = G.data() + p * D;
        double d = 0.0;
        for (int64_t c = 0; c < D; ++c) d += gr[c] * gp[c];
        for (int64_t c = 0; c < D; ++c) gr[c] -= d * gp[c];
      }
      double norm = 0.0;
      for (int64_t c = 0; c < D; ++c) norm += gr[c] * gr[c];
      norm = std::sqrt(norm);
      for (int64_t c = 0; c < D; ++c) gr[c] /= norm;
    }
    for (int64_t r = 0; r < D && r0 + r < m; ++r) {
      double length = 0.0;
      for (int64_t c = 0; c < D; ++c) {
        const double g = rng.normal();
        length += g * g;
      }
      length = std::sqrt(length);
      for (int64_t c = 0; c < D; ++c) W[(r0 + r) * D + c] = static_cast<float>(G[r * D + c] * length);
    }
  }
}

void favor_attention(const float* q, const float* k, const float* v, int64_t batch, int64_t Sq,
                     int64_t Sk, int64_t D, int64_t Dv, const float* W, int64_t m, bool causal,
                     float* out, ThreadPool* pool) {
  check_dims(batch, Sq, Sk, D, Dv, m, "features");
  parallel_for(pool, batch, [&](int64_t b) {
    std::vector<float> fk(static_cast<size_t>(Sk * m)), xs(static_cast<size_t>(D));
    // Keys share one shift, the largest exponent of the slice, so no feature overflows.
    float shift = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < Sk; ++j) {
      favor_exponents(k + (b * Sk + j) * D, W, m, D, xs.data(), fk.data() + j * m);
      shift = std::max(shift, kernels::max(fk.data() + j * m, m));
    }
    for (float& a : fk) a = std::exp(a - shift);
    // Each query gets its own shift: a per-row factor, which cancels in the ratio.
    const auto phi_q = [&](const float* x, float* f) {
      favor_exponents(x, W, m, D, xs.data(), f);
      const float row_shift = kernels::max(f, m);
      for (int64_t r = 0; r < m; ++r) f[r] = std::exp(f[r] - row_shift);
    };
    feature_attention(q + b * Sq * D, fk.data(), v + b * Sk * Dv, Sq, Sk, D, m, Dv, causal, phi_q,
                      out + b * Sq * Dv);
  });
}

void linformer_projections(int64_t rank, int64_t Sk, uint64_t seed, float* E, float* F) {
  require(rank >= 1 && Sk >= 0, [&] {
    return "rank: expected an integer >= 1, got " + std::to_string(rank);
  });
  Rng rng(seed);
  const double sd = 1.0 / std::sqrt(static_cast<double>(rank));
  for (int64_t t = 0; t < rank * Sk; ++t) E[t] = static_cast<float>(sd * rng.normal());
  for (int64_t t = 0; t < rank * Sk; ++t) F[t] = static_cast<float>(sd * rng.normal());
}

void linformer_attention(const float* q, const float* k, const float* v, int64_t batch,
                         int64_t Sq, int64_t Sk, int64_t D, int64_t Dv, const float* E,
                         const float* F, int64_t rank, float* out, ThreadPool* pool) {
  check_dims(batch, Sq, Sk, D, Dv, rank, "rank");
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const MaskSet no_masks;
  parallel_for(pool, batch, [&](int64_t b) {
    // The projected keys E k [rank, D] and values F v [rank, Dv], then plain attention over them.
    std::vector<float> kp(static_cast<size_t>(rank * D), 0.0f), vp(static_cast<size_t>(rank * Dv), 0.0f),
        scratch(static_cast<size_t>(rank));
    for (int64_t r = 0; r < rank; ++r) {
      for (int64_t j = 0; j < Sk; ++j) {
        kernels::axpy(E[r * Sk + j], k + (b * Sk + j) * D, kp.data() + r * D, D);
        kernels::axpy(F[r * Sk + j], v + (b * Sk + j) * Dv, vp.data() + r * Dv, Dv);
      }
    }
    const AttentionSlice sl{q + b * Sq * D, D, kp.data(), D, vp.data(), Dv,
                            out + b * Sq * Dv, Dv, nullptr, b};
    attend_slice(sl, 0, Sq, rank, D, Dv, scale, no_masks, scratch.data());
  });
}

}  // namespace attnlab
