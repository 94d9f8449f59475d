// Adam with linear warm-up then inverse-square-root or linear decay, and global-norm clipping.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/nn/tape.hpp"

namespace attnlab::nn {

struct AdamConfig {
  float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f, weight_decay = 0.f;
  int64_t warmup = 0;        // steps of linear warm-up from 0
  std::string decay = "none";  // "none" | "inv_sqrt" (after warm-up) | "linear" (to 0 at total_steps)
  int64_t total_steps = 0;
  float clip = 0.f;          // global gradient-norm clip; 0 = off
};

class Adam {
 public:
  Adam(std::vector<Param*> params, AdamConfig cfg);
  float lr_at(int64_t step) const;  // step counts from 1
  // Clips, updates, zeroes the gradients (zero_grad). Returns the gradient norm before clipping.
  float step();
  // Marks every gradient spent (has_grad = false): it reads as zeros from the next grad().
  void zero_grad();
  int64_t steps() const { return t_; }
  // State for checkpoints: step count and moments (same order as params).
  int64_t t_ = 0;
  std::vector<std::vector<float>> m_, v_;

 private:
  std::vector<Param*> params_;
  AdamConfig cfg_;
};

}  // namespace attnlab::nn
