#include "attnlab/positional.hpp"

#include <cmath>

#include "attnlab/error.hpp"

namespace attnlab {

void sinusoidal_encoding(int64_t length, int64_t dim, float* out) {
  require(length >= 0 && dim >= 1, [&] {
    return "length, dim: expected length >= 0 and dim >= 1, got length " +
           std::to_string(length) + ", dim " + std::to_string(dim);
  });
  for (int64_t i = 0; i < length; ++i) {
    for (int64_t c = 0; c < dim; ++c) {
      // Double precision: angles reach `length` radians and float loses digits there.
      const double freq = std::pow(10000.0, -static_cast<double>(c - c % 2) / dim);
      const double angle = static_cast<double>(i) * freq;
      out[i * dim + c] = static_cast<float>(c % 2 == 0 ? std::sin(angle) : std::cos(angle));
    }
  }
}

}  // namespace attnlab
