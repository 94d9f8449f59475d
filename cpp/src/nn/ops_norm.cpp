#include "attnlab/nn/ops.hpp"

#include <algorithm>
#include <cmath>

#include "op_util.hpp"

namespace attnlab::nn {

T layer_norm(Tape& tp, T x, T g, T b) {
  const int64_t N = x->r, C = x->c;
  check(g->size() == C && b->size() == C, "layer_norm", "gain/bias size != columns");
  T y = tp.make(N, C, any_rg({x, g, b}));
  std::vector<float> stats(static_cast<size_t>(2 * N));  // mean, rstd
  for (int64_t i = 0; i < N; ++i) {
    const float* xi = x->v.data() + i * C;
    float m = 0.f;
    for (int64_t c = 0; c < C; ++c) m += xi[c];
    m /= static_cast<float>(C);
    float var = 0.f;
    for (int64_t c = 0; c < C; ++c) var += (xi[c] - m) * (xi[c] - m);
    var /= static_cast<float>(C);
    const float rs = 1.f / std::sqrt(var + 1e-5f);
    stats[2 * i] = m;
    stats[2 * i + 1] = rs;
    for (int64_t c = 0; c < C; ++c) y->v[i * C + c] = (xi[c] - m) * rs * g->v[c] + b->v[c];
  }
  if (y->requires_grad) {
    tp.record([=, stats = std::move(stats)] {
      const float* dy = y->grad();
      float* dx = x->requires_grad ? x->grad() : nullptr;
      float* dg = g->requires_grad ? g->grad() : nullptr;
      float* db = b->requires_grad ? b->grad() : nullptr;
      for (int64_t i = 0; i < N; ++i) {
        const float m = stats[2 * i], rs = stats[2 * i + 1];
        const float* xi = x->v.data() + i * C;
        const float* d = dy + i * C;
        float s1 = 0.f, s2 = 0.f;  // mean of dxhat, mean of dxhat * xhat
        for (int64_t c = 0; c < C; ++c) {
          const float xh = (xi[c] - m) * rs;
          const float dxh = d[c] * g->v[c];
          s1 += dxh;
          s2 += dxh * xh;
          if (dg) dg[c] += d[c] * xh;
          if (db) db[c] += d[c];
        }
        s1 /= static_cast<float>(C);
        s2 /= static_cast<float>(C);
        if (dx)
          for (int64_t c = 0; c < C; ++c) {
            const float xh = (xi[c] - m) * rs;
            dx[i * C + c] += rs * (d[c] * g->v[c] - s1 - xh * s2);
          }
      }
    });
  }
  return y;
}


}  // namespace attnlab::nn
