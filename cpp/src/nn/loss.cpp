#include "attnlab/nn/loss.hpp"

#include <algorithm>
#include <cmath>

#include "attnlab/thread_pool.hpp"
#include "kernels.hpp"
#include "op_util.hpp"

namespace attnlab::nn {

namespace {

// One row: p[j] = exp(x[j] - max x) (through the exp kernel: libm's exp is slow in WebAssembly,
// and every build computing alike lets native tests vouch for the WASM numbers); returns the log
// of the normaliser, so log-softmax is x[j] - lse.
float exps_lse(const float* x, float* p, int64_t V, float* sum) {
  const float m = kernels::max(x, V);
  std::copy_n(x, V, p);
  *sum = kernels::exp_shift_sum(p, m, V);
  return m + std::log(*sum);
}

// The same with p[j] = softmax(x)[j].
float softmax_lse(const float* x, float* p, int64_t V) {
  float s;
  const float lse = exps_lse(x, p, V, &s);
  kernels::scale(p, 1.f / s, V);
  return lse;
}

}  // namespace

void log_softmax_rows(float* x, int64_t N, int64_t V, ThreadPool* pool) {
  // A decoder step's rows (a beam's, over a vocabulary of thousands) are worth a handoff. Only
  // the normaliser is needed, so the exps are summed, not stored: no copy of the row, no buffer.
  parallel_for(N > 1 ? pool : nullptr, N, [&](int64_t i) {
    float* r = x + i * V;
    const float m = kernels::max(r, V);
    const float lse = m + std::log(kernels::exp_shift_total(r, m, V));
    for (int64_t j = 0; j < V; ++j) r[j] -= lse;
  });
}

T cross_entropy(Tape& tp, T logits, const std::vector<int>& targets, float eps) {
  const int64_t N = logits->r, V = logits->c;
  check(static_cast<int64_t>(targets.size()) == N, "cross_entropy", "targets size != rows");
  T y = tp.make(1, 1, logits->requires_grad);
  int64_t count = 0;
  for (int t : targets) count += t >= 0;
  const float inv = count ? 1.f / static_cast<float>(count) : 0.f;
  std::vector<float> dlogits(logits->requires_grad ? static_cast<size_t>(N * V) : 0);
  std::vector<float> p(static_cast<size_t>(V));
  double loss = 0.0;
  for (int64_t i = 0; i < N; ++i) {
    const int t = targets[i];
    if (t < 0) continue;
    check(t < V, "cross_entropy", "target out of range");
    const float* x = logits->v.data() + i * V;
    const float lse = softmax_lse(x, p.data(), V);
    double l = -(1.0 - eps) * (x[t] - lse);
    if (eps > 0.f) {
      double s = 0.0;
      for (int64_t j = 0; j < V; ++j) s += x[j] - lse;
      l -= eps * s / static_cast<double>(V);
    }
    loss += l;
    if (!dlogits.empty()) {
      float* d = dlogits.data() + i * V;
      for (int64_t j = 0; j < V; ++j) d[j] = (p[j] - eps / static_cast<float>(V)) * inv;
      d[t] -= (1.f - eps) * inv;
    }
  }
  y->v[0] = static_cast<float>(loss * inv);
  if (y->requires_grad)
    tp.record([=, dlogits = std::move(dlogits)] {
      const float s = y->grad()[0];
      add_to_grad(logits, [&](int64_t i) { return s * dlogits[i]; });
    });
  return y;
}

T weighted_sum(Tape& tp, T x, const std::vector<float>& w) {
  check(static_cast<int64_t>(w.size()) == x->size(), "weighted_sum", "size mismatch");
  T y = tp.make(1, 1, x->requires_grad);
  double s = 0;
  for (int64_t i = 0; i < x->size(); ++i) s += static_cast<double>(x->v[i]) * w[i];
  y->v[0] = static_cast<float>(s);
  if (y->requires_grad)
    tp.record([=] {
      const float d = y->grad()[0];
      float* dx = x->grad();
      for (int64_t i = 0; i < x->size(); ++i) dx[i] += d * w[i];
    });
  return y;
}


}  // namespace attnlab::nn
