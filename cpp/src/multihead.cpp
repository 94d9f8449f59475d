#include "attnlab/multihead.hpp"

#include "attnlab/rope.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "attnlab/attention.hpp"
#include "attnlab/error.hpp"
#include "attnlab/linear.hpp"

namespace attnlab {

void multi_head_attention(const float* query, const float* key, const float* value, int64_t B,
                          int64_t L, int64_t S, const MultiHeadParams& p, const MaskSet& masks,
                          float* out, float* weights, bool average_weights, ThreadPool* pool,
                          const RopeParams* rotary, const ShawParams* shaw) {
  const int64_t E = p.embed_dim, H = p.num_heads;
  require(E >= 1 && H >= 1 && E % H == 0, [&] {
    return "numHeads: expected a positive divisor of the embedding size " + std::to_string(E) +
           ", got " + std::to_string(H);
  });
  require(B >= 0 && L >= 0 && S >= 0, [&] {
    return "multiHeadAttention: expected non-negative sizes, got B=" + std::to_string(B) +
           " L=" + std::to_string(L) + " S=" + std::to_string(S);
  });
  check_query_offset(masks.query_offset);  // before the queries' rotation reads it
  require(p.in_proj_weight && p.out_proj_weight,
          [] { return "params: inProjWeight and outProjWeight are required"; });
  const int64_t hd = E / H;
  const float* bias = p.in_proj_bias;
  std::vector<float> Q(static_cast<size_t>(B * L * E)), K(static_cast<size_t>(B * S * E)),
      V(static_cast<size_t>(B * S * E)), heads(static_cast<size_t>(B * L * E));
  linear(query, E, B * L, E, p.in_proj_weight, bias, E, Q.data(), E, pool);
  linear(key, E, B * S, E, p.in_proj_weight + E * E, bias ? bias + E : nullptr, E, K.data(), E, pool);
  linear(value, E, B * S, E, p.in_proj_weight + 2 * E * E, bias ? bias + 2 * E : nullptr, E,
         V.data(), E, pool);
  require_finite(Q.data(), B * L * E, "query, params.inProjWeight: the query projection overflows");
  require_finite(K.data(), B * S * E, "key, params.inProjWeight: the key projection overflows");
  require_finite(V.data(), B * S * E, "value, params.inProjWeight: the value projection overflows");
  if (rotary) {
    // The projections read as [B, n, H, hd]: rotate every head's vectors by their position, the
    // queries' counted from the key position of the first (masks.query_offset).
    RopeParams at_queries = *rotary;
    at_queries.offset += masks.query_offset;
    rope(Q.data(), Q.data(), B, L, H, hd, at_queries, "query, params.inProjWeight, options.rope");
    rope(K.data(), K.data(), B, S, H, hd, *rotary, "key, params.inProjWeight, options.rope");
  }

  // Per-head weights only when asked; averaged afterwards in a fixed order (thread-count proof).
  std::vector<float> head_weights;
  float* hw = nullptr;
  if (weights) {
    if (average_weights) {
      head_weights.resize(static_cast<size_t>(B * H * L * S));
      hw = head_weights.data();
    } else {
      hw = weights;
    }
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  // Heads are strided views into Q, K, V and `heads`: no transposing copies. With no keys every
  // row is masked and `heads` stays zero; with no queries there is nothing to do (and an empty
  // buffer has no data to point into).
  const auto head = [&](int64_t bh) {
    const int64_t b = bh / H, h = bh % H;
    return AttentionSlice{Q.data() + b * L * E + h * hd,     E,
                          K.data() + b * S * E + h * hd,     E,
                          V.data() + b * S * E + h * hd,     E,
                          heads.data() + b * L * E + h * hd, E,
                          hw ? hw + bh * L * S : nullptr,    bh};
  };
  const int64_t slices = S > 0 && L > 0 ? B * H : 0;
  if (shaw) {
    shaw_attend_slices(slices, head, L, S, hd, hd, scale, masks, *shaw, pool);
  } else {
    attend_slices(slices, head, L, S, hd, hd, scale, masks, pool);
  }
  linear(heads.data(), E, B * L, E, p.out_proj_weight, p.out_proj_bias, E, out, E, pool);
  require_finite(out, B * L * E, "params.outProjWeight: the output projection overflows");

  if (weights && average_weights) {
    const float inv = 1.0f / static_cast<float>(H);
    for (int64_t b = 0; b < B; ++b) {
      float* dst = weights + b * L * S;
      for (int64_t x = 0; x < L * S; ++x) {
        float acc = 0.0f;
        for (int64_t h = 0; h < H; ++h) acc += hw[(b * H + h) * L * S + x];
        dst[x] = acc * inv;
      }
    }
  }
}

}  // namespace attnlab
