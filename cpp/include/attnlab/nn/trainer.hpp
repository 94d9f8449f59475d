// The toy trainer behind createTrainer(): a small model (GRU + attention, or a one-layer
// Transformer) learns a toy task (toy_tasks.hpp) with Adam, one batch of fresh examples per step,
// and is evaluated by greedy decoding on held-out examples.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnlab/nn/model.hpp"
#include "attnlab/nn/optim.hpp"
#include "attnlab/nn/toy_tasks.hpp"

namespace attnlab::nn {

struct ToyTrainerConfig {
  ToyTaskConfig task;
  std::string arch = "gru";  // "gru" | "gru-luong" | "transformer"
  int hidden = 64;           // a multiple of 4 in [4, 512]
  int batch = 32;            // in [1, 512]
  double lr = 3e-3;          // > 0
  uint32_t seed = 1;         // initial weights and the training stream
};

struct StepReport {
  int64_t step = 0;          // steps taken since creation
  double loss = 0;           // mean loss of these steps
  double tokens_per_second = 0;
};

// One evaluated example: symbols as letters, the output with "</s>" when the model ended it, and
// the last layer's head-averaged cross-attention [output.size(), source.size()].
struct ToyExample {
  std::vector<std::string> source, target, output;
  std::vector<float> attention;
};

struct Evaluation {
  double exact_match = 0;    // fraction of examples whose output equals the target
  ToyExample example;        // the first example (empty when n == 0)
};

class ToyTrainer {
 public:
  // Throws attnlab::Error naming the field when the config is out of range.
  explicit ToyTrainer(const ToyTrainerConfig& c);
  StepReport step(int steps);
  // Exact match on n fresh examples drawn from `seed` (not the training stream).
  Evaluation evaluate(int n, uint32_t seed) const;
  int64_t num_params() const { return model_->num_params(); }
  const Model& model() const { return *model_; }

 private:
  ToyTrainerConfig c_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Adam> adam_;
  Mt19937 rng_;
  Tape tape_;
  int64_t step_ = 0;
};

}  // namespace attnlab::nn
