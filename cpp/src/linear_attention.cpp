#include "attnlab/linear_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
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

// The first query row of a slice whose float32 pass is not finite (row -1: none). The state
// sum_j phi(k_j) v_j^T and normaliser z are float32: large finite inputs take phi(q).z past its
// range (inf, or inf / inf = NaN in the output), though the true output, a weighted mean of v, is
// finite. `normaliser`: phi(q_i).z itself overflowed (q and k alone), else the output did.
struct Overflow {
  int64_t row = -1;
  bool normaliser = false;
};

// Throws the Error for slice b's overflow, if any. Out of line, as the slice functions below.
[[gnu::noinline]] void require_no_overflow(const Overflow& o, int64_t b) {
  require(o.row < 0, [&] {
    return std::string(o.normaliser ? "q, k: the normaliser phi(q).z" : "q, k, v: the output") +
           " overflows float32 (beyond ±3.4e38) at query " + std::to_string(o.row) + " of slice " +
           std::to_string(b) + "; scale the inputs down";
  });
}

// One batch slice of kernelised attention, given the key features fk [Sk, m]; phi_q(q_i, f)
// makes the query features row by row. Buffers: state [m, Dv], z [m], f [m]. Stops at the first
// row that overflows, and returns it.
template <class PhiQ>
Overflow feature_attention(const float* q, const float* fk, const float* v, int64_t Sq, int64_t Sk,
                       int64_t D, int64_t m, int64_t Dv, bool causal, const PhiQ& phi_q,
                       float* state, float* z, float* f, float* out) {
  std::memset(state, 0, sizeof(float) * static_cast<size_t>(m * Dv));
  std::memset(z, 0, sizeof(float) * static_cast<size_t>(m));
  const auto add_key = [&](int64_t j) {
    const float* fj = fk + j * m;
    kernels::axpy(1.0f, fj, z, m);
    for (int64_t c = 0; c < m; ++c) kernels::axpy(fj[c], v + j * Dv, state + c * Dv, Dv);
  };
  int64_t added = 0;
  if (!causal) {
    for (; added < Sk; ++added) add_key(added);
  }
  for (int64_t i = 0; i < Sq; ++i) {
    for (; causal && added < Sk && added <= i; ++added) add_key(added);
    float* oi = out + i * Dv;
    std::memset(oi, 0, sizeof(float) * static_cast<size_t>(Dv));
    phi_q(q + i * D, f);
    const float den = kernels::dot(f, z, m);
    // NaN too: FAVOR+'s exponents w.x' - |x'|^2 / 2 give inf - inf once |x'|^2 passes float32.
    if (!std::isfinite(den)) return {i, true};
    if (den <= 0.0f) continue;  // no key seen (Sk = 0) or every feature underflowed: output 0
    for (int64_t c = 0; c < m; ++c) kernels::axpy(f[c], state + c * Dv, oi, Dv);
    // Divided, not scaled by 1 / den: den can be subnormal (FAVOR+ features far apart, inputs
    // ~1e4; found by fuzz_seeded_forms), whose reciprocal is inf; the ratio itself is a weighted
    // mean of v, finite unless the state overflowed.
    for (int64_t c = 0; c < Dv; ++c) oi[c] /= den;
    if (kernels::find_nonfinite(oi, Dv, false) >= 0) return {i, false};
  }
  return {};
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

// The per-slice functions below are kept out of line and use a `work` buffer their caller owns:
// with Emscripten's JavaScript exception handling, every call made while a destructor is pending
// in the same frame goes through a JS trampoline (~50 ns), which on each dot and axpy would
// dominate the cost.

// work: Sk * D + D * Dv + 2 * D floats.
[[gnu::noinline]] Overflow elu_slice(const float* q, const float* k, const float* v, int64_t Sq,
                                 int64_t Sk, int64_t D, int64_t Dv, bool causal, float* work,
                                 float* out) {
  float *fk = work, *state = fk + Sk * D, *z = state + D * Dv, *f = z + D;
  elu_plus_one(k, fk, Sk * D);
  return feature_attention(q, fk, v, Sq, Sk, D, D, Dv, causal,
                    [&](const float* x, float* fx) { elu_plus_one(x, fx, D); }, state, z, f, out);
}

// work: Sk * m + m * Dv + 2 * m + D floats.
[[gnu::noinline]] Overflow favor_slice(const float* q, const float* k, const float* v, int64_t Sq,
                                   int64_t Sk, int64_t D, int64_t Dv, const float* W, int64_t m,
                                   bool causal, float* work, float* out) {
  float *fk = work, *state = fk + Sk * m, *z = state + m * Dv, *f = z + m, *xs = f + m;
  // Keys share one shift, the largest exponent of the slice, so no feature overflows.
  float shift = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < Sk; ++j) {
    favor_exponents(k + j * D, W, m, D, xs, fk + j * m);
    shift = std::max(shift, kernels::max(fk + j * m, m));
  }
  for (int64_t t = 0; t < Sk * m; ++t) fk[t] = std::exp(fk[t] - shift);
  // Each query gets its own shift: a per-row factor, which cancels in the ratio.
  const auto phi_q = [&](const float* x, float* fx) {
    favor_exponents(x, W, m, D, xs, fx);
    const float row_shift = kernels::max(fx, m);
    for (int64_t r = 0; r < m; ++r) fx[r] = std::exp(fx[r] - row_shift);
  };
  return feature_attention(q, fk, v, Sq, Sk, D, m, Dv, causal, phi_q, state, z, f, out);
}

