#include "attnlab/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels.hpp"

namespace attnlab {

bool softmax_row(float* s, int64_t n) {
  if (n == 0) return false;  // s may be null then
  const float m = kernels::max(s, n);
  if (std::isinf(m) && m > 0) {
    // Scores overflowed (huge inputs or scale): the softmax's limit shares the weight equally
    // among the +inf entries. Others, including inf - inf from an additive -inf mask, get 0.
    int64_t count = 0;
    for (int64_t j = 0; j < n; ++j) count += s[j] == m;
    for (int64_t j = 0; j < n; ++j) s[j] = s[j] == m ? 1.0f / static_cast<float>(count) : 0.0f;
    return true;
  }
  if (std::isinf(m) && m < 0) {
    std::memset(s, 0, sizeof(float) * static_cast<size_t>(n));
    return false;
  }
  const float sum = kernels::exp_shift_sum(s, m, n);  // sum >= 1: the max contributes exp(0)
  kernels::scale(s, 1.0f / sum, n);
  return true;
}

double exp_shift_row(double* s, int64_t n, double* max) {
  double m = -HUGE_VAL, sum = 0.0;
  for (int64_t j = 0; j < n; ++j) m = std::max(m, s[j]);
  for (int64_t j = 0; j < n; ++j) sum += (s[j] = m == -HUGE_VAL ? 0.0 : std::exp(s[j] - m));
  if (max) *max = m;
  return sum;
}

void masked_softmax(const float* x, float* y, int64_t batch, int64_t Sq, int64_t Sk,
                    const MaskSet& masks, ThreadPool* pool) {
  check_query_offset(masks.query_offset);
  if (Sk == 0) return;  // no elements (and x, y may be null)
  parallel_for(pool, batch, [&](int64_t b) {
    for (int64_t i = 0; i < Sq; ++i) {
      const float* xr = x + (b * Sq + i) * Sk;
      float* yr = y + (b * Sq + i) * Sk;
      const int64_t hi = visible_keys(masks, b, i, Sk);
      std::memcpy(yr, xr, sizeof(float) * static_cast<size_t>(hi));
      apply_element_masks(masks, b, i, yr, hi);
      softmax_row(yr, hi);
      std::memset(yr + hi, 0, sizeof(float) * static_cast<size_t>(Sk - hi));
    }
  });
}

}  // namespace attnlab
