// ALiBi (Press et al., "Train Short, Test Long"): a per-head linear penalty on distance,
// -slope[h] * |i - j|, added to the scores instead of position embeddings.
#pragma once
#include <cstdint>
#include <vector>

#include "attnlab/mask.hpp"

namespace attnlab {

// The paper's slopes for n heads: 2^(-8h/n), h = 1..n, when n is a power of two; otherwise those
// of the largest power of two p < n, then every other slope of 2p until there are n.
std::vector<float> alibi_slopes(int64_t num_heads);

// The bias -slopes[h] * |i + query_offset - j| over scores [batch, Sq, Sk] (query_offset as
// MaskSet's), h = b % num_heads (heads are the last leading axis: [B, H, Sq, Sk] scores, and
// multi-head attention's masks). It depends only on
// i - j, so one diagonal per head serves every row: `table` [num_heads, Sq + Sk - 1] is filled
// here and read with row stride +1 and column stride -1, O(H (Sq + Sk)) memory, not O(H Sq Sk).
// Null `slopes` means alibi_slopes(num_heads); given ones must be finite and >= 0. The mask
// reads `slopes` no more, but `table` must outlive it.
AdditiveMask alibi_bias(const float* slopes, int64_t num_heads, int64_t batch, int64_t Sq,
                        int64_t Sk, float* table, int64_t query_offset = 0);

}  // namespace attnlab
