// Attention: each query's output is a convex combination of the values, weighted by the masked
// softmax of its scores against the keys.
#pragma once
#include <cstdint>
#include <functional>

#include "attnlab/mask.hpp"
#include "attnlab/scoring.hpp"
#include "attnlab/shape.hpp"
#include "attnlab/thread_pool.hpp"

namespace attnlab {

struct AttentionDims {
  Shape lead;  // leading (batch) dimensions shared by q, k, v
  int64_t Sq = 0, Sk = 0, Dq = 0, Dk = 0, Dv = 0;
  int64_t batch() const { return numel(lead); }
  Shape scores() const {  // [lead..., Sq, Sk]
    Shape s = lead;
    s.push_back(Sq);
    s.push_back(Sk);
    return s;
  }
};

// q [lead, Sq, Dq], k [lead, Sk, Dk], v [lead, Sk, Dv] -> out [lead, Sq, Dv] and, when `weights`
// is not null, weights [lead, Sq, Sk]. Rows whose keys are all masked give zero weights and a
// zero output. Throws attnlab::Error on inconsistent dimensions or parameters.
void attention(const float* q, const float* k, const float* v, const AttentionDims& dims,
               Score score, const ScoreParams& params, const MaskSet& masks, float* out,
               float* weights, ThreadPool* pool);

// Raw scores (before masking and softmax): [lead, Sq, Sk].
void attention_scores(const float* q, const float* k, const AttentionDims& dims, Score score,
                      const ScoreParams& params, float* scores, ThreadPool* pool);

// Scores or projections of finite inputs can still pass float32's range: throws an Error
// "<what> float32 (beyond ±3.4e38) at index i" rather than hand on an inf or a NaN.
void require_finite(const float* x, int64_t n, const char* what);

// One (batch, head) slice with row strides, so multi-head attention can point into projected
// [B, S, E] buffers without transposing copies. Scores are dot products of q and k rows times
// `scale`. `b` is the leading index the masks are read at.
struct AttentionSlice {
  const float* q; int64_t q_stride;
  const float* k; int64_t k_stride;
  const float* v; int64_t v_stride;
  float* out; int64_t out_stride;
  float* weights;  // [Sq, Sk] contiguous, or null
  int64_t b;
};

// Rows [i0, i1) of a slice by the fused kernel (flash_attention.cpp). `k_panels` holds the
// slice's keys as kernels::pack_panels(s.k, s.k_stride, Sk, D) lays them out.
void attend_slice(const AttentionSlice& s, int64_t i0, int64_t i1, int64_t Sk, int64_t D,
                  int64_t Dv, float scale, const MaskSet& masks, const float* k_panels);

// Slices 0..batch-1 (`slice(b)` describes one), split over the pool into tasks of query rows.
void attend_slices(int64_t batch, const std::function<AttentionSlice(int64_t)>& slice, int64_t Sq,
                   int64_t Sk, int64_t D, int64_t Dv, float scale, const MaskSet& masks,
                   ThreadPool* pool);

}  // namespace attnlab
