#include "attnlab/nn/ops.hpp"

#include <algorithm>

#include "attnlab/nn/gemm.hpp"
#include "kernels.hpp"
#include "op_util.hpp"

namespace attnlab::nn {

namespace {
void check_linear(T x, T W, T b) {
  check(x->c == W->c, "linear", "x columns != W columns");
  check(!b || b->size() == W->r, "linear", "bias size != W rows");
}

// Inference with int8 weights: the product adds the bias (and applies ReLU) as it scales each tile.
bool q8_inference(const Tape& tp, T x, T W, T b) { return !(tp.grad_enabled && any_rg({x, W, b})) && !W->q8.empty(); }

void q8_linear(Tape& tp, T x, T W, T b, bool relu, T y) {
  gemm_nt_q8(x->v.data(), x->r, x->c, {W->r, W->q8_stride, W->q8_quads}, W->q8.data(), W->q8_scale.data(), y->v.data(),
             tp.pool, &tp.gemm, b ? b->v.data() : nullptr, relu);
}
}  // namespace

T linear(Tape& tp, T x, T W, T b) {
  check_linear(x, W, b);
  const int64_t N = x->r, K = x->c, M = W->r;
  T y = tp.make_uninit(N, M, any_rg({x, W, b}));  // both products write every element
  if (q8_inference(tp, x, W, b)) {
    q8_linear(tp, x, W, b, false, y);
    return y;
  }
  gemm_nt(x->v.data(), W->v.data(), y->v.data(), N, M, K, &tp.gemm);
  if (b) {
    float* __restrict yv = y->v.data();  // distinct tensors: the loop vectorises
    const float* __restrict bv = b->v.data();
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < M; ++j) yv[i * M + j] += bv[j];
  }
  if (y->requires_grad)
    tp.record([=, s = &tp.gemm] {
      const float* dy = y->grad();
      if (x->requires_grad) {
        bool acc = false;
        float* dx = x->grad_slot(acc);
        gemm_nn(dy, W->v.data(), dx, N, M, K, acc, s);  // acc or not, the same bits (gemm.hpp)
      }
      if (W->requires_grad) {
        bool acc = false;
        float* dw = W->grad_slot(acc);
        gemm_tn(dy, x->v.data(), dw, N, M, K, acc, s);
      }
      if (b && b->requires_grad) {
        bool acc = false;
        float* db = b->grad_slot(acc);
        if (!acc) std::fill(db, db + M, 0.f);
        for (int64_t i = 0; i < N; ++i)
          for (int64_t j = 0; j < M; ++j) db[j] += dy[i * M + j];
      }
    });
  return y;
}

T linear_relu(Tape& tp, T x, T W, T b) {
  if (!q8_inference(tp, x, W, b)) return relu_(tp, linear(tp, x, W, b));
  check_linear(x, W, b);
  T y = tp.make_uninit(x->r, W->r);
  q8_linear(tp, x, W, b, true, y);
  return y;
}

T embedding(Tape& tp, T E, const int* ids, int64_t N) {
  const int64_t D = E->c;
  T y = tp.make(N, D, E->requires_grad);
  for (int64_t i = 0; i < N; ++i) {
    const int id = ids[i];
    check(id < E->r, "embedding", "id out of range");
    if (id >= 0) std::copy_n(E->v.data() + id * D, D, y->v.data() + i * D);
  }
  if (y->requires_grad)
    tp.record([=, ids = std::vector<int>(ids, ids + N)] {
      float* dE = E->grad();
      const float* dy = y->grad();
      for (int64_t i = 0; i < N; ++i)
        if (ids[i] >= 0)
          for (int64_t d = 0; d < D; ++d) dE[ids[i] * D + d] += dy[i * D + d];
    });
  return y;
}

}  // namespace attnlab::nn
