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

// sum_j (x[j] - lse) in float64 over 8 interleaved partial sums: label smoothing's part of the
// loss (not of the gradient). One chain of dependent adds over the vocabulary was a third of
// cross_entropy's time.
double sum_minus(const float* x, float lse, int64_t V) {
  double part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 8 <= V; j += 8)
    for (int l = 0; l < 8; ++l) part[l] += x[j + l] - lse;
  for (; j < V; ++j) part[0] += x[j] - lse;
  return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

}  // namespace

void log_softmax_rows(const float* x, float* y, int64_t N, int64_t V, ThreadPool* pool) {
  // A decoder step's rows (a beam's, over a vocabulary of thousands) are worth a handoff. Only
  // the normaliser is needed, so the exps are summed, not stored: no buffer. The last pass writes
  // y, so a decoder's logits need no copy into its output first.
  parallel_for(N > 1 ? pool : nullptr, N, [&](int64_t i) {
    const float* r = x + i * V;
    float* o = y + i * V;
    const float m = kernels::max(r, V);
    const float lse = m + std::log(kernels::exp_shift_total(r, m, V));
    for (int64_t j = 0; j < V; ++j) o[j] = r[j] - lse;
  });
}

T cross_entropy(Tape& tp, T logits, const std::vector<int>& targets, float eps) {
  const int64_t N = logits->r, V = logits->c;
  check(static_cast<int64_t>(targets.size()) == N, "cross_entropy", "targets size != rows");
  T y = tp.make(1, 1, logits->requires_grad);
  int64_t count = 0;
  for (int t : targets) count += t >= 0;
  const float inv = count ? 1.f / static_cast<float>(count) : 0.f;
  // d(loss)/d(logits), kept for the backward in a tape node: a recycled buffer, where a vector
  // was allocated, zeroed and paged in at every step (5 MB for the shipped Transformer's batches).
  T dlogits = logits->requires_grad ? tp.make_uninit(N, V) : nullptr;
  std::vector<float> p(dlogits ? 0 : static_cast<size_t>(V));
  double loss = 0.0;
  for (int64_t i = 0; i < N; ++i) {
    const int t = targets[i];
    float* d = dlogits ? dlogits->v.data() + i * V : p.data();
    if (t < 0) {
      if (dlogits) std::fill(d, d + V, 0.f);
      continue;
    }
    check(t < V, "cross_entropy", "target out of range");
    const float* x = logits->v.data() + i * V;
    const float lse = softmax_lse(x, d, V);
    double l = -(1.0 - eps) * (x[t] - lse);
    if (eps > 0.f) l -= eps * sum_minus(x, lse, V) / static_cast<double>(V);
    loss += l;
    if (dlogits) {
      for (int64_t j = 0; j < V; ++j) d[j] = (d[j] - eps / static_cast<float>(V)) * inv;
      d[t] -= (1.f - eps) * inv;
    }
  }
  y->v[0] = static_cast<float>(loss * inv);
  if (y->requires_grad)
    tp.record([=] {
      const float s = y->grad()[0];
      const float* dl = dlogits->v.data();
      add_to_grad(logits, [&](int64_t i) { return s * dl[i]; });
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
