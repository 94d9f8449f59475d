#include "attnlab/rope.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "attnlab/error.hpp"

namespace attnlab {

void rope(const float* x, float* out, int64_t outer, int64_t S, int64_t inner, int64_t D,
          const RopeParams& p) {
  require(D >= 2 && D % 2 == 0, [&] {
    return "rope: expected an even feature size (features turn in pairs), got " + std::to_string(D);
  });
  require(p.base > 0.0 && std::isfinite(p.base) && p.offset >= 0, [&] {
    return "rope: expected base > 0 and offset >= 0, got base " + std::to_string(p.base) +
           ", offset " + std::to_string(p.offset);
  });
  const int64_t half = D / 2;
  // cos and sin per (position, pair), in double: angles reach offset + S radians.
  std::vector<float> cosines(static_cast<size_t>(S * half)), sines(static_cast<size_t>(S * half));
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t c = 0; c < half; ++c) {
      const double angle = static_cast<double>(p.offset + s) * std::pow(p.base, -2.0 * c / D);
      cosines[s * half + c] = static_cast<float>(std::cos(angle));
      sines[s * half + c] = static_cast<float>(std::sin(angle));
    }
  }
  // Pair c is (c0, c1): (2c, 2c + 1) interleaved, (c, c + D/2) in halves.
  const int64_t step = p.interleaved ? 2 : 1, partner = p.interleaved ? 1 : half;
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t s = 0; s < S; ++s) {
      for (int64_t n = 0; n < inner; ++n) {
        const int64_t base = ((o * S + s) * inner + n) * D;
        for (int64_t c = 0; c < half; ++c) {
          const int64_t c0 = base + c * step, c1 = c0 + partner;
          const float cs = cosines[s * half + c], sn = sines[s * half + c];
          const float a = x[c0], b = x[c1];
          out[c0] = a * cs - b * sn;
          out[c1] = a * sn + b * cs;
        }
      }
    }
  }
}

}  // namespace attnlab
