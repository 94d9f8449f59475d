// Attention restricted to a sparse pattern (local, Longformer, BigBird): each query scores only
// the keys of its pattern's spans, so the cost is O(visible keys x D) per query and no Sq x Sk
// matrix is built. The result equals dense attention with the pattern as a boolean mask.
#pragma once
#include <cstdint>

#include "attnlab/mask.hpp"
#include "attnlab/sparse_pattern.hpp"
#include "attnlab/thread_pool.hpp"

namespace attnlab {

// q [batch, Sq, D], k [batch, Sk, D], v [batch, Sk, Dv] -> out [batch, Sq, Dv], with Sq and Sk
// those of `p`. Scores are scale * q . k; `masks` (causal, validLens, boolean and additive masks,
// ALiBi) apply on top of the pattern. weights, when not null: [batch, Sq, Sk], zero outside the
// pattern. A query that sees no key gets zero weights and a zero output.
void sparse_attention(const float* q, const float* k, const float* v, int64_t batch, int64_t D,
                      int64_t Dv, float scale, const SparsePattern& p, const MaskSet& masks,
                      float* out, float* weights, ThreadPool* pool);

}  // namespace attnlab
