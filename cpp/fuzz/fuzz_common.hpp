// Helpers shared by the fuzz targets: shapes and finite values drawn from the fuzzer's bytes.
#pragma once
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "attnlab/attnlab.hpp"

namespace fuzz {

// Sizes are small (the point is shape logic, not throughput) and may be negative or zero.
inline int64_t size(FuzzedDataProvider& in, int64_t lo = -1, int64_t hi = 6) {
  return in.ConsumeIntegralInRange<int64_t>(lo, hi);
}

inline attnlab::Shape shape(FuzzedDataProvider& in, size_t max_rank, int64_t lo = -1) {
  attnlab::Shape s(in.ConsumeIntegralInRange<size_t>(0, max_rank));
  for (auto& d : s) d = size(in, lo, 4);
  return s;
}

// Element count for a buffer of `shape`, or -1 when a dimension is negative (no valid buffer).
inline int64_t count(const attnlab::Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) return -1;
    n *= d;
  }
  return n;
}

inline std::vector<float> values(FuzzedDataProvider& in, int64_t n, bool allow_neg_inf = false) {
  std::vector<float> v(static_cast<size_t>(n > 0 ? n : 0));
  for (auto& x : v) {
    const uint8_t kind = in.ConsumeIntegral<uint8_t>();
    if (allow_neg_inf && kind < 16) {
      x = -std::numeric_limits<float>::infinity();
    } else if (kind < 32) {
      x = (kind & 1 ? -1.0f : 1.0f) * 1e4f;  // extreme but finite logits
    } else {
      x = in.ConsumeFloatingPointInRange<float>(-4.0f, 4.0f);
    }
  }
  return v;
}

inline void require_finite(const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    if (!std::isfinite(x[i])) std::abort();  // a silent NaN/inf from finite input is a bug
}

// Each row of `w` ([rows, cols]) sums to 1, or is all zero (every key masked).
inline void require_rows_normalised(const float* w, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      if (w[r * cols + c] < 0.0f) std::abort();
      sum += w[r * cols + c];
    }
    if (sum != 0.0 && std::abs(sum - 1.0) > 1e-4) std::abort();
  }
}

}  // namespace fuzz
