// Shared constants of the exp approximations so the scalar and SIMD versions stay twins.
// exp(x) = 2^n * exp(r), n = round(x / ln2), r = x - n ln2 in [-ln2/2, ln2/2] (ln2 split in two
// parts so r is exact), exp(r) by Cephes' degree-6 minimax polynomial.
// exp2(y) = 2^n * 2^f, n = round(y), f = y - n in [-1/2, 1/2] exact, so the range reduction is
// one subtraction instead of exp's five dependent steps; 2^f by its own polynomial, kE1..kE6.
#pragma once

namespace attnlab::kernels::exp_constants {
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
// Below kMin the result is 0 (denormals are not worth the cost in a softmax); above kMax, +inf.
constexpr float kMin = -87.33654475f;
constexpr float kMax = 88.72283905f;
// exp2 of y below this is 0 (n = -127 gives 2^n's bits 0); in (-127, -126) it may be denormal.
constexpr float kExp2Min = -127.0f;
constexpr float kP0 = 1.9875691500e-4f;
constexpr float kP1 = 1.3981999507e-3f;
constexpr float kP2 = 8.3334519073e-3f;
constexpr float kP3 = 4.1665795894e-2f;
constexpr float kP4 = 1.6666665459e-1f;
constexpr float kP5 = 5.0000001201e-1f;
// 2^f = 1 + kE1 f + f^2 (kE2 + kE3 f + ... + kE6 f^4) on [-1/2, 1/2]: the minimax fit of
// relative error (Remez, 40 digits: 2.6e-9), rounded to float and then kE2, kE3 moved by a few
// ulp to where scalar::exp2_approx's float32 evaluation errs least: 8.8e-8 at most, with or
// without fused multiply-adds, over y in [-1, 0] in steps of 2^-21.
constexpr float kE1 = 0.693147242f;
constexpr float kE2 = 0.240226567f;
constexpr float kE3 = 0.0555030704f;
constexpr float kE4 = 0.00961769279f;
constexpr float kE5 = 0.00134066434f;
constexpr float kE6 = 0.000155946778f;
}  // namespace attnlab::kernels::exp_constants
