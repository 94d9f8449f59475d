// Scalar reference kernels: the plain loops every other ISA is checked against.
#include <cmath>
#include <cstring>
#include <limits>

#include "exp_approx.hpp"
#include "kernels.hpp"

namespace attnlab::kernels::scalar {

float dot(const float* a, const float* b, int64_t n) {
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

void axpy(float alpha, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

void scale(float* x, float alpha, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= alpha;
}

float max(const float* x, int64_t n) {
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

float exp_approx(float x) {
  using namespace exp_constants;
  if (std::isnan(x)) return x;  // and no float-to-int conversion of NaN below
  if (x < kMin) return 0.0f;  // also exp(-inf)
  if (x > kMax) return std::numeric_limits<float>::infinity();
  const float n = std::nearbyint(x * kLog2e);
  const float r = (x - n * kLn2Hi) - n * kLn2Lo;
  float p = kP0;
  p = p * r + kP1;
  p = p * r + kP2;
  p = p * r + kP3;
  p = p * r + kP4;
  p = p * r + kP5;
  p = p * r * r + r + 1.0f;
  // 2^n built in the exponent bits; n in [-126, 128] here, so split to stay in range.
  const int ni = static_cast<int>(n);
  const int half = ni / 2;
  auto pow2 = [](int e) {
    const uint32_t bits = static_cast<uint32_t>(e + 127) << 23;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  };
  return p * pow2(half) * pow2(ni - half);
}

float exp_shift_sum(float* x, float shift, int64_t n) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = exp_approx(x[i] - shift);
    sum += x[i];
  }
  return sum;
}

}  // namespace attnlab::kernels::scalar
