// Masked softmax over the last axis: numerically stable (max-subtracted) and a row whose keys are
// all masked gives all-zero weights, never NaN.
#pragma once
#include <cstdint>

#include "attnlab/mask.hpp"
#include "attnlab/thread_pool.hpp"

namespace attnlab {

// Softmax of s[0..n) in place; entries of -inf get weight 0. Returns false (and zeros the row)
// when every entry is -inf or n == 0.
bool softmax_row(float* s, int64_t n);

// The double-precision row the float kernels fall back to (flash_attention.cpp's exact_row, the
// sparse, Shaw and LSH rows), for scores of any float32 magnitude: s[0..n) becomes exp(s - max)
// in place, all zeros when every entry is -inf (a row whose keys are all hidden, or n == 0).
// Returns the sum, 0 then; `max` receives the maximum when given.
double exp_shift_row(double* s, int64_t n, double* max = nullptr);

// x: [lead..., Sq, Sk] (lead flattened to `batch`); y receives the masked softmax.
void masked_softmax(const float* x, float* y, int64_t batch, int64_t Sq, int64_t Sk,
                    const MaskSet& masks, ThreadPool* pool);

}  // namespace attnlab
