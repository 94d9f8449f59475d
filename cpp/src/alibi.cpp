#include "attnlab/alibi.hpp"

#include <cmath>
#include <cstdlib>
#include <string>

#include "attnlab/error.hpp"
#include "attnlab/relative_position.hpp"

namespace attnlab {

std::vector<float> alibi_slopes(int64_t num_heads) {
  require(num_heads >= 1, [&] {
    return "alibi: expected a number of heads >= 1, got " + std::to_string(num_heads);
  });
  int64_t p = 1;
  while (p * 2 <= num_heads) p *= 2;
  std::vector<float> slopes;
  for (int64_t h = 1; h <= p; ++h) slopes.push_back(static_cast<float>(std::exp2(-8.0 * h / p)));
  // The in-between slopes: the odd-numbered ones of 2p heads.
  for (int64_t h = 1; static_cast<int64_t>(slopes.size()) < num_heads; h += 2) {
    slopes.push_back(static_cast<float>(std::exp2(-8.0 * h / (2 * p))));
  }
  return slopes;
}

AdditiveMask alibi_bias(const float* slopes, int64_t num_heads, int64_t batch, int64_t Sq,
                        int64_t Sk, float* table, int64_t query_offset) {
  check_query_offset(query_offset);
  require(num_heads >= 1 && batch % num_heads == 0, [&] {
    return "alibi: expected the heads (" + std::to_string(num_heads) +
           ") to divide the leading size " + std::to_string(batch);
  });
  const std::vector<float> standard = slopes ? std::vector<float>() : alibi_slopes(num_heads);
  if (!slopes) slopes = standard.data();
  // A negative slope would reward distance without bound (+inf scores at float32's range).
  for (int64_t h = 0; h < num_heads; ++h)
    require(std::isfinite(slopes[h]) && slopes[h] >= 0, [&] {
      return "alibi: expected slopes that are finite and >= 0, got " + std::to_string(slopes[h]) + " at index " +
             std::to_string(h);
    });
  const int64_t len = Sq + Sk - 1;  // i - j runs over [-(Sk - 1), Sq - 1]
  for (int64_t h = 0; h < num_heads; ++h) {
    for (int64_t t = 0; t < len; ++t) {
      table[h * len + t] = -slopes[h] * static_cast<float>(std::abs(t - (Sk - 1) + query_offset));
    }
  }
  return diagonal_bias(table, num_heads, batch, Sq, Sk);
}

}  // namespace attnlab
