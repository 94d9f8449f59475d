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
  for (Param* p : params_) std::fill(p->t.grad(), p->t.grad() + p->t.size(), 0.f);
}

float Adam::step() {
  double sq = 0.0;
  for (Param* p : params_) {
    const float* g = p->t.grad();
    for (int64_t i = 0; i < p->t.size(); ++i) sq += static_cast<double>(g[i]) * g[i];
  }
  const float norm = static_cast<float>(std::sqrt(sq));
  const float clipf = (cfg_.clip > 0.f && norm > cfg_.clip) ? cfg_.clip / (norm + 1e-6f) : 1.f;
  ++t_;
  const float lr = lr_at(t_);
  const float bc1 = 1.f - std::pow(cfg_.beta1, static_cast<float>(t_));
  const float bc2 = 1.f - std::pow(cfg_.beta2, static_cast<float>(t_));
  for (size_t k = 0; k < params_.size(); ++k) {
    Param* p = params_[k];
    float* w = p->t.v.data();
    float* g = p->t.grad();
    float* m = m_[k].data();
    float* v = v_[k].data();
    for (int64_t i = 0; i < p->t.size(); ++i) {
      const float gi = g[i] * clipf;
      m[i] = cfg_.beta1 * m[i] + (1.f - cfg_.beta1) * gi;
      v[i] = cfg_.beta2 * v[i] + (1.f - cfg_.beta2) * gi * gi;
      w[i] -= lr * ((m[i] / bc1) / (std::sqrt(v[i] / bc2) + cfg_.eps) + cfg_.weight_decay * w[i]);
      g[i] = 0.f;
    }
  }
  return norm;
}

}  // namespace attnlab::nn
