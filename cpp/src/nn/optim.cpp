#include "attnlab/nn/optim.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab::nn {

Adam::Adam(std::vector<Param*> params, AdamConfig cfg) : params_(std::move(params)), cfg_(std::move(cfg)) {
  for (Param* p : params_) {
    m_.emplace_back(p->t.v.size(), 0.f);
    v_.emplace_back(p->t.v.size(), 0.f);
  }
}

float Adam::lr_at(int64_t step) const {
  float lr = cfg_.lr;
  if (cfg_.warmup > 0 && step < cfg_.warmup) return lr * static_cast<float>(step) / static_cast<float>(cfg_.warmup);
  if (cfg_.decay == "inv_sqrt" && cfg_.warmup > 0)
    lr *= std::sqrt(static_cast<float>(cfg_.warmup) / static_cast<float>(std::max<int64_t>(step, 1)));
  else if (cfg_.decay == "linear" && cfg_.total_steps > cfg_.warmup)
    lr *= std::max(0.05f, 1.f - static_cast<float>(step - cfg_.warmup) / static_cast<float>(cfg_.total_steps - cfg_.warmup));
  return lr;
}

void Adam::zero_grad() {
  for (Param* p : params_) p->t.has_grad = false;
}

namespace {

// sum of g[i]^2 in float64 over 8 interleaved partial sums: one chain of dependent adds was
// latency-bound (4 cycles per element, about 6% of a GRU training step).
double sum_squares(const float* g, int64_t n) {
  double part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) part[l] += static_cast<double>(g[i + l]) * g[i + l];
  for (; i < n; ++i) part[0] += static_cast<double>(g[i]) * g[i];
  return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

}  // namespace

float Adam::step() {
  double sq = 0.0;
  for (Param* p : params_) sq += sum_squares(p->t.grad(), p->t.size());
  const float norm = static_cast<float>(std::sqrt(sq));
  const float clipf = (cfg_.clip > 0.f && norm > cfg_.clip) ? cfg_.clip / (norm + 1e-6f) : 1.f;
  ++t_;
  const float lr = lr_at(t_);
  const float bc1 = 1.f - std::pow(cfg_.beta1, static_cast<float>(t_));
  const float bc2 = 1.f - std::pow(cfg_.beta2, static_cast<float>(t_));
  // Constants in locals and restrict-qualified arrays, so the loop vectorises (through the
  // config's fields and four float arrays that might alias, and with std::sqrt allowed to set
  // errno, GCC kept it scalar: 15% of a GRU training step; CMakeLists.txt builds the core with
  // -fno-math-errno, as WebAssembly's clang does by default). The bias corrections as factors,
  // as PyTorch applies them (lr / bc1 and sqrt(v) / sqrt(bc2)): one division and one square root
  // per weight instead of three divisions' worth (vector divisions and roots bound the loop:
  // Adam was 8.7% of the tutorial GRU's step).
  const float b1 = cfg_.beta1, b2 = cfg_.beta2, eps = cfg_.eps, wd = cfg_.weight_decay;
  const float inv_bc1 = 1.f / bc1, inv_sqrt_bc2 = 1.f / std::sqrt(bc2);
  for (size_t k = 0; k < params_.size(); ++k) {
    Param* p = params_[k];
    float* __restrict w = p->t.v.data();
    float* __restrict g = p->t.grad();
    float* __restrict m = m_[k].data();
    float* __restrict v = v_[k].data();
    const int64_t n = p->t.size();
    for (int64_t i = 0; i < n; ++i) {
      const float gi = g[i] * clipf;
      m[i] = b1 * m[i] + (1.f - b1) * gi;
      v[i] = b2 * v[i] + (1.f - b2) * gi * gi;
      w[i] -= lr * ((m[i] * inv_bc1) / (std::sqrt(v[i]) * inv_sqrt_bc2 + eps) + wd * w[i]);
    }
  }
  // Spent, not zeroed: the next backward's first writer of each gradient assigns it, or grad()
  // zeroes it first (Tensor::grad_slot). Storing zeros here wrote all of the model's gradients
  // back to memory at every step (24 MB for the shipped Transformer, whose Linears' weight
  // gradients are assigned by their first product).
  zero_grad();
  return norm;
}

}  // namespace attnlab::nn
