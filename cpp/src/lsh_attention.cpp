#include "attnlab/lsh_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/random.hpp"
#include "attnlab/softmax.hpp"
#include "kernels.hpp"

namespace attnlab {
namespace {

// A query of norm up to this scores in float32 without overflow (a score, and each partial sum of
// it, is at most |qk_i|: the keys are unit vectors).
constexpr float kMaxFastNorm = 1e38f;

void check_params(const LshParams& p) {
  require(p.n_buckets >= 2 && p.n_buckets % 2 == 0, [&] {
    return "nBuckets: expected an even integer >= 2 (buckets come in +/- pairs of rotated axes), got " +
           std::to_string(p.n_buckets);
  });
  require(p.n_hashes >= 1, [&] {
    return "nHashes: expected an integer >= 1, got " + std::to_string(p.n_hashes);
  });
}

// Query i's row of one round in double precision, for a query whose scores float32 may not hold
// (|qk_i| near or past 3.4e38: q.k +inf, or inf - inf = NaN), as the fused kernel's exact_row.
[[gnu::noinline]] double lsh_exact_row(const float* qk, const float* kn, const float* v, int64_t D, int64_t Dv,
                     double scale, bool causal, int64_t i, const int32_t* keys, int64_t W,
                     float* out) {
  std::unique_ptr<double[]> buf(new double[W + Dv]());
  double *s = buf.get(), *o = s + W;
  const float* qi = qk + i * D;
  for (int64_t w = 0; w < W; ++w) {
    const int64_t j = keys[w];
    double dot = 0.0;
    for (int64_t c = 0; c < D && j != i; ++c) dot += static_cast<double>(qi[c]) * kn[j * D + c];
    s[w] = causal && j > i ? -HUGE_VAL : j == i ? kLshSelfScore : scale * dot;
  }
  double m;  // finite: the window holds query i's own key
  const double sum = exp_shift_row(s, W, &m);
  for (int64_t w = 0; w < W; ++w)
    if (s[w] != 0.0)
      for (int64_t c = 0; c < Dv; ++c) o[c] += s[w] * v[keys[w] * Dv + c];
  for (int64_t c = 0; c < Dv; ++c) out[c] = static_cast<float>(o[c] / sum);
  return m + std::log(sum);
}

// Query i's row in one round: `keys` [W] the positions in its window (the chunk before, then its
// own). s [W] scratch; out [Dv] the round's output; returns the log of the softmax denominator.
// `exact`: |qk_i| may take a score past float32 (each score is at most |qk_i|, Cauchy-Schwarz
// against a unit key, and so is each partial sum): the row in double instead.
// Kept out of line (Emscripten's exception trampolines, as sparse_row).
[[gnu::noinline]] double lsh_row(const float* qk, const float* kn, const float* v, int64_t D,
                                 int64_t Dv, float scale, bool causal, bool exact, int64_t i,
                                 const int32_t* keys, int64_t W, float* s, float* out,
                                 int32_t* seen) {
  const float* qi = qk + i * D;
  int64_t others = 0;
  for (int64_t w = 0; w < W; ++w) {
    const int64_t j = keys[w];
    if (causal && j > i) {
      s[w] = -std::numeric_limits<float>::infinity();
    } else if (j == i) {
      s[w] = kLshSelfScore;
    } else {
      s[w] = exact ? 0.0f : scale * kernels::dot(qi, kn + j * D, D);
      ++others;
    }
  }
  if (seen) {
    for (int64_t w = 0; w < W; ++w) {
      const bool hidden = (causal && keys[w] > i) || (keys[w] == i && others > 0);
      seen[w] = hidden ? -1 : keys[w];
    }
  }
  if (exact) return lsh_exact_row(qk, kn, v, D, Dv, scale, causal, i, keys, W, out);
  const float m = kernels::max(s, W);  // finite: the window holds query i's own key
  const float sum = kernels::exp_shift_sum(s, m, W);
  std::memset(out, 0, sizeof(float) * static_cast<size_t>(Dv));
  for (int64_t w = 0; w < W; ++w) {
    if (s[w] != 0.0f) kernels::axpy(s[w] / sum, v + keys[w] * Dv, out, Dv);
  }
  return static_cast<double>(m) + std::log(static_cast<double>(sum));
}

// One round of one batch slice: hash, counting sort by bucket (stable, so ties keep position
// order), then every query's window. rounds_out [S, Dv] and lse [S] by original position.
// work: S * 2 + n_buckets + 1 ints (buckets, order, counts) and 2 * chunk floats.
[[gnu::noinline]] void lsh_round(const float* qk, const float* kn, const float* v, int64_t S,
                                 int64_t D, int64_t Dv, const float* R, const LshParams& p,
                                 int64_t L, const float* norm, int32_t* bucket, int32_t* order,
                                 int32_t* counts, float* s, float* rounds_out, double* lse,
                                 int32_t* attended) {
  LshParams one = p;
  one.n_hashes = 1;
  lsh_hash(kn, S, D, R, one, bucket);  // the unit keys: the same buckets, and no overflow
  std::fill(counts, counts + p.n_buckets + 1, 0);
  for (int64_t j = 0; j < S; ++j) ++counts[bucket[j] + 1];
  for (int64_t c = 0; c < p.n_buckets; ++c) counts[c + 1] += counts[c];
  for (int64_t j = 0; j < S; ++j) order[counts[bucket[j]]++] = static_cast<int32_t>(j);

  const int64_t chunks = S / L, W = chunks > 1 ? 2 * L : L;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  std::vector<int32_t> window(static_cast<size_t>(W));
  for (int64_t c = 0; c < chunks; ++c) {
    const int64_t prev = (c + chunks - 1) % chunks;
    if (chunks > 1) std::copy(order + prev * L, order + prev * L + L, window.begin());
    std::copy(order + c * L, order + c * L + L, window.begin() + (W - L));
    for (int64_t t = c * L; t < c * L + L; ++t) {
      const int64_t i = order[t];
      lse[i] = lsh_row(qk, kn, v, D, Dv, scale, p.causal, !(norm[i] <= kMaxFastNorm), i, window.data(), W, s,
                       rounds_out + i * Dv, attended ? attended + i * W : nullptr);
    }
  }
}

}  // namespace

int64_t lsh_chunk(const LshParams& p, int64_t S) {
  check_params(p);
  if (p.chunk == 0) {
    require(S % p.n_buckets == 0, [&] {
      return "nBuckets: expected a divisor of the sequence length " + std::to_string(S) +
             " (chunks of S / nBuckets tokens), got " + std::to_string(p.n_buckets) +
             "; or give chunkSize";
    });
    return S / p.n_buckets;
  }
  require(p.chunk >= 1 && S % p.chunk == 0, [&] {
    return "chunkSize: expected a divisor of the sequence length " + std::to_string(S) + ", got " +
           std::to_string(p.chunk);
  });
  return p.chunk;
}

void lsh_rotations(const LshParams& p, int64_t D, float* R) {
  check_params(p);
  Rng rng(p.seed);
  for (int64_t t = 0, n = p.n_hashes * D * (p.n_buckets / 2); t < n; ++t) {
    R[t] = static_cast<float>(rng.normal());
  }
}

void lsh_hash(const float* x, int64_t S, int64_t D, const float* R, const LshParams& p,
              int32_t* buckets) {
  check_params(p);
  const int64_t half = p.n_buckets / 2;
  std::vector<float> proj(static_cast<size_t>(half));
  for (int64_t r = 0; r < p.n_hashes; ++r) {
    const float* Rr = R + r * D * half;
    for (int64_t j = 0; j < S; ++j) {
      // x R as a sum of R's rows, then argmax over [x R, -x R] (first index on ties).
      std::fill(proj.begin(), proj.end(), 0.0f);
      for (int64_t c = 0; c < D; ++c) kernels::axpy(x[j * D + c], Rr + c * half, proj.data(), half);
      int64_t best = 0;
      float top = proj[0];
      for (int64_t b = 1; b < 2 * half; ++b) {
        const float y = b < half ? proj[b] : -proj[b - half];
        if (y > top) top = y, best = b;
      }
      buckets[r * S + j] = static_cast<int32_t>(best);
    }
  }
}

void lsh_attention(const float* qk, const float* v, int64_t batch, int64_t S, int64_t D,
                   int64_t Dv, const LshParams& p, float* out, int32_t* buckets,
                   int32_t* attended, ThreadPool* pool) {
  require(batch >= 0 && S >= 1 && D >= 1 && Dv >= 1, [&] {
    return "qk, v: expected batch >= 0, S >= 1 and feature sizes >= 1, got batch=" +
           std::to_string(batch) + " S=" + std::to_string(S) + " D=" + std::to_string(D) +
           " Dv=" + std::to_string(Dv);
  });
  const int64_t L = lsh_chunk(p, S), H = p.n_hashes, W = S / L > 1 ? 2 * L : L;
  std::vector<float> R(static_cast<size_t>(H * D * (p.n_buckets / 2)));
  lsh_rotations(p, D, R.data());
  // Unit keys, then each (slice, round), then the rounds' combination per slice.
  std::vector<float> kn(static_cast<size_t>(batch * S * D)), norm(static_cast<size_t>(batch * S));
  parallel_for(pool, batch * S, [&](int64_t j) {
    const float* x = qk + j * D;
    const float n2 = kernels::dot(x, x, D);
    if (n2 >= std::numeric_limits<float>::min() && n2 < std::numeric_limits<float>::infinity()) {
      norm[j] = std::sqrt(n2);
      for (int64_t c = 0; c < D; ++c) kn[j * D + c] = x[c] / norm[j];
    } else {
      // |x|^2 past float32 (components beyond ~1e19) or below its normal range (~1e-19): in double.
      double d2 = 0.0;
      for (int64_t c = 0; c < D; ++c) d2 += static_cast<double>(x[c]) * x[c];
      const double nd = std::sqrt(d2);
      norm[j] = static_cast<float>(nd);  // +inf past float32: that query's rows go to double
      for (int64_t c = 0; c < D; ++c) kn[j * D + c] = nd > 0.0 ? static_cast<float>(x[c] / nd) : 0.0f;
    }
  });
  std::vector<float> rounds(static_cast<size_t>(batch * H * S * Dv));
  std::vector<double> lse(static_cast<size_t>(batch * H * S));
  parallel_for(pool, batch * H, [&](int64_t t) {
    const int64_t b = t / H, r = t % H;
    std::vector<int32_t> ints(static_cast<size_t>(2 * S + p.n_buckets + 1));
    std::vector<float> s(static_cast<size_t>(W));
    int32_t* bucket = buckets ? buckets + t * S : ints.data();
    lsh_round(qk + b * S * D, kn.data() + b * S * D, v + b * S * Dv, S, D, Dv,
              R.data() + r * D * (p.n_buckets / 2), p, L, norm.data() + b * S, bucket, ints.data() + S,
              ints.data() + 2 * S, s.data(), rounds.data() + t * S * Dv, lse.data() + t * S,
              attended ? attended + t * S * W : nullptr);
  });
  parallel_for(pool, batch, [&](int64_t b) {
    for (int64_t i = 0; i < S; ++i) {
      const double* li = lse.data() + b * H * S + i;  // round r's at li[r * S]
      double m = -HUGE_VAL, total = 0.0;
      for (int64_t r = 0; r < H; ++r) m = std::max(m, li[r * S]);
      for (int64_t r = 0; r < H; ++r) total += std::exp(li[r * S] - m);
      float* oi = out + (b * S + i) * Dv;
      std::memset(oi, 0, sizeof(float) * static_cast<size_t>(Dv));
      for (int64_t r = 0; r < H; ++r) {
        const auto w = static_cast<float>(std::exp(li[r * S] - m) / total);
        kernels::axpy(w, rounds.data() + ((b * H + r) * S + i) * Dv, oi, Dv);
      }
    }
  });
}

}  // namespace attnlab
