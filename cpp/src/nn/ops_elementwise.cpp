#include "attnlab/nn/ops.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

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
        if (x->requires_grad) add_to_grad(x, [&](int64_t i) { return dy[i]; });
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
      add_to_grad(a, [&](int64_t i) { return dy[i] * s; });
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
      const float *yv = y->v.data(), *av = a->v.data();
      add_to_grad(a, [&](int64_t i) { return dy[i] * df_from_y(yv[i], av[i]); });
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
      add_to_grad(x, [&](int64_t i) { return dy[i]; });
    });
  return y;
}

namespace {

// The first r with float(r) / 2^32 >= p, found once by bisection (float(r) never decreases as r
// grows): uniform_real_distribution<float>(0, 1) draws float(r) / 2^32 from one number r (the
// clamp below 1 of libstdc++'s generate_canonical changes no comparison with p < 1), so
// `r < below` is `U(rng) < p` with no float per draw. 2^32: every r, as for any p >= 1 (libc++,
// which has no clamp, would keep the 128 largest r at p = 1, multiplied by an infinite 1 / (1 - p)).
uint64_t drop_below(float p) {
  uint64_t lo = 0, hi = uint64_t{1} << 32;
  if (p >= 1.f) return hi;
  while (lo < hi) {
    const uint64_t mid = (lo + hi) / 2;
    if (static_cast<float>(static_cast<uint32_t>(mid)) / 4294967296.0f >= p) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

// Dropout's mask, row by row over `total` rows of C, one number an element from rng: f(i, m) for
// the i-th listed row (rows[i] if `listed`, else row i), m[c] = 0 or keep. The numbers of rows not
// listed are drawn and dropped. The backward draws the mask again rather than storing it.
template <class F>
void each_mask_row(Mt19937& rng, uint64_t below, float keep, int64_t C, int64_t total, bool listed,
                   const std::vector<int>& rows, F&& f) {
  std::vector<uint32_t> r(static_cast<size_t>(C));
  std::vector<float> m(static_cast<size_t>(C));
  const float kept = below > UINT32_MAX ? 0.f : keep;
  const uint32_t b = static_cast<uint32_t>(below);
  const int64_t n = listed ? static_cast<int64_t>(rows.size()) : total;
  for (int64_t row = 0, i = 0; row < total; ++row) {
    rng.fill(r.data(), C);
    if (i == n || (listed && rows[i] != row)) continue;
    for (int64_t c = 0; c < C; ++c) m[c] = r[c] >= b ? kept : 0.f;
    f(i++, static_cast<const float*>(m.data()));
  }
}

T dropout_impl(Tape& tp, T x, float p, Mt19937& rng, bool listed, std::vector<int> rows, int64_t total) {
  if (p <= 0.f || !tp.grad_enabled) return x;
  T y = tp.make_uninit(x->r, x->c, x->requires_grad);
  const int64_t C = x->c;
  const float keep = 1.f / (1.f - p);
  const uint64_t below = drop_below(p);
  const Mt19937 start = rng;
  each_mask_row(rng, below, keep, C, total, listed, rows, [&](int64_t i, const float* __restrict m) {
    const float* __restrict xv = x->v.data() + i * C;
    float* __restrict yv = y->v.data() + i * C;
    for (int64_t c = 0; c < C; ++c) yv[c] = xv[c] * m[c];
  });
  if (y->requires_grad)
    tp.record([=, rows = std::move(rows)] {
      Mt19937 replay = start;
      const float* dy = y->grad();
      bool acc = false;
      float* dx = x->grad_slot(acc);
      each_mask_row(replay, below, keep, C, total, listed, rows, [&](int64_t i, const float* __restrict m) {
        const float* __restrict d = dy + i * C;
        float* __restrict o = dx + i * C;
        if (acc)
          for (int64_t c = 0; c < C; ++c) o[c] += d[c] * m[c];
        else
          for (int64_t c = 0; c < C; ++c) o[c] = 0.f + d[c] * m[c];
      });
    });
  return y;
}

}  // namespace

// Inverted dropout: y = x * (U < p ? 0 : 1 / (1 - p)), one U per element from rng, the bits of
// uniform_real_distribution's draws. The backward replays the generator from a copy of its
// state instead of keeping a float mask: 4 bytes an element less to write and read back.
T dropout(Tape& tp, T x, float p, Mt19937& rng) { return dropout_impl(tp, x, p, rng, false, {}, x->r); }

T dropout(Tape& tp, T x, float p, Mt19937& rng, const std::vector<int>& rows, int64_t total) {
  check(static_cast<int64_t>(rows.size()) == x->r, "dropout", "one listed row per row of x");
  for (size_t i = 0; i < rows.size(); ++i)
    check(rows[i] >= 0 && rows[i] < total && (i == 0 || rows[i] > rows[i - 1]), "dropout", "rows ascending, below total");
  return dropout_impl(tp, x, p, rng, true, rows, total);
}

}  // namespace attnlab::nn
