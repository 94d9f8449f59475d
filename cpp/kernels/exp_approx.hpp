// Shared constants of the exp approximation so the scalar and SIMD versions stay twins.
// exp(x) = 2^n * exp(r), n = round(x / ln2), r = x - n ln2 in [-ln2/2, ln2/2] (ln2 split in two
// parts so r is exact), exp(r) by Cephes' degree-6 minimax polynomial.
#pragma once

namespace attnlab::kernels::exp_constants {
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
// Below kMin the result is 0 (denormals are not worth the cost in a softmax); above kMax, +inf.
constexpr float kMin = -87.33654475f;
constexpr float kMax = 88.72283905f;
constexpr float kP0 = 1.9875691500e-4f;
constexpr float kP1 = 1.3981999507e-3f;
constexpr float kP2 = 8.3334519073e-3f;
constexpr float kP3 = 4.1665795894e-2f;
constexpr float kP4 = 1.6666665459e-1f;
constexpr float kP5 = 5.0000001201e-1f;
}  // namespace attnlab::kernels::exp_constants
