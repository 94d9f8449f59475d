#include "attnlab/rope.hpp"

#include <cmath>
#include <string>
#include <vector>

#include "attnlab/error.hpp"
#include "kernels.hpp"

namespace attnlab {

void rope(const float* x, float* out, int64_t outer, int64_t S, int64_t inner, int64_t D,
          const RopeParams& p, const char* what) {
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
  // A turn can lengthen a component by up to sqrt(2) (a and b near FLT_MAX at 45 degrees): past
  // float32 there is no right answer to give, and a silent inf would become NaN scores.
  const int64_t n = outer * S * inner * D;
  const int64_t bad = kernels::find_nonfinite(out, n, false);
  require(bad < 0, [&] {
    return std::string(what) + ": the rotation overflows float32 (beyond ±3.4e38) at index " +
           std::to_string(bad) + "; scale the inputs down";
  });
}

}  // namespace attnlab
