// Shared constants of the exp approximations so the scalar and SIMD versions stay twins.
// exp2(y) = 2^n * 2^f, n = round(y), f = y - n in [-1/2, 1/2] exact, so the range reduction is
// one subtraction; 2^f by its own polynomial, kE1..kE6. exp(x) is exp2(x log2(e)) (see
// scalar::exp_approx for what that costs in accuracy and saves in operations).
#pragma once

namespace attnlab::kernels::exp_constants {
constexpr float kLog2e = 1.44269504088896341f;
// exp2 of y below this is 0 (n = -127 gives 2^n's bits 0); in (-127, -126) it may be denormal.
constexpr float kExp2Min = -127.0f;
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

// erfc(z) = t exp(-z^2 + P(t)), t = 1 / (1 + z / 2), z >= 0: Numerical Recipes' erfcc (a
// Chebyshev fit, fractional error < 1.2e-7 in exact arithmetic), P's coefficients kP[0] + kP[1] t
// + ... + kP[9] t^9. What scalar::gelu_erf_approx and its SIMD twin evaluate.
namespace attnlab::kernels::erfc_constants {
constexpr float kP[10] = {-1.26551223f, 1.00002368f, 0.37409196f,  0.09678418f,  -0.18628806f,
                          0.27886807f,  -1.13520398f, 1.48851587f, -0.82215223f, 0.17087277f};
constexpr float kSqrtHalf = 0.70710678118654752f;
}  // namespace attnlab::kernels::erfc_constants
