// Multi-head attention with the parameters and semantics of PyTorch's nn.MultiheadAttention
// (batch_first=True, kdim = vdim = embed_dim, no dropout).
#pragma once
#include <cstdint>

#include "attnlab/mask.hpp"
#include "attnlab/relative_position.hpp"
#include "attnlab/rope.hpp"
#include "attnlab/thread_pool.hpp"

namespace attnlab {

struct MultiHeadParams {
  int64_t embed_dim = 0, num_heads = 0;
  const float* in_proj_weight = nullptr;   // [3E, E]: rows of W_q, then W_k, then W_v
  const float* in_proj_bias = nullptr;     // [3E] or null
  const float* out_proj_weight = nullptr;  // [E, E]
  const float* out_proj_bias = nullptr;    // [E] or null
};

// query [B, L, E], key and value [B, S, E] -> out [B, L, E]. `masks` is over leading dims
// [B, num_heads] (attn_mask [L, S] or [B*H, L, S] and key_padding_mask [B, S] broadcast there).
// weights, when not null: [B, L, S] averaged over heads if `average_weights`, else [B, H, L, S].
// A query whose keys are all masked attends to nothing: zero weights, and its output is the
// output projection's bias (PyTorch gives NaN there). `rotary`, when given, applies RoPE to every
// head's projected queries and keys (query row i at position rotary->offset + masks.query_offset
// + i, key j at rotary->offset + j). `shaw`, when given, adds Shaw's relative embeddings (of the
// head size, shared by the heads as in the paper) to every head's keys and values.
void multi_head_attention(const float* query, const float* key, const float* value, int64_t B,
                          int64_t L, int64_t S, const MultiHeadParams& p, const MaskSet& masks,
                          float* out, float* weights, bool average_weights, ThreadPool* pool,
                          const RopeParams* rotary = nullptr, const ShawParams* shaw = nullptr);

}  // namespace attnlab
