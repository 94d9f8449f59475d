// Shared constants of the exp approximations so the scalar and SIMD versions stay twins.
// exp(x) = 2^n * exp(r), n = round(x / ln2), r = x - n ln2 in [-ln2/2, ln2/2] (ln2 split in two
// parts so r is exact), exp(r) by Cephes' degree-6 minimax polynomial.
// exp2(y) = 2^n * exp(r), n = round(y), r = (y - n) ln2: y - n is exact, so the range reduction
// is one subtraction and one multiply instead of exp's five dependent steps; the same polynomial.
#pragma once

namespace attnlab::kernels::exp_constants {
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
// Below kMin the result is 0 (denormals are not worth the cost in a softmax); above kMax, +inf.
constexpr float kMin = -87.33654475f;
constexpr float kMax = 88.72283905f;
constexpr float kLn2 = 0.693147180559945309f;
// exp2 of y below this is 0 (n = -127 gives 2^n's bits 0); in (-127, -126) it may be denormal.
constexpr float kExp2Min = -127.0f;
constexpr float kP0 = 1.9875691500e-4f;
constexpr float kP1 = 1.3981999507e-3f;
constexpr float kP2 = 8.3334519073e-3f;
constexpr float kP3 = 4.1665795894e-2f;
constexpr float kP4 = 1.6666665459e-1f;
constexpr float kP5 = 5.0000001201e-1f;
}  // namespace attnlab::kernels::exp_constants
