// Losses (cpp/src/nn/loss.cpp): the training objective, the log-softmax that decoding shares with
// it, and a scalar probe for gradient checks.
#pragma once
#include <cstdint>
#include <vector>

#include "attnlab/nn/tape.hpp"

namespace attnlab::nn {

// y = row-wise log-softmax of x [N, V] (y may be x), the rows spread over `pool` (null: this
// thread; a row's bits do not depend on which thread took it).
void log_softmax_rows(const float* x, float* y, int64_t N, int64_t V, ThreadPool* pool = nullptr);
// Mean cross-entropy over rows with target >= 0 (others are padding), with label smoothing eps:
// target distribution (1 - eps) one-hot + eps / V. -> [1, 1]
T cross_entropy(Tape& tp, T logits, const std::vector<int>& targets, float eps);
// sum(x * w) for a constant w of x's size: a scalar probe for gradient checks.
T weighted_sum(Tape& tp, T x, const std::vector<float>& w);

}  // namespace attnlab::nn
