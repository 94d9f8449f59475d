// attnlab's training engine: a reverse-mode tape over 2-D float tensors.
//
// One mechanism: every op is a plain function that computes its forward result into a new tensor
// owned by the tape and, when any input needs a gradient, records one backward closure. The
// closures run in reverse order in Tape::backward. Each op's backward is checked against finite
// differences in tests/cpp/test_nn_grad.cpp. Sequences are handled by the caller (rows = batch x
// time, laid out as the op documents); everything is single-threaded and deterministic.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace attnlab::nn {

struct Tensor {
  int64_t r = 0, c = 0;           // rows x cols, row-major
  std::vector<float> v;           // values
  std::vector<float> g;           // gradient (allocated on first use)
  std::vector<float> aux;         // op-specific saved data (attention weights, ...)
  bool requires_grad = false;
  // Weights loaded from an int8 model file keep their int8 rows (zero-padded to q8_stride, a
  // multiple of 16) and per-row scales: inference linears multiply with those (linear_q8).
  std::vector<int8_t> q8;
  std::vector<float> q8_scale;
  int64_t q8_stride = 0;
  int64_t size() const { return r * c; }
  float* grad() {
    if (g.size() != v.size()) g.assign(v.size(), 0.f);
    return g.data();
  }
};
using T = Tensor*;

class Tape {
 public:
  // When false, ops record nothing (inference).
  bool grad_enabled = true;
  T make(int64_t r, int64_t c, bool rg = false);
  // A tensor holding constant data (no gradient).
  T constant(int64_t r, int64_t c, std::vector<float> v);
  void record(std::function<void()> f) { backs_.push_back(std::move(f)); }
  // Seeds d(loss) = 1 and runs the recorded closures in reverse.
  void backward(T loss);
  void clear() {
    backs_.clear();
    nodes_.clear();
  }
  size_t num_nodes() const { return nodes_.size(); }

 private:
  std::deque<Tensor> nodes_;
  std::vector<std::function<void()>> backs_;
};

// A named trainable parameter: a tensor that lives outside the tape.
struct Param {
  std::string name;
  std::vector<int64_t> shape;  // logical shape (for the weights file)
  Tensor t;
};

// ---- ops (forward + recorded backward) ----
// y = x W^T + b. x [N, K], W [M, K], b [1, M] or null -> [N, M] (PyTorch Linear layout).
T linear(Tape& tp, T x, T W, T b);
// rows of E [V, D] picked by ids -> [ids.size(), D]. Negative ids give zero rows.
T embedding(Tape& tp, T E, const std::vector<int>& ids);
T add(Tape& tp, T a, T b);
T mul(Tape& tp, T a, T b);
T scale(Tape& tp, T a, float s);
T tanh_(Tape& tp, T a);
T sigmoid_(Tape& tp, T a);
T relu_(Tape& tp, T a);
// [a | b] along columns (same rows).
T concat_cols(Tape& tp, T a, T b);
// rows [start, start + n) of x.
T slice_rows(Tape& tp, T x, int64_t start, int64_t n);
// Stacks xs (each [N, C]) one after another: [xs.size() * N, C] (time-major if xs are time steps).
T concat_rows(Tape& tp, const std::vector<T>& xs);
// Interleaves S time steps (each [B, C]) into batch-major rows b * S + t: [B * S, C].
T stack_batch_major(Tape& tp, const std::vector<T>& xs);
// x + pe where pe [L, C] repeats over the leading groups of L rows of x [B * L, C].
T add_rows_periodic(Tape& tp, T x, const std::vector<float>& pe, int64_t L);
// PyTorch GRU cell from gi = x W_ih^T + b_ih [B, 3H] and gh = h W_hh^T + b_hh [B, 3H] (gate
// order r, z, n): h' = (1 - z) n + z h. Rows with active[b] == 0 keep h (active may be empty).
T gru_cell(Tape& tp, T gi, T gh, T h, const std::vector<uint8_t>& active);
// Bahdanau attention: e[b, j] = v . tanh(qp[b] + kp[b, j]); a = softmax over j < lens[b];
// ctx[b] = sum_j a[b, j] values[b, j]. qp [B, H], kp [Bk * S, H], v [1, H], values [Bk * S, Dv]
// with Bk = B, or Bk = 1 (one source shared by every row, for beam search). lens empty = all S.
// The weights [B, S] are saved in the result's aux.
T additive_attention(Tape& tp, T qp, T kp, T v, T values, int64_t S, const std::vector<int>& lens);
// Multi-head scaled dot-product attention over projected q [B * Lq, D], k and v [Bk * Lk, D]
// (Bk = B or 1), `heads` heads of D / heads columns; key j of batch b is visible when
// j < klens[b] (klens empty = all) and, if causal, j <= i + causal_offset. scale <= 0 means
// 1/sqrt(D / heads). Weights [B, heads, Lq, Lk] are saved in aux. -> [B * Lq, D]
T attention(Tape& tp, T q, T k, T v, int64_t B, int64_t Lq, int64_t Lk, int64_t heads,
            const std::vector<int>& klens, bool causal, float scale, int64_t causal_offset = 0);
// Layer norm over columns with gain g [1, C] and bias b [1, C], eps 1e-5.
T layer_norm(Tape& tp, T x, T g, T b);
// Inverted dropout; identity when p == 0 or the tape records nothing.
T dropout(Tape& tp, T x, float p, std::mt19937& rng);
// Mean cross-entropy over rows with target >= 0 (others are padding), with label smoothing eps:
// target distribution (1 - eps) one-hot + eps / V. -> [1, 1]; aux[0] = number of counted rows.
T cross_entropy(Tape& tp, T logits, const std::vector<int>& targets, float eps);
// sum(x * w) for a constant w of x's size: a scalar probe for gradient checks.
T weighted_sum(Tape& tp, T x, const std::vector<float>& w);

// ---- plain helpers ----
// In place: row-wise log-softmax of [N, V].
void log_softmax_rows(float* x, int64_t N, int64_t V);
// C [N, M] (+)= A [N, K] B^T, B [M, K].
void gemm_nt(const float* A, const float* B, float* C, int64_t N, int64_t M, int64_t K, bool accumulate);
// C [K, M] (+)= A^T [K, N] B [N, M] (A [N, K]).
void gemm_tn(const float* A, const float* B, float* C, int64_t N, int64_t K, int64_t M, bool accumulate);
// C [N, M] (+)= A [N, K] B [K, M].
void gemm_nn(const float* A, const float* B, float* C, int64_t N, int64_t K, int64_t M, bool accumulate);

}  // namespace attnlab::nn
