#include "attnlab/nn/ops.hpp"

#include <algorithm>
#include <cmath>

#include "kernels.hpp"
#include "op_util.hpp"

namespace attnlab::nn {

T concat_cols(Tape& tp, T a, T b) {
  check(a->r == b->r, "concat_cols", "row mismatch");
  const int64_t N = a->r, A = a->c, B = b->c, C = A + B;
  T y = tp.make_uninit(N, C, any_rg({a, b}));
  for (int64_t i = 0; i < N; ++i) {
    std::copy_n(a->v.data() + i * A, A, y->v.data() + i * C);
    std::copy_n(b->v.data() + i * B, B, y->v.data() + i * C + A);
  }
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      if (a->requires_grad) add_to_grad_2d(a, [&](int64_t i, int64_t j) { return dy[i * C + j]; });
      if (b->requires_grad) add_to_grad_2d(b, [&](int64_t i, int64_t j) { return dy[i * C + A + j]; });
    });
  return y;
}

T slice_rows(Tape& tp, T x, int64_t start, int64_t n) {
  check(start >= 0 && n >= 0 && start + n <= x->r, "slice_rows", "range out of bounds");
  const int64_t C = x->c;
  T y = tp.make(n, C, x->requires_grad);
  std::copy_n(x->v.data() + start * C, n * C, y->v.data());
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      float* dx = x->grad() + start * C;
      for (int64_t i = 0; i < n * C; ++i) dx[i] += dy[i];
    });
  return y;
}

T gather_rows(Tape& tp, T x, const std::vector<int>& rows) {
  const int64_t C = x->c, n = static_cast<int64_t>(rows.size());
  for (int r : rows) check(r >= 0 && r < x->r, "gather_rows", "row out of range");
  T y = tp.make_uninit(n, C, x->requires_grad);
  for (int64_t i = 0; i < n; ++i) std::copy_n(x->v.data() + rows[i] * C, C, y->v.data() + i * C);
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      float* dx = x->grad();
      for (int64_t i = 0; i < n; ++i)
        for (int64_t c = 0; c < C; ++c) dx[rows[i] * C + c] += dy[i * C + c];
    });
  return y;
}

T scatter_rows(Tape& tp, T x, const std::vector<int>& rows, int64_t total) {
  const int64_t C = x->c, n = static_cast<int64_t>(rows.size());
  check(n == x->r, "scatter_rows", "one listed row per row of x");
  T y = tp.make(total, C, x->requires_grad);
  for (int64_t i = 0; i < n; ++i) {
    check(rows[i] >= 0 && rows[i] < total, "scatter_rows", "row out of range");
    std::copy_n(x->v.data() + i * C, C, y->v.data() + rows[i] * C);
  }
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      add_to_grad_2d(x, [&](int64_t i, int64_t c) { return dy[rows[i] * C + c]; });
    });
  return y;
}

T concat_rows(Tape& tp, const std::vector<T>& xs) {
  check(!xs.empty(), "concat_rows", "no inputs");
  const int64_t C = xs[0]->c;
  int64_t R = 0;
  bool rg = false;
  for (T x : xs) {
    check(x->c == C, "concat_rows", "column mismatch");
    R += x->r;
    rg = rg || x->requires_grad;
  }
  T y = tp.make_uninit(R, C, rg);
  int64_t off = 0;
  for (T x : xs) {
    std::copy_n(x->v.data(), x->size(), y->v.data() + off);
    off += x->size();
  }
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      int64_t o = 0;
      for (T x : xs) {
        if (x->requires_grad) add_to_grad(x, [&](int64_t i) { return dy[o + i]; });
        o += x->size();
      }
    });
  return y;
}

T stack_batch_major(Tape& tp, const std::vector<T>& xs) {
  check(!xs.empty(), "stack_batch_major", "no inputs");
  const int64_t S = static_cast<int64_t>(xs.size()), B = xs[0]->r, C = xs[0]->c;
  bool rg = false;
  for (T x : xs) {
    check(x->r == B && x->c == C, "stack_batch_major", "shape mismatch");
    rg = rg || x->requires_grad;
  }
  T y = tp.make_uninit(B * S, C, rg);
  for (int64_t t = 0; t < S; ++t)
    for (int64_t b = 0; b < B; ++b) std::copy_n(xs[t]->v.data() + b * C, C, y->v.data() + (b * S + t) * C);
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      for (int64_t t = 0; t < S; ++t) {
        if (xs[t]->requires_grad) add_to_grad_2d(xs[t], [&](int64_t b, int64_t c) { return dy[(b * S + t) * C + c]; });
      }
    });
  return y;
}


}  // namespace attnlab::nn
