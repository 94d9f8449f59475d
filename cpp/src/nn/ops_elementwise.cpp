#include "attnlab/nn/ops.hpp"

#include <algorithm>
#include <cmath>

#include "kernels.hpp"
#include "op_util.hpp"

namespace attnlab::nn {

T add(Tape& tp, T a, T b) {
  check(a->r == b->r && a->c == b->c, "add", "shape mismatch");
  T y = tp.make_uninit(a->r, a->c, any_rg({a, b}));
  const int64_t n = a->size();
  for (int64_t i = 0; i < n; ++i) y->v[i] = a->v[i] + b->v[i];
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      for (T x : {a, b})
        if (x->requires_grad) {
          float* dx = x->grad();
          for (int64_t i = 0; i < n; ++i) dx[i] += dy[i];
        }
    });
  return y;
}

T mul(Tape& tp, T a, T b) {
  check(a->r == b->r && a->c == b->c, "mul", "shape mismatch");
  T y = tp.make_uninit(a->r, a->c, any_rg({a, b}));
  const int64_t n = a->size();
  for (int64_t i = 0; i < n; ++i) y->v[i] = a->v[i] * b->v[i];
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      if (a->requires_grad) {
        float* da = a->grad();
        for (int64_t i = 0; i < n; ++i) da[i] += dy[i] * b->v[i];
      }
      if (b->requires_grad) {
        float* db = b->grad();
        for (int64_t i = 0; i < n; ++i) db[i] += dy[i] * a->v[i];
      }
    });
  return y;
}

T scale(Tape& tp, T a, float s) {
  T y = tp.make_uninit(a->r, a->c, a->requires_grad);
  const int64_t n = a->size();
  for (int64_t i = 0; i < n; ++i) y->v[i] = a->v[i] * s;
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      float* da = a->grad();
      for (int64_t i = 0; i < n; ++i) da[i] += dy[i] * s;
    });
  return y;
}

// y = f(a) element-wise; f fills y[0..n) from x[0..n), df gives dy/dx from (y, x).
template <class F, class DF>
static T unary(Tape& tp, T a, F f, DF df_from_y) {
  T y = tp.make_uninit(a->r, a->c, a->requires_grad);
  const int64_t n = a->size();
  f(a->v.data(), y->v.data(), n);
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      float* da = a->grad();
      for (int64_t i = 0; i < n; ++i) da[i] += dy[i] * df_from_y(y->v[i], a->v[i]);
    });
  return y;
}

// tanh through the exp kernel, as the GRU's gates: every build alike.
T tanh_(Tape& tp, T a) {
  return unary(
      tp, a,
      [](const float* x, float* y, int64_t n) {
        std::copy_n(x, n, y);
        kernels::tanh_inplace(y, n);
      },
      [](float y, float) { return 1.f - y * y; });
}
T relu_(Tape& tp, T a) {
  return unary(
      tp, a,
      [](const float* x, float* y, int64_t n) {
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.f ? x[i] : 0.f;
      },
      [](float, float x) { return x > 0.f ? 1.f : 0.f; });
}

T add_rows_periodic(Tape& tp, T x, const std::vector<float>& pe, int64_t L) {
  const int64_t C = x->c;
  check(L > 0 && x->r % L == 0 && static_cast<int64_t>(pe.size()) >= L * C, "add_rows_periodic", "shape mismatch");
  T y = tp.make_uninit(x->r, C, x->requires_grad);
  for (int64_t i = 0; i < x->r; ++i)
    for (int64_t c = 0; c < C; ++c) y->v[i * C + c] = x->v[i * C + c] + pe[(i % L) * C + c];
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      float* dx = x->grad();
      for (int64_t i = 0; i < x->size(); ++i) dx[i] += dy[i];
    });
  return y;
}

T dropout(Tape& tp, T x, float p, std::mt19937& rng) {
  if (p <= 0.f || !tp.grad_enabled) return x;
  T y = tp.make(x->r, x->c, x->requires_grad);
  const int64_t n = x->size();
  std::vector<float> mask(static_cast<size_t>(n));
  std::uniform_real_distribution<float> U(0.f, 1.f);
  const float keep = 1.f / (1.f - p);
  for (int64_t i = 0; i < n; ++i) {
    mask[i] = U(rng) < p ? 0.f : keep;
    y->v[i] = x->v[i] * mask[i];
  }
  if (y->requires_grad)
    tp.record([=, mask = std::move(mask)] {
      const float* dy = y->grad();
      float* dx = x->grad();
      for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * mask[i];
    });
  return y;
}


}  // namespace attnlab::nn
