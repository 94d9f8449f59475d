#include "attnlab/multihead_rope.hpp"

#include <Eigen/Core>
#include <cmath>
#include <string>
#include <vector>

#include "attnlab/attention.hpp"
#include "attnlab/error.hpp"

namespace attnlab {
namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMatrix>;
using Vector = Eigen::Map<const Eigen::RowVectorXf>;

// y [rows, E] = x [rows, E] W^T + bias, W being `E` rows of a PyTorch Linear weight.
void linear(const float* x, int64_t rows, int64_t E, const float* W, const float* bias, float* y) {
  Eigen::Map<RowMatrix> Y(y, rows, E);
  Y.noalias() = ConstMap(x, rows, E) * ConstMap(W, E, E).transpose();
  if (bias) Y.rowwise() += Vector(bias, E);
}

}  // namespace

void multi_head_attention_rope(const float* query, const float* key, const float* value,
                               int64_t B, int64_t L, int64_t S, const MultiHeadParams& p,
                               const RopeParams& rope_params, const MaskSet& masks, float* out,
                               float* weights, bool average_weights, ThreadPool* pool) {
  const int64_t E = p.embed_dim, H = p.num_heads;
  require(E >= 1 && H >= 1 && E % H == 0, [&] {
    return "numHeads: expected a positive divisor of the embedding size " + std::to_string(E) +
           ", got " + std::to_string(H);
  });
  require(p.in_proj_weight && p.out_proj_weight,
          [] { return "params: inProjWeight and outProjWeight are required"; });
  const int64_t hd = E / H;
  const float* bias = p.in_proj_bias;
  std::vector<float> Q(static_cast<size_t>(B * L * E)), K(static_cast<size_t>(B * S * E)),
      V(static_cast<size_t>(B * S * E)), heads(static_cast<size_t>(B * L * E));
  linear(query, B * L, E, p.in_proj_weight, bias, Q.data());
  linear(key, B * S, E, p.in_proj_weight + E * E, bias ? bias + E : nullptr, K.data());
  linear(value, B * S, E, p.in_proj_weight + 2 * E * E, bias ? bias + 2 * E : nullptr, V.data());
  // The projections read as [B, L, H, hd]: rotate every head's vectors by their position.
  rope(Q.data(), Q.data(), B, L, H, hd, rope_params);
  rope(K.data(), K.data(), B, S, H, hd, rope_params);

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
  constexpr int64_t kRowsPerTask = 16;
  const int64_t blocks = (L + kRowsPerTask - 1) / kRowsPerTask;
  parallel_for(pool, B * H * blocks, [&](int64_t t) {
    const int64_t bh = t / blocks, b = bh / H, h = bh % H;
    const int64_t i0 = (t % blocks) * kRowsPerTask, i1 = std::min(L, i0 + kRowsPerTask);
    std::vector<float> scratch(static_cast<size_t>(S));
    const AttentionSlice sl{Q.data() + b * L * E + h * hd,     E,
                            K.data() + b * S * E + h * hd,     E,
                            V.data() + b * S * E + h * hd,     E,
                            heads.data() + b * L * E + h * hd, E,
                            hw ? hw + bh * L * S : nullptr,    bh};
    attend_slice(sl, i0, i1, S, hd, hd, scale, masks, scratch.data());
  });
  linear(heads.data(), B * L, E, p.out_proj_weight, p.out_proj_bias, out);

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
