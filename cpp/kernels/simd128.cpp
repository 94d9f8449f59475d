// WebAssembly SIMD128 kernels: four float lanes, several accumulators to hide add latency.
// Twins of scalar.cpp; tails fall back to the scalar loop so any length works.
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <limits>

#include "exp_approx.hpp"
#include "kernels.hpp"

namespace attnlab::kernels::simd128 {
namespace {

inline float hsum(v128_t v) {
  return (wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1)) +
         (wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3));
}

inline float hmax(v128_t v) {
  const float a = wasm_f32x4_extract_lane(v, 0), b = wasm_f32x4_extract_lane(v, 1);
  const float c = wasm_f32x4_extract_lane(v, 2), d = wasm_f32x4_extract_lane(v, 3);
  const float ab = a > b ? a : b, cd = c > d ? c : d;
  return ab > cd ? ab : cd;
}

inline v128_t pow2(v128_t e) {  // 2^e for integer lanes e in [-126, 127]
  return wasm_i32x4_shl(wasm_i32x4_add(e, wasm_i32x4_splat(127)), 23);
}

inline v128_t exp4(v128_t x) {
  using namespace exp_constants;
  const v128_t too_small = wasm_f32x4_lt(x, wasm_f32x4_splat(kMin));
  const v128_t too_big = wasm_f32x4_gt(x, wasm_f32x4_splat(kMax));
  x = wasm_f32x4_pmax(wasm_f32x4_splat(kMin), wasm_f32x4_pmin(wasm_f32x4_splat(kMax), x));
  const v128_t n = wasm_f32x4_nearest(wasm_f32x4_mul(x, wasm_f32x4_splat(kLog2e)));
  v128_t r = wasm_f32x4_sub(x, wasm_f32x4_mul(n, wasm_f32x4_splat(kLn2Hi)));
  r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, wasm_f32x4_splat(kLn2Lo)));
  v128_t p = wasm_f32x4_splat(kP0);
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(kP1));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(kP2));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(kP3));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(kP4));
  p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(kP5));
  p = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_mul(p, r), r), r),
                     wasm_f32x4_splat(1.0f));
  const v128_t ni = wasm_i32x4_trunc_sat_f32x4(n);
  // Same split as the scalar twin (truncating division) so results match bit for bit.
  const v128_t sign = wasm_u32x4_shr(ni, 31);
  const v128_t half = wasm_i32x4_shr(wasm_i32x4_add(ni, sign), 1);
  v128_t y = wasm_f32x4_mul(wasm_f32x4_mul(p, pow2(half)), pow2(wasm_i32x4_sub(ni, half)));
  y = wasm_v128_andnot(y, too_small);
  return wasm_v128_bitselect(wasm_f32x4_splat(std::numeric_limits<float>::infinity()), y,
                             too_big);
}

}  // namespace

float exp_approx(float x) { return scalar::exp_approx(x); }

float dot(const float* a, const float* b, int64_t n) {
  v128_t s0 = wasm_f32x4_splat(0.0f), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(wasm_v128_load(a + i), wasm_v128_load(b + i)));
    s1 = wasm_f32x4_add(s1, wasm_f32x4_mul(wasm_v128_load(a + i + 4), wasm_v128_load(b + i + 4)));
    s2 = wasm_f32x4_add(s2, wasm_f32x4_mul(wasm_v128_load(a + i + 8), wasm_v128_load(b + i + 8)));
    s3 = wasm_f32x4_add(s3,
                        wasm_f32x4_mul(wasm_v128_load(a + i + 12), wasm_v128_load(b + i + 12)));
  }
  for (; i + 4 <= n; i += 4)
    s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(wasm_v128_load(a + i), wasm_v128_load(b + i)));
  float s = hsum(wasm_f32x4_add(wasm_f32x4_add(s0, s1), wasm_f32x4_add(s2, s3)));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

void axpy(float alpha, const float* x, float* y, int64_t n) {
  const v128_t va = wasm_f32x4_splat(alpha);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    wasm_v128_store(y + i, wasm_f32x4_add(wasm_v128_load(y + i),
                                          wasm_f32x4_mul(va, wasm_v128_load(x + i))));
  for (; i < n; ++i) y[i] += alpha * x[i];
}

void scale(float* x, float alpha, int64_t n) {
  const v128_t va = wasm_f32x4_splat(alpha);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, wasm_f32x4_mul(wasm_v128_load(x + i), va));
  for (; i < n; ++i) x[i] *= alpha;
}

float max(const float* x, int64_t n) {
  v128_t m = wasm_f32x4_splat(-std::numeric_limits<float>::infinity());
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) m = wasm_f32x4_pmax(m, wasm_v128_load(x + i));
  float r = hmax(m);
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}

float exp_shift_sum(float* x, float shift, int64_t n) {
  const v128_t vs = wasm_f32x4_splat(shift);
  v128_t acc = wasm_f32x4_splat(0.0f);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const v128_t e = exp4(wasm_f32x4_sub(wasm_v128_load(x + i), vs));
    wasm_v128_store(x + i, e);
    acc = wasm_f32x4_add(acc, e);
  }
  float sum = hsum(acc);
  for (; i < n; ++i) {
    x[i] = scalar::exp_approx(x[i] - shift);
    sum += x[i];
  }
  return sum;
}

}  // namespace attnlab::kernels::simd128
#endif
