// Relative position in the scores: biases and embeddings indexed by the distance j - i between a
// query i and a key j rather than by absolute positions.
//
// - T5 (Raffel et al. 2020): one learned scalar per head and distance bucket, added to the
//   scores. Distances below numBuckets/2 (per direction) get a bucket each; longer ones share
//   logarithmically wider buckets up to maxDistance, beyond which all fall in the last bucket.
// - Shaw et al. (2018): learned vectors a_K[r], a_V[r] for r = clip(j - i, -k, k), so that
//   score_ij = scale * q_i . (k_j + a_K[r]) and out_i = sum_j w_ij (v_j + a_V[r]).
//
// Biases that depend only on j - i (ALiBi, T5) share one diagonal table per head.
#pragma once
#include <cstdint>
#include <functional>

#include "attnlab/attention.hpp"
#include "attnlab/mask.hpp"
#include "attnlab/thread_pool.hpp"

namespace attnlab {

// A diagonal table [num_heads, Sq + Sk - 1] (entry t of head h holds the bias at i - j =
// t - (Sk - 1)) as an additive mask over scores [batch, Sq, Sk], head h = b % num_heads.
AdditiveMask diagonal_bias(const float* table, int64_t num_heads, int64_t batch, int64_t Sq,
                           int64_t Sk);

struct T5Params {
  int64_t num_buckets = 32;
  int64_t max_distance = 128;
  bool bidirectional = true;  // false: the causal (decoder) scheme, every j > i in bucket 0
};

// Throws unless num_buckets and max_distance give distinct exact and log-spaced buckets.
void check_t5(const T5Params& p);

// The bucket of relative position rel = j - i, as Hugging Face's T5Attention
// ._relative_position_bucket computes it (float32 logarithm, truncated).
int64_t t5_bucket(int64_t rel, const T5Params& p);

// weights [num_heads, num_buckets]: table[h, t] = weights[h, bucket(j - (i + query_offset))]
// (query_offset as MaskSet's), returned as a mask over scores [batch, Sq, Sk]. `table`
// [num_heads, Sq + Sk - 1] must outlive the mask.
AdditiveMask t5_bias(const float* weights, int64_t num_heads, const T5Params& p, int64_t batch,
                     int64_t Sq, int64_t Sk, float* table, int64_t query_offset = 0);

struct ShawParams {
  const float* keys = nullptr;    // a_K [2 * max_distance + 1, D], row r for clip(j - i) + k
  const float* values = nullptr;  // a_V [2 * max_distance + 1, Dv], or null: values unchanged
  int64_t max_distance = 0;       // the clipping distance k
};

// Slices 0..batch-1 of attention with Shaw's relative embeddings, as attend_slices: scores are
// scale * q_i . (k_j + a_K), then the masks, softmax, and the values plus a_V, the distances
// measured from query position i + masks.query_offset. O(Sk) memory per
// row; the relative terms cost O(k D) per query.
void shaw_attend_slices(int64_t batch, const std::function<AttentionSlice(int64_t)>& slice,
                        int64_t Sq, int64_t Sk, int64_t D, int64_t Dv, float scale,
                        const MaskSet& masks, const ShawParams& shaw, ThreadPool* pool);

// q [batch, Sq, D], k [batch, Sk, D], v [batch, Sk, Dv] -> out [batch, Sq, Dv], weights (or
// null) [batch, Sq, Sk].
void shaw_attention(const float* q, const float* k, const float* v, int64_t batch, int64_t Sq,
                    int64_t Sk, int64_t D, int64_t Dv, float scale, const ShawParams& shaw,
                    const MaskSet& masks, float* out, float* weights, ThreadPool* pool);

}  // namespace attnlab
