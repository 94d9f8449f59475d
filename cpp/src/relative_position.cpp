#include "attnlab/relative_position.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/softmax.hpp"
#include "kernels.hpp"

namespace attnlab {

AdditiveMask diagonal_bias(const float* table, int64_t num_heads, int64_t batch, int64_t Sq,
                           int64_t Sk) {
  const int64_t len = Sq + Sk - 1;  // i - j runs over [-(Sk - 1), Sq - 1]
  AdditiveMask m;
  m.data = table;
  m.at.row_stride = 1;
  m.at.col_stride = -1;
  m.at.batch_offset.resize(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) m.at.batch_offset[b] = (b % num_heads) * len + (Sk - 1);
  return m;
}

void check_t5(const T5Params& p) {
  // Per direction half the buckets (bidirectional), of which half are exact distances.
  const int64_t per_direction = p.bidirectional ? p.num_buckets / 2 : p.num_buckets;
  require(per_direction >= 2, [&] {
    return std::string("t5.numBuckets: expected an integer >= ") + (p.bidirectional ? "4" : "2") +
           " (" + (p.bidirectional ? "bidirectional" : "causal") + " scheme), got " +
           std::to_string(p.num_buckets);
  });
  require(!p.bidirectional || p.num_buckets % 2 == 0, [&] {
    return "t5.numBuckets: expected an even integer (bidirectional scheme: half the buckets per direction), got " +
           std::to_string(p.num_buckets);
  });
  const int64_t max_exact = per_direction / 2;
  require(p.max_distance > max_exact, [&] {
    return "t5.maxDistance: expected an integer > " + std::to_string(max_exact) +
           " (the exact buckets' span, numBuckets / " + (p.bidirectional ? "4" : "2") +
           "), got " + std::to_string(p.max_distance);
  });
}

int64_t t5_bucket(int64_t rel, const T5Params& p) {
  int64_t n = p.num_buckets, bucket = 0;
  if (p.bidirectional) {
    n /= 2;
    if (rel > 0) bucket += n;
    rel = std::abs(rel);
  } else {
    rel = -std::min<int64_t>(rel, 0);
  }
  const int64_t max_exact = n / 2;
  if (rel < max_exact) return bucket + rel;
  // float32 as torch computes it, so the buckets match the reference implementation's.
  const float log_ratio = std::log(static_cast<float>(rel) / static_cast<float>(max_exact));
  const float span = static_cast<float>(std::log(static_cast<double>(p.max_distance) / max_exact));
  const auto large = static_cast<int64_t>(log_ratio / span * static_cast<float>(n - max_exact));
  return bucket + std::min(max_exact + large, n - 1);
}

AdditiveMask t5_bias(const float* weights, int64_t num_heads, const T5Params& p, int64_t batch,
                     int64_t Sq, int64_t Sk, float* table, int64_t query_offset) {
  check_t5(p);
  check_query_offset(query_offset);
  require(num_heads >= 1 && batch % num_heads == 0, [&] {
    return "t5: expected the heads (" + std::to_string(num_heads) +
           ") to divide the leading size " + std::to_string(batch);
  });
  const int64_t len = Sq + Sk - 1;
  for (int64_t t = 0; t < len; ++t) {
    // Entry t holds j - i = Sk - 1 - t; the query sits at position i + query_offset.
    const int64_t bucket = t5_bucket(Sk - 1 - t - query_offset, p);
    for (int64_t h = 0; h < num_heads; ++h) table[h * len + t] = weights[h * p.num_buckets + bucket];
  }
  return diagonal_bias(table, num_heads, batch, Sq, Sk);
}

namespace {

constexpr int64_t kRowsPerTask = 16;

// Row i of one slice in double precision, max-subtracted: the right weights and output for scores
// float32 cannot hold (|q.(k + a_K)| past 3.4e38, or every visible score overflowing to -inf),
// as the fused kernel's exact_row. Rows whose keys are all masked get zeros, as there.
// buf [hi + Dv] scratch, the caller's (no allocation, so no cleanup code on this path).
[[gnu::noinline]] void shaw_exact_row(const AttentionSlice& sl, int64_t i, int64_t hi, int64_t Sk, int64_t D,
                    int64_t Dv, float scale, const MaskSet& masks, const ShawParams& r, double* buf) {
  const int64_t k = r.max_distance, pos = i + masks.query_offset;
  double *s = buf, *o = s + hi;
  std::fill(o, o + Dv, 0.0);
  const float* qi = sl.q + i * sl.q_stride;
  for (int64_t j = 0; j < hi; ++j) {
    const float *kj = sl.k + j * sl.k_stride, *a = r.keys + (std::clamp<int64_t>(j - pos, -k, k) + k) * D;
    double dot = 0.0;
    for (int64_t d = 0; d < D; ++d) dot += static_cast<double>(qi[d]) * kj[d] + static_cast<double>(qi[d]) * a[d];
    s[j] = dot * scale;
  }
  apply_element_masks_span(masks, sl.b, i, 0, s, hi);
  const double sum = exp_shift_row(s, hi);
  const double inv = sum > 0.0 ? 1.0 / sum : 0.0;
  for (int64_t j = 0; j < hi; ++j) {
    if (s[j] == 0.0) continue;
    const float *vj = sl.v + j * sl.v_stride, *a = r.values ? r.values + (std::clamp<int64_t>(j - pos, -k, k) + k) * Dv : nullptr;
    for (int64_t c = 0; c < Dv; ++c) o[c] += s[j] * (static_cast<double>(vj[c]) + (a ? a[c] : 0.0));
  }
  float* oi = sl.out + i * sl.out_stride;
  for (int64_t c = 0; c < Dv; ++c) oi[c] = static_cast<float>(o[c] * inv);
  if (sl.weights) {
    float* wi = sl.weights + i * Sk;
    for (int64_t j = 0; j < hi; ++j) wi[j] = static_cast<float>(s[j] * inv);
    std::fill(wi + hi, wi + Sk, 0.0f);
  }
}

// Row i of one slice. Buffers: s [Sk], qa and wsum [2k + 1], exact_buf [Sk + Dv]. Kept out of
// line, away from the caller's vectors, for the reason sparse_row gives (Emscripten's exception
// trampolines).
[[gnu::noinline]] void shaw_row(const AttentionSlice& sl, int64_t i, int64_t Sk, int64_t D,
                                int64_t Dv, float scale, const MaskSet& masks,
                                const ShawParams& r, float* s, float* qa, float* wsum, double* exact_buf) {
  const int64_t k = r.max_distance, R = 2 * k + 1, pos = i + masks.query_offset;
  const float* qi = sl.q + i * sl.q_stride;
  for (int64_t t = 0; t < R; ++t) qa[t] = kernels::dot(qi, r.keys + t * D, D);
  const auto rel = [&](int64_t j) { return std::clamp<int64_t>(j - pos, -k, k) + k; };
  const int64_t hi = visible_keys(masks, sl.b, i, Sk);
  for (int64_t j = 0; j < hi; ++j) s[j] = scale * (kernels::dot(qi, sl.k + j * sl.k_stride, D) + qa[rel(j)]);
  // A score past float32 (±inf, or inf - inf = NaN) makes the sum of squares non-finite (so do
  // scores past 1.8e19, which the double row gets right too): one SIMD pass, not a test per score.
  // Then, after the masks, a score an additive mask pushed past float32 or every visible one -inf.
  bool exact = !std::isfinite(kernels::dot(s, s, hi));
  if (!exact) {
    apply_element_masks(masks, sl.b, i, s, hi);
    exact = hi > 0 && !std::isfinite(kernels::max(s, hi));
  }
  if (exact) {
    shaw_exact_row(sl, i, hi, Sk, D, Dv, scale, masks, r, exact_buf);
    return;
  }
  softmax_row(s, hi);
  float* oi = sl.out + i * sl.out_stride;
  std::memset(oi, 0, sizeof(float) * static_cast<size_t>(Dv));
  for (int64_t j = 0; j < hi; ++j) {
    if (s[j] != 0.0f) kernels::axpy(s[j], sl.v + j * sl.v_stride, oi, Dv);
  }
  if (r.values) {
    // sum_j w_ij a_V[rel(j)] = sum_r (sum of the weights at distance r) a_V[r].
    std::fill(wsum, wsum + R, 0.0f);
    for (int64_t j = 0; j < hi; ++j) wsum[rel(j)] += s[j];
    for (int64_t t = 0; t < R; ++t) {
      if (wsum[t] != 0.0f) kernels::axpy(wsum[t], r.values + t * Dv, oi, Dv);
    }
  }
  if (sl.weights) {
    float* wi = sl.weights + i * Sk;
    std::memcpy(wi, s, sizeof(float) * static_cast<size_t>(hi));
    std::fill(wi + hi, wi + Sk, 0.0f);
  }
}

}  // namespace

void shaw_attend_slices(int64_t batch, const std::function<AttentionSlice(int64_t)>& slice,
                        int64_t Sq, int64_t Sk, int64_t D, int64_t Dv, float scale,
                        const MaskSet& masks, const ShawParams& shaw, ThreadPool* pool) {
  check_query_offset(masks.query_offset);
  require(shaw.keys != nullptr, [] {
    return std::string("shaw.keys: expected the relative key embeddings [2k + 1, D], got none");
  });
  require(shaw.max_distance >= 0, [&] {
    return "shaw.maxDistance: expected an integer >= 0, got " + std::to_string(shaw.max_distance);
  });
  const int64_t blocks = (Sq + kRowsPerTask - 1) / kRowsPerTask, R = 2 * shaw.max_distance + 1;
  parallel_for(pool, batch * blocks, [&](int64_t t) {
    const AttentionSlice sl = slice(t / blocks);
    const int64_t i0 = (t % blocks) * kRowsPerTask, i1 = std::min(Sq, i0 + kRowsPerTask);
    std::vector<float> work(static_cast<size_t>(Sk + 2 * R));
    std::vector<double> exact_buf(static_cast<size_t>(Sk + Dv));
    for (int64_t i = i0; i < i1; ++i) {
      shaw_row(sl, i, Sk, D, Dv, scale, masks, shaw, work.data(), work.data() + Sk,
               work.data() + Sk + R, exact_buf.data());
    }
  });
}

void shaw_attention(const float* q, const float* k, const float* v, int64_t batch, int64_t Sq,
                    int64_t Sk, int64_t D, int64_t Dv, float scale, const ShawParams& shaw,
                    const MaskSet& masks, float* out, float* weights, ThreadPool* pool) {
  require(batch >= 0 && Sq >= 0 && Sk >= 0 && D >= 1 && Dv >= 1, [&] {
    return "q, k, v: expected non-negative lengths and feature sizes >= 1, got batch=" +
           std::to_string(batch) + " Sq=" + std::to_string(Sq) + " Sk=" + std::to_string(Sk) +
           " D=" + std::to_string(D) + " Dv=" + std::to_string(Dv);
  });
  shaw_attend_slices(batch, [&](int64_t b) {
    return AttentionSlice{q + b * Sq * D, D, k + b * Sk * D, D, v + b * Sk * Dv, Dv,
                          out + b * Sq * Dv, Dv, weights ? weights + b * Sq * Sk : nullptr, b};
  }, Sq, Sk, D, Dv, scale, masks, shaw, pool);
}

}  // namespace attnlab
