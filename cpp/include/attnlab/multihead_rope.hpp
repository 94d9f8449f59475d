// Multi-head attention with rotary position embedding: multi_head_attention (multihead.hpp) with
// each head's projected queries and keys rotated by their positions before the scores, as in
// RoFormer, GPT-NeoX and LLaMA. Position i of the query and of the key sequence is offset + i.
#pragma once
#include <cstdint>

#include "attnlab/mask.hpp"
#include "attnlab/multihead.hpp"
#include "attnlab/rope.hpp"
#include "attnlab/thread_pool.hpp"

namespace attnlab {

// As multi_head_attention; the head size embed_dim / num_heads must be even.
void multi_head_attention_rope(const float* query, const float* key, const float* value,
                               int64_t B, int64_t L, int64_t S, const MultiHeadParams& p,
                               const RopeParams& rope_params, const MaskSet& masks, float* out,
                               float* weights, bool average_weights, ThreadPool* pool);

}  // namespace attnlab