// The projected keys E k [rank, D] and values F v [rank, Dv], then plain attention over them.
// work: rank * (D + Dv + 1) floats.
[[gnu::noinline]] void linformer_slice(const float* q, const float* k, const float* v,
                                       int64_t Sq, int64_t Sk, int64_t D, int64_t Dv,
                                       const float* E, const float* F, int64_t rank,
                                       const MaskSet& no_masks, float* work, float* out) {
  float *kp = work, *vp = kp + rank * D;
  std::memset(kp, 0, sizeof(float) * static_cast<size_t>(rank * (D + Dv)));
  for (int64_t r = 0; r < rank; ++r) {
    for (int64_t j = 0; j < Sk; ++j) {
      kernels::axpy(E[r * Sk + j], k + j * D, kp + r * D, D);
      kernels::axpy(F[r * Sk + j], v + j * Dv, vp + r * Dv, Dv);
    }
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const AttentionSlice sl{q, D, kp, D, vp, Dv, out, Dv, nullptr, 0};  // no masks to index
  // One slice on this thread (the caller already splits over the batch).
  attend_slices(1, [&](int64_t) { return sl; }, Sq, rank, D, Dv, scale, no_masks, nullptr);
}

}  // namespace

void linear_attention_elu(const float* q, const float* k, const float* v, int64_t batch,
                          int64_t Sq, int64_t Sk, int64_t D, int64_t Dv, bool causal, float* out,
                          ThreadPool* pool) {
  check_dims(batch, Sq, Sk, D, Dv, D, "D");
  parallel_for(pool, batch, [&](int64_t b) {
    std::vector<float> work(static_cast<size_t>(Sk * D + D * Dv + 2 * D));
    require_no_overflow(elu_slice(q + b * Sq * D, k + b * Sk * D, v + b * Sk * Dv, Sq, Sk, D, Dv,
                                  causal, work.data(), out + b * Sq * Dv),
                        b);
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
    std::vector<float> work(static_cast<size_t>(Sk * m + m * Dv + 2 * m + D));
    require_no_overflow(favor_slice(q + b * Sq * D, k + b * Sk * D, v + b * Sk * Dv, Sq, Sk, D,
                                    Dv, W, m, causal, work.data(), out + b * Sq * Dv),
                        b);
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
  const MaskSet no_masks;
  parallel_for(pool, batch, [&](int64_t b) {
    std::vector<float> work(static_cast<size_t>(rank * (D + Dv + 1)));
    linformer_slice(q + b * Sq * D, k + b * Sk * D, v + b * Sk * Dv, Sq, Sk, D, Dv, E, F, rank,
                    no_masks, work.data(), out + b * Sq * Dv);
  });
}

LinearMethod parse_linear_method(const std::string& name) {
  if (name == "elu") return LinearMethod::Elu;
  if (name == "favor+") return LinearMethod::Favor;
  if (name == "linformer") return LinearMethod::Linformer;
  throw Error("method: expected 'elu', 'favor+' or 'linformer', got '" + name + "'");
}

void linear_attention(const float* q, const float* k, const float* v, int64_t batch, int64_t Sq,
                      int64_t Sk, int64_t D, int64_t Dv, const LinearSpec& spec, float* out,
                      ThreadPool* pool) {
  if (spec.method == LinearMethod::Elu) {
    linear_attention_elu(q, k, v, batch, Sq, Sk, D, Dv, spec.causal, out, pool);
  } else if (spec.method == LinearMethod::Favor) {
    check_dims(batch, Sq, Sk, D, Dv, spec.features, "features");
    std::vector<float> W(static_cast<size_t>(spec.features * D));
    favor_features(spec.features, D, spec.seed, W.data());
    favor_attention(q, k, v, batch, Sq, Sk, D, Dv, W.data(), spec.features, spec.causal, out, pool);
  } else {
    check_dims(batch, Sq, Sk, D, Dv, spec.rank, "rank");
    const float *E = spec.E, *F = spec.F;
    std::vector<float> drawn;
    if (!E || !F) {
      drawn.resize(static_cast<size_t>(2 * spec.rank * Sk));
      linformer_projections(spec.rank, Sk, spec.seed, drawn.data(), drawn.data() + spec.rank * Sk);
      E = drawn.data();
      F = drawn.data() + spec.rank * Sk;
    }
    linformer_attention(q, k, v, batch, Sq, Sk, D, Dv, E, F, spec.rank, out, pool);
  }
}

}  // namespace attnlab
