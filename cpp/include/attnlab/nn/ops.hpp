// The tape's ops: each computes its forward result into a new tensor and records its backward
// beside it (the files cpp/src/nn/ops_*.cpp hold them by kind). Matrix products go through
// gemm.hpp, attention through the core's fused kernel (attend_slices).
#pragma once
#include <cstdint>
#include <vector>

#include "attnlab/nn/random.hpp"
#include "attnlab/nn/tape.hpp"

namespace attnlab::nn {

// ---- ops_linear.cpp
// y = x W^T + b. x [N, K], W [M, K], b [1, M] or null -> [N, M] (PyTorch Linear layout).
T linear(Tape& tp, T x, T W, T b);
// relu_(linear(x, W, b)); with int8 weights at inference, one pass (the product applies both).
T linear_relu(Tape& tp, T x, T W, T b);
// rows of E [V, D] picked by ids -> [ids.size(), D]. Negative ids give zero rows.
T embedding(Tape& tp, T E, const int* ids, int64_t n);
inline T embedding(Tape& tp, T E, const std::vector<int>& ids) { return embedding(tp, E, ids.data(), static_cast<int64_t>(ids.size())); }

// ---- ops_elementwise.cpp
T add(Tape& tp, T a, T b);
T mul(Tape& tp, T a, T b);
T scale(Tape& tp, T a, float s);
T tanh_(Tape& tp, T a);
T relu_(Tape& tp, T a);
// x + pe where pe [L, C] repeats over the leading groups of L rows of x [B * L, C].
T add_rows_periodic(Tape& tp, T x, const std::vector<float>& pe, int64_t L);
// Inverted dropout; identity when p == 0 or the tape records nothing.
T dropout(Tape& tp, T x, float p, Mt19937& rng);
// The same for x [rows.size(), C] holding the listed rows (ascending) of a [total, C] tensor: rng
// draws for all total * C elements, in order, so each row gets the numbers it would get there.
T dropout(Tape& tp, T x, float p, Mt19937& rng, const std::vector<int>& rows, int64_t total);

// ---- ops_shape.cpp
// [a | b] along columns (same rows).
T concat_cols(Tape& tp, T a, T b);
// rows [start, start + n) of x.
T slice_rows(Tape& tp, T x, int64_t start, int64_t n);
// The listed rows of x, in that order: [rows.size(), C]. Rows not listed get no gradient.
T gather_rows(Tape& tp, T x, const std::vector<int>& rows);
// Its inverse: [total, C], row rows[i] = x's row i (distinct rows), zeros elsewhere.
T scatter_rows(Tape& tp, T x, const std::vector<int>& rows, int64_t total);
// Stacks xs (each [N, C]) one after another: [xs.size() * N, C] (time-major if xs are time steps).
T concat_rows(Tape& tp, const std::vector<T>& xs);
// Interleaves S time steps (each [B, C]) into batch-major rows b * S + t: [B * S, C].
T stack_batch_major(Tape& tp, const std::vector<T>& xs);

// ---- ops_gru.cpp
// PyTorch GRU cell from gi = x W_ih^T + b_ih [B, 3H] and gh = h W_hh^T + b_hh [B, 3H] (gate
// order r, z, n): h' = (1 - z) n + z h. Rows with active[b] == 0 keep h (active may be empty).
T gru_cell(Tape& tp, T gi, T gh, T h, const std::vector<uint8_t>& active);

// ---- ops_attention.cpp
// Bahdanau attention: e[b, j] = v . tanh(qp[b] + kp[b, j]); a = softmax over j < lens[b];
// ctx[b] = sum_j a[b, j] values[b, j]. qp [B, H], kp [Bk * S, H], v [1, H], values [Bk * S, Dv]
// with Bk = B, or Bk = 1 (one source shared by every row, for beam search). lens empty = all S.
// weights: null, or [B, S] receiving a.
T additive_attention(Tape& tp, T qp, T kp, T v, T values, int64_t S, const std::vector<int>& lens,
                     float* weights = nullptr);
// Multi-head scaled dot-product attention over projected q [B * Lq, D], k and v [Bk * Lk, D]
// (Bk = B or 1), `heads` heads of D / heads columns; key j of batch b is visible when
// j < klens[b] (klens empty = all) and, if causal, j <= i. scale <= 0 means 1/sqrt(D / heads).
// The core's fused kernel (attend_slices) computes it. weights: null, or [B, heads, Lq, Lk]
// receiving the attention weights. -> [B * Lq, D]
T attention(Tape& tp, T q, T k, T v, int64_t B, int64_t Lq, int64_t Lk, int64_t heads,
            const std::vector<int>& klens, bool causal, float scale, float* weights = nullptr);
// Inference only: self-attention (default scale, no causal mask) whose q, k and v are the column
// blocks [0, D), [D, 2D), [2D, 3D) of one stacked product qkv [B * L, 3D], read in place.
T self_attention_stacked(Tape& tp, T qkv, int64_t B, int64_t L, int64_t heads, const std::vector<int>& lens,
                         float* weights = nullptr);

// ---- ops_norm.cpp
// Layer norm over columns with gain g [1, C] and bias b [1, C], eps 1e-5.
T layer_norm(Tape& tp, T x, T g, T b);

}  // namespace attnlab::nn
