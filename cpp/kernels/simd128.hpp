// WebAssembly SIMD128 kernels: four float lanes. Twins of scalar.hpp; tails fall back to the
// scalar loop so any length works. Header-only so hot loops inline (no call per dot product).
#pragma once
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include <cmath>
#include <limits>

#include "exp_approx.hpp"
#include "madd.hpp"
#include "scalar.hpp"

namespace attnlab::kernels::simd128 {
namespace detail {

inline float hsum(v128_t v) noexcept {
  return (wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1)) +
         (wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3));
}

// Largest lane, by shuffles: scalar compares here become data-dependent branches in V8.
inline float hmax(v128_t v) noexcept {
  v = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
  v = wasm_f32x4_pmax(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
  return wasm_f32x4_extract_lane(v, 0);
}

// Twin of scalar::exp2_approx: 2^y of four lanes y < 127.5, the same operations in the same order.
inline v128_t exp2_4(v128_t y) noexcept {
  using namespace exp_constants;
  const v128_t magic = wasm_f32x4_splat(12583039.0f);  // 1.5 * 2^23 + 127
  y = wasm_f32x4_pmax(y, wasm_f32x4_splat(kExp2Min));  // y < kExp2Min ? kExp2Min : y
  const v128_t t = wasm_f32x4_add(y, magic);
  const v128_t f = wasm_f32x4_sub(y, wasm_f32x4_sub(t, magic));
  const v128_t f2 = wasm_f32x4_mul(f, f);
  const v128_t a = madd(f, wasm_f32x4_splat(kE3), wasm_f32x4_splat(kE2));
  const v128_t b = madd(f, wasm_f32x4_splat(kE5), wasm_f32x4_splat(kE4));
  const v128_t r = madd(f2, madd(f2, wasm_f32x4_splat(kE6), b), a);
  const v128_t s = madd(f2, r, wasm_f32x4_mul(f, wasm_f32x4_splat(kE1)));
  return wasm_f32x4_mul(wasm_f32x4_add(s, wasm_f32x4_splat(1.0f)), wasm_i32x4_shl(t, 23));
}

// Twin of scalar::exp_approx for x <= 88 (its contract; its +inf above 88.38 is not copied).
inline v128_t exp4(v128_t x) noexcept {
  return exp2_4(wasm_f32x4_mul(x, wasm_f32x4_splat(exp_constants::kLog2e)));
}

// out[i] = E(x[i] - shift) (Store; out may be x), returns the sum: the loop of exp_shift_sum,
// exp2_shift_sum and exp_shift_total. Four vectors per step: each exp is one long dependent
// chain, and the out-of-order window holds too few single-vector iterations to hide its latency.
template <v128_t (*E4)(v128_t), float (*E)(float), bool Store>
inline float shift_exp_sum(const float* x, float* out, float shift, int64_t n) noexcept {
  const v128_t vs = wasm_f32x4_splat(shift);
  v128_t acc = wasm_f32x4_splat(0.0f), acc1 = acc, acc2 = acc, acc3 = acc;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v128_t e0 = E4(wasm_f32x4_sub(wasm_v128_load(x + i), vs));
    const v128_t e1 = E4(wasm_f32x4_sub(wasm_v128_load(x + i + 4), vs));
    const v128_t e2 = E4(wasm_f32x4_sub(wasm_v128_load(x + i + 8), vs));
    const v128_t e3 = E4(wasm_f32x4_sub(wasm_v128_load(x + i + 12), vs));
    if (Store) {
      wasm_v128_store(out + i, e0), wasm_v128_store(out + i + 4, e1);
      wasm_v128_store(out + i + 8, e2), wasm_v128_store(out + i + 12, e3);
    }
    acc = wasm_f32x4_add(acc, e0), acc1 = wasm_f32x4_add(acc1, e1);
    acc2 = wasm_f32x4_add(acc2, e2), acc3 = wasm_f32x4_add(acc3, e3);
  }
  acc = wasm_f32x4_add(wasm_f32x4_add(acc, acc1), wasm_f32x4_add(acc2, acc3));
  for (; i + 4 <= n; i += 4) {
    const v128_t e = E4(wasm_f32x4_sub(wasm_v128_load(x + i), vs));
    if (Store) wasm_v128_store(out + i, e);
    acc = wasm_f32x4_add(acc, e);
  }
  float sum = hsum(acc);
  for (; i < n; ++i) {
    const float e = E(x[i] - shift);
    if (Store) out[i] = e;
    sum += e;
  }
  return sum;
}


// Twins of scalar::tanh_approx and sigmoid_approx, four lanes.
inline v128_t tanh4(v128_t x) noexcept {
  const v128_t c = wasm_f32x4_pmin(wasm_f32x4_pmax(x, wasm_f32x4_splat(-15.0f)), wasm_f32x4_splat(15.0f));
  const v128_t e = exp2_4(wasm_f32x4_mul(c, wasm_f32x4_splat(2.0f * exp_constants::kLog2e)));
  const v128_t one = wasm_f32x4_splat(1.0f);
  return wasm_f32x4_sub(one, wasm_f32x4_div(wasm_f32x4_splat(2.0f), wasm_f32x4_add(one, e)));
}
inline v128_t sigmoid4(v128_t x) noexcept {
  const v128_t e = exp4(wasm_f32x4_neg(wasm_f32x4_abs(x)));
  const v128_t one = wasm_f32x4_splat(1.0f);
  return wasm_f32x4_div(wasm_v128_bitselect(one, e, wasm_f32x4_ge(x, wasm_f32x4_splat(0.0f))), wasm_f32x4_add(one, e));
}

// Twins of scalar::gelu_erf_approx and gelu_tanh_approx, four lanes.
inline v128_t gelu_erf4(v128_t x) noexcept {
  using namespace erfc_constants;
  const v128_t z = wasm_f32x4_mul(wasm_f32x4_abs(x), wasm_f32x4_splat(kSqrtHalf));
  const v128_t one = wasm_f32x4_splat(1.0f), point5 = wasm_f32x4_splat(0.5f);
  const v128_t t = wasm_f32x4_div(one, wasm_f32x4_add(one, wasm_f32x4_mul(point5, z)));
  const v128_t t2 = wasm_f32x4_mul(t, t), t4 = wasm_f32x4_mul(t2, t2);
  const auto c = [](int i) { return wasm_f32x4_splat(kP[i]); };
  const v128_t p01 = madd(t, c(1), c(0)), p23 = madd(t, c(3), c(2)), p45 = madd(t, c(5), c(4));
  const v128_t p67 = madd(t, c(7), c(6)), p89 = madd(t, c(9), c(8));
  const v128_t p03 = madd(t2, p23, p01), p47 = madd(t2, p67, p45);
  const v128_t p = madd(t4, madd(t4, p89, p47), p03);
  const v128_t half = wasm_f32x4_mul(point5, wasm_f32x4_mul(t, exp4(wasm_f32x4_sub(p, wasm_f32x4_mul(z, z)))));
  const v128_t phi = wasm_v128_bitselect(wasm_f32x4_sub(one, half), half, wasm_f32x4_ge(x, wasm_f32x4_splat(0.0f)));
  return wasm_f32x4_mul(x, phi);
}
inline v128_t gelu_tanh4(v128_t x) noexcept {
  const v128_t cube = wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_splat(0.044715f), x), x), x);
  const v128_t u = wasm_f32x4_mul(wasm_f32x4_splat(0.79788456080286536f), wasm_f32x4_add(x, cube));
  return wasm_f32x4_mul(wasm_f32x4_mul(wasm_f32x4_splat(0.5f), x), wasm_f32x4_add(wasm_f32x4_splat(1.0f), tanh4(u)));
}

// Twin of scalar::abs_max: f32x4.max's NaN rule is an instruction sequence in V8 on x86-64, so
// the max is f32x4.pmax (one maxps) with NaN tracked by a compare. Four running maxima, as in
// max(): one waited on each maxps's latency, a cycle an element, most of quantize_i16's time.
// (A maximum of non-NaN magnitudes is the same in any order; a NaN anywhere gives NaN either way.)
inline float abs_max(const float* x, int64_t n) noexcept {
  int64_t i = 0;
  v128_t m = wasm_f32x4_splat(0.0f), m1 = m, m2 = m, m3 = m, nan = m;
  for (; i + 16 <= n; i += 16) {
    const v128_t v0 = wasm_f32x4_abs(wasm_v128_load(x + i)), v1 = wasm_f32x4_abs(wasm_v128_load(x + i + 4));
    const v128_t v2 = wasm_f32x4_abs(wasm_v128_load(x + i + 8)), v3 = wasm_f32x4_abs(wasm_v128_load(x + i + 12));
    m = wasm_f32x4_pmax(m, v0), m1 = wasm_f32x4_pmax(m1, v1), m2 = wasm_f32x4_pmax(m2, v2), m3 = wasm_f32x4_pmax(m3, v3);
    nan = wasm_v128_or(nan, wasm_v128_or(wasm_v128_or(wasm_f32x4_ne(v0, v0), wasm_f32x4_ne(v1, v1)),
                                         wasm_v128_or(wasm_f32x4_ne(v2, v2), wasm_f32x4_ne(v3, v3))));
  }
  m = wasm_f32x4_pmax(wasm_f32x4_pmax(m, m1), wasm_f32x4_pmax(m2, m3));
  for (; i + 4 <= n; i += 4) {
    const v128_t v = wasm_f32x4_abs(wasm_v128_load(x + i));
    m = wasm_f32x4_pmax(m, v);
    nan = wasm_v128_or(nan, wasm_f32x4_ne(v, v));
  }
  float amax = wasm_v128_any_true(nan) ? std::numeric_limits<float>::quiet_NaN() : hmax(m);
  for (; i < n; ++i) {
    const float a = std::fabs(x[i]);
    amax = a > amax || a != a ? a : amax;
  }
  return amax;
}

// Four of quantize_i16's int32s: round-half-even(p[i] * inv) by adding 1.5 * 2^23, whose float
// sum holds the rounded integer in its low bits (exact here: |x * inv| <= 8191 << 2^22);
// i32x4.trunc_sat_f32x4_s is an instruction sequence in V8 on x86-64.
inline v128_t round_i16(const float* p, v128_t inv) noexcept {
  const v128_t magic = wasm_f32x4_splat(12582912.0f);  // 1.5 * 2^23
  return wasm_i32x4_sub(wasm_f32x4_add(wasm_f32x4_mul(wasm_v128_load(p), inv), magic), magic);
}

}  // namespace detail

inline float exp_approx(float x) noexcept { return scalar::exp_approx(x); }
inline float exp2_approx(float y) noexcept { return scalar::exp2_approx(y); }

inline float dot(const float* a, const float* b, int64_t n) noexcept {
  v128_t s0 = wasm_f32x4_splat(0.0f), s1 = s0, s2 = s0, s3 = s0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = madd(wasm_v128_load(a + i), wasm_v128_load(b + i), s0);
    s1 = madd(wasm_v128_load(a + i + 4), wasm_v128_load(b + i + 4), s1);
    s2 = madd(wasm_v128_load(a + i + 8), wasm_v128_load(b + i + 8), s2);
    s3 = madd(wasm_v128_load(a + i + 12), wasm_v128_load(b + i + 12), s3);
  }
  for (; i + 4 <= n; i += 4)
    s0 = madd(wasm_v128_load(a + i), wasm_v128_load(b + i), s0);
  float s = detail::hsum(wasm_f32x4_add(wasm_f32x4_add(s0, s1), wasm_f32x4_add(s2, s3)));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

inline void axpy(float alpha, const float* x, float* y, int64_t n) noexcept {
  const v128_t va = wasm_f32x4_splat(alpha);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    wasm_v128_store(y + i, madd(va, wasm_v128_load(x + i), wasm_v128_load(y + i)));
  for (; i < n; ++i) y[i] += alpha * x[i];
}

inline void scale(float* x, float alpha, int64_t n) noexcept {
  const v128_t va = wasm_f32x4_splat(alpha);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, wasm_f32x4_mul(wasm_v128_load(x + i), va));
  for (; i < n; ++i) x[i] *= alpha;
}

inline float max(const float* x, int64_t n) noexcept {
  // Four running maxima of four lanes (one would wait on each compare's latency), folded in the
  // scalar twin's order.
  v128_t m = wasm_f32x4_splat(-std::numeric_limits<float>::infinity()), m1 = m, m2 = m, m3 = m;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    m = wasm_f32x4_pmax(m, wasm_v128_load(x + i)), m1 = wasm_f32x4_pmax(m1, wasm_v128_load(x + i + 4));
    m2 = wasm_f32x4_pmax(m2, wasm_v128_load(x + i + 8)), m3 = wasm_f32x4_pmax(m3, wasm_v128_load(x + i + 12));
  }
  m = wasm_f32x4_pmax(wasm_f32x4_pmax(m, m1), wasm_f32x4_pmax(m2, m3));
  for (; i + 4 <= n; i += 4) m = wasm_f32x4_pmax(m, wasm_v128_load(x + i));
  float r = detail::hmax(m);
  for (; i < n; ++i) r = scalar::pmax(r, x[i]);
  return r;
}

inline float exp_shift_sum(float* x, float shift, int64_t n) noexcept {
  return detail::shift_exp_sum<detail::exp4, scalar::exp_approx, true>(x, x, shift, n);
}

inline float exp2_shift_sum(float* x, float shift, int64_t n) noexcept {
  return detail::shift_exp_sum<detail::exp2_4, scalar::exp2_approx, true>(x, x, shift, n);
}

inline float exp_shift_total(const float* x, float shift, int64_t n) noexcept {
  return detail::shift_exp_sum<detail::exp4, scalar::exp_approx, false>(x, nullptr, shift, n);
}

// One pass each (load, activate, store), not three over the array.
inline void tanh_inplace(float* x, int64_t n) noexcept {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, detail::tanh4(wasm_v128_load(x + i)));
  for (; i < n; ++i) x[i] = scalar::tanh_approx(x[i]);
}
inline void gelu_erf_inplace(float* x, int64_t n) noexcept {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, detail::gelu_erf4(wasm_v128_load(x + i)));
  for (; i < n; ++i) x[i] = scalar::gelu_erf_approx(x[i]);
}
inline void gelu_tanh_inplace(float* x, int64_t n) noexcept {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) wasm_v128_store(x + i, detail::gelu_tanh4(wasm_v128_load(x + i)));
  for (; i < n; ++i) x[i] = scalar::gelu_tanh_approx(x[i]);
}
inline void sigmoid_sum(const float* a, const float* b, float* s, int64_t n) noexcept {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    wasm_v128_store(s + i, detail::sigmoid4(wasm_f32x4_add(wasm_v128_load(a + i), wasm_v128_load(b + i))));
  for (; i < n; ++i) s[i] = scalar::sigmoid_approx(a[i] + b[i]);
}

// Twin of scalar::tanh_dot_rows: each row's sum in dot()'s order (so the bits of dot(v, t, H)
// over the stored tanhs), with no pass over the tanhs in memory between.
inline void tanh_dot_rows(const float* q, const float* k, int64_t ldk, const float* v, int64_t H, int64_t n,
                          float* out, float* t) noexcept {
  for (int64_t j = 0; j < n; ++j) {
    const float* kj = k + j * ldk;
    float* tj = t ? t + j * H : nullptr;
    v128_t s[4] = {wasm_f32x4_splat(0.0f), wasm_f32x4_splat(0.0f), wasm_f32x4_splat(0.0f), wasm_f32x4_splat(0.0f)};
    auto at = [&](int64_t i, v128_t& acc) {
      const v128_t th = detail::tanh4(wasm_f32x4_add(wasm_v128_load(q + i), wasm_v128_load(kj + i)));
      if (tj) wasm_v128_store(tj + i, th);
      acc = madd(wasm_v128_load(v + i), th, acc);
    };
    int64_t h = 0;
    for (; h + 16 <= H; h += 16)
      for (int u = 0; u < 4; ++u) at(h + 4 * u, s[u]);
    for (; h + 4 <= H; h += 4) at(h, s[0]);
    float sum = detail::hsum(wasm_f32x4_add(wasm_f32x4_add(s[0], s[1]), wasm_f32x4_add(s[2], s[3])));
    for (; h < H; ++h) {
      const float th = scalar::tanh_approx(q[h] + kj[h]);
      if (tj) tj[h] = th;
      sum += v[h] * th;
    }
    out[j] = sum;
  }
}

// Twin of scalar::online_softmax4 (base 2): the four rows' maxima, alphas and sums as lanes of
// one vector (one vector exp2 for the four alphas, no branch per row); each row's exp2_shift_sum
// is the same as the scalar one's, so the rows' values match bit for bit and the sums to rounding.
inline bool online_softmax4(float* s, int64_t ld, int64_t w, float* run_max, float* run_sum,
                            float* alpha, int rows = 4) noexcept {
  const v128_t ninf = wasm_f32x4_splat(-std::numeric_limits<float>::infinity());
  // With fewer rows, the missing ones read row 0 (their lanes are dropped below).
  float* const s1 = rows > 1 ? s + ld : s;
  float* const s2 = rows > 2 ? s + 2 * ld : s;
  float* const s3 = rows > 3 ? s + 3 * ld : s;
  v128_t m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
  int64_t i = 0;
  for (; i + 4 <= w; i += 4) {
    m0 = wasm_f32x4_pmax(m0, wasm_v128_load(s + i));
    m1 = wasm_f32x4_pmax(m1, wasm_v128_load(s1 + i));
    m2 = wasm_f32x4_pmax(m2, wasm_v128_load(s2 + i));
    m3 = wasm_f32x4_pmax(m3, wasm_v128_load(s3 + i));
  }
  // Reduce each row's lanes, transposed so lane r ends up holding row r's max.
  const v128_t t01 = wasm_f32x4_pmax(wasm_i32x4_shuffle(m0, m1, 0, 1, 4, 5), wasm_i32x4_shuffle(m0, m1, 2, 3, 6, 7));
  const v128_t t23 = wasm_f32x4_pmax(wasm_i32x4_shuffle(m2, m3, 0, 1, 4, 5), wasm_i32x4_shuffle(m2, m3, 2, 3, 6, 7));
  v128_t m = wasm_f32x4_pmax(wasm_i32x4_shuffle(t01, t23, 0, 2, 4, 6), wasm_i32x4_shuffle(t01, t23, 1, 3, 5, 7));
  if (i < w) {  // tails (the attention kernel's tiles are multiples of 8 wide: never)
    alignas(16) float tail[4];
    wasm_v128_store(tail, m);
    for (int r = 0; r < rows; ++r)
      for (int64_t j = i; j < w; ++j) tail[r] = tail[r] < s[r * ld + j] ? s[r * ld + j] : tail[r];
    m = wasm_v128_load(tail);
  }
  // Fewer rows: the running max and sum pass through a 4-lane copy whose missing lanes stay -inf
  // and 0 (nothing visible), so every present lane computes exactly what it would among four.
  alignas(16) float max_rows[4], sum_rows[4];
  float* const max_at = rows == 4 ? run_max : max_rows;
  float* const sum_at = rows == 4 ? run_sum : sum_rows;
  if (rows < 4) {
    for (int r = 0; r < 4; ++r) {
      max_rows[r] = r < rows ? run_max[r] : -std::numeric_limits<float>::infinity();
      sum_rows[r] = r < rows ? run_sum[r] : 0.0f;
    }
    m = wasm_v128_bitselect(m, ninf, wasm_i32x4_gt(wasm_i32x4_splat(rows), wasm_i32x4_make(0, 1, 2, 3)));
  }
  const v128_t old_max = wasm_v128_load(max_at);
  m = wasm_f32x4_pmax(old_max, m);
  const v128_t visible = wasm_f32x4_ne(m, ninf);
  const v128_t shift = wasm_v128_and(m, visible);  // 0 for rows with nothing visible
  const v128_t a = wasm_v128_bitselect(
      detail::exp2_4(wasm_v128_and(wasm_f32x4_sub(old_max, m), visible)),
      wasm_f32x4_splat(1.0f), visible);
  const v128_t sums = wasm_f32x4_make(exp2_shift_sum(s, wasm_f32x4_extract_lane(shift, 0), w),
                                      rows > 1 ? exp2_shift_sum(s1, wasm_f32x4_extract_lane(shift, 1), w) : 0.0f,
                                      rows > 2 ? exp2_shift_sum(s2, wasm_f32x4_extract_lane(shift, 2), w) : 0.0f,
                                      rows > 3 ? exp2_shift_sum(s3, wasm_f32x4_extract_lane(shift, 3), w) : 0.0f);
  wasm_v128_store(alpha, a);
  wasm_v128_store(sum_at, madd(wasm_v128_load(sum_at), a, sums));
  wasm_v128_store(max_at, m);
  if (rows < 4)
    for (int r = 0; r < rows; ++r) run_sum[r] = sum_rows[r], run_max[r] = max_rows[r];
  return wasm_v128_any_true(visible);
}

inline void mask_bytes(float* x, const uint8_t* m, bool nonzero_blocks, int64_t n) noexcept {
  const v128_t blocked = wasm_f32x4_splat(-std::numeric_limits<float>::infinity());
  const v128_t zero = wasm_i32x4_splat(0);
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const v128_t bytes = wasm_v128_load32_zero(m + i);  // four mask bytes, widened to lanes
    const v128_t wide = wasm_u32x4_extend_low_u16x8(wasm_u16x8_extend_low_u8x16(bytes));
    const v128_t hit = nonzero_blocks ? wasm_i32x4_ne(wide, zero) : wasm_i32x4_eq(wide, zero);
    wasm_v128_store(x + i, wasm_v128_bitselect(blocked, wasm_v128_load(x + i), hit));
  }
  scalar::mask_bytes(x + i, m + i, nonzero_blocks, n - i);
}

inline int64_t find_nonfinite(const float* x, int64_t n, bool neg_inf_ok) noexcept {
  // x - x is 0 for finite x and NaN otherwise; a block with a bad lane goes to the scalar loop.
  const v128_t neg_inf = wasm_f32x4_splat(neg_inf_ok ? -std::numeric_limits<float>::infinity() : 0.0f);
  const v128_t zero = wasm_f32x4_splat(0.0f);
  auto ok = [&](const float* p) {
    const v128_t v = wasm_v128_load(p);
    return wasm_v128_or(wasm_f32x4_eq(wasm_f32x4_sub(v, v), zero), wasm_f32x4_eq(v, neg_inf));
  };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v128_t all = wasm_v128_and(wasm_v128_and(ok(x + i), ok(x + i + 4)),
                                     wasm_v128_and(ok(x + i + 8), ok(x + i + 12)));
    if (!wasm_i32x4_all_true(all)) break;
  }
  const int64_t j = scalar::find_nonfinite(x + i, n - i, neg_inf_ok);
  return j < 0 ? -1 : i + j;
}

// 16 floats per test: a beam's top-k pass over the vocabulary (3000 logits a row for the shipped
// Transformer) rarely finds a new entry, and scalar it was 1.6 ns a logit, 5% of a beam-5 translation.
inline int64_t find_above(const float* x, int64_t n, float bar) noexcept {
  const v128_t b = wasm_f32x4_splat(bar);
  auto gt = [&](const float* p) { return wasm_f32x4_gt(wasm_v128_load(p), b); };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    if (wasm_v128_any_true(wasm_v128_or(wasm_v128_or(gt(x + i), gt(x + i + 4)), wasm_v128_or(gt(x + i + 8), gt(x + i + 12)))))
      break;
  return i + scalar::find_above(x + i, n - i, bar);
}

// Twin of scalar::block_max16: a block's four vectors folded lane by lane, then detail::hmax.
inline void block_max16(const float* x, int64_t n, float* bm) noexcept {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const v128_t a = wasm_f32x4_pmax(wasm_v128_load(x + i), wasm_v128_load(x + i + 4));
    const v128_t b = wasm_f32x4_pmax(wasm_v128_load(x + i + 8), wasm_v128_load(x + i + 12));
    *bm++ = detail::hmax(wasm_f32x4_pmax(a, b));
  }
  scalar::block_max16(x + i, n - i, bm);
}

// Twin of scalar::gemm_4x8: eight f32x4 accumulators (4 rows x 8 columns) stay in registers
// while the K loop streams one 8-wide row of b and four broadcasts of A per step; A's rows sit
// at constant offsets from one pointer, which saves V8 an address computation per broadcast.
template <int64_t RS, int64_t CS>
inline void gemm_4x8(int64_t K, const float* a, const float* b, int64_t ldb, float* c, int64_t ldc,
                     int64_t n, bool accumulate) noexcept {
  if (n != 8) {
    scalar::gemm_4x8<RS, CS>(K, a, b, ldb, c, ldc, n, accumulate);
    return;
  }
  v128_t c00 = wasm_f32x4_splat(0.0f), c01 = c00, c10 = c00, c11 = c00;
  v128_t c20 = c00, c21 = c00, c30 = c00, c31 = c00;
  float* c0 = c;
  float* c1 = c + ldc;
  float* c2 = c + 2 * ldc;
  float* c3 = c + 3 * ldc;
  if (accumulate) {
    c00 = wasm_v128_load(c0), c01 = wasm_v128_load(c0 + 4);
    c10 = wasm_v128_load(c1), c11 = wasm_v128_load(c1 + 4);
    c20 = wasm_v128_load(c2), c21 = wasm_v128_load(c2 + 4);
    c30 = wasm_v128_load(c3), c31 = wasm_v128_load(c3 + 4);
  }
  for (const float* end = a + K * CS; a != end; a += CS, b += ldb) {
    const v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 4);
    v128_t x = wasm_v128_load32_splat(a);
    c00 = madd(x, b0, c00);
    c01 = madd(x, b1, c01);
    x = wasm_v128_load32_splat(a + RS);
    c10 = madd(x, b0, c10);
    c11 = madd(x, b1, c11);
    x = wasm_v128_load32_splat(a + 2 * RS);
    c20 = madd(x, b0, c20);
    c21 = madd(x, b1, c21);
    x = wasm_v128_load32_splat(a + 3 * RS);
    c30 = madd(x, b0, c30);
    c31 = madd(x, b1, c31);
  }
  wasm_v128_store(c0, c00), wasm_v128_store(c0 + 4, c01);
  wasm_v128_store(c1, c10), wasm_v128_store(c1 + 4, c11);
  wasm_v128_store(c2, c20), wasm_v128_store(c2 + 4, c21);
  wasm_v128_store(c3, c30), wasm_v128_store(c3 + 4, c31);
}

// gemm_1xn's blocks NB at a time: 2 NB accumulators, independent sums in flight where one
// block's two would wait on each other's multiply-add.
template <int NB, int64_t CS>
inline void gemm_1x8n(int64_t K, const float* a, const float* b, int64_t bstep, int64_t ldb, float* c,
                      bool accumulate) noexcept {
  v128_t c0[NB], c1[NB];
  for (int i = 0; i < NB; ++i) {
    c0[i] = accumulate ? wasm_v128_load(c + 8 * i) : wasm_f32x4_splat(0.0f);
    c1[i] = accumulate ? wasm_v128_load(c + 8 * i + 4) : wasm_f32x4_splat(0.0f);
  }
  for (int64_t k = 0; k < K; ++k) {
    const v128_t x = wasm_v128_load32_splat(a + k * CS);
    for (int i = 0; i < NB; ++i) {
      const float* bk = b + i * bstep + k * ldb;
      c0[i] = madd(x, wasm_v128_load(bk), c0[i]);
      c1[i] = madd(x, wasm_v128_load(bk + 4), c1[i]);
    }
  }
  for (int i = 0; i < NB; ++i) wasm_v128_store(c + 8 * i, c0[i]), wasm_v128_store(c + 8 * i + 4, c1[i]);
}

// Twin of scalar::gemm_1xn: full blocks four at a time (eight accumulators, as gemm_4x8's), the
// rest one to three at a time, a partial last block by the scalar twin; the same order per
// element, so the same bits as gemm_4x8's row 0. A GPT-2-shaped int8 checkpoint generating at
// 1000 tokens of context, Chromium 156, Zen 5: 14.9 -> 11.0 ms a token (SIMD128), 12.6 -> 11.9
// (relaxed) against groups of 4; what is left streams the 74 MB fp32 KV cache a token.
template <int64_t CS>
inline void gemm_1xn(int64_t K, const float* a, const float* b, int64_t bstep, int64_t ldb, float* c, int64_t n,
                     bool accumulate) noexcept {
  int64_t j = 0;
  for (; j + 32 <= n; j += 32) gemm_1x8n<4, CS>(K, a, b + j / 8 * bstep, bstep, ldb, c + j, accumulate);
  switch ((n - j) / 8) {
    case 3: gemm_1x8n<3, CS>(K, a, b + j / 8 * bstep, bstep, ldb, c + j, accumulate); j += 24; break;
    case 2: gemm_1x8n<2, CS>(K, a, b + j / 8 * bstep, bstep, ldb, c + j, accumulate); j += 16; break;
    case 1: gemm_1x8n<1, CS>(K, a, b + j / 8 * bstep, bstep, ldb, c + j, accumulate); j += 8; break;
    default: break;
  }
  if (j < n) scalar::gemm_1xn<CS>(K, a, b + j / 8 * bstep, bstep, ldb, c + j, n - j, accumulate);
}

// Twin of scalar::quantize_i16: the same float multiply and round-half-even, so the same int16s.
// 1.1 -> 0.3 ns an element against plain SIMD (Node 20, AMD EPYC Zen 5; a decoder step quantises
// 30K), by detail::abs_max and detail::round_i16.
inline float quantize_i16(const float* x, int64_t n, int64_t np, int16_t* xq) noexcept {
  float scale;
  const float inv = scalar::q16_factor(detail::abs_max(x, n), &scale);
  const int64_t m = inv != 0.0f ? n : 0;
  const v128_t vinv = wasm_f32x4_splat(inv);
  int64_t j = 0;
  for (; j + 8 <= m; j += 8)
    wasm_v128_store(xq + j, wasm_i16x8_narrow_i32x4(detail::round_i16(x + j, vinv), detail::round_i16(x + j + 4, vinv)));
  for (; j < m; ++j) xq[j] = static_cast<int16_t>(std::nearbyint(x[j] * inv));
  for (; j < np; ++j) xq[j] = 0;
  return scale;
}

// Twin of scalar::quantize_split_i16: quantize_i16's rounding, then x + 8192's two 7-bit halves
// narrowed to bytes, 16 at a time. The int8 product's relaxed (quads) path takes only these
// bytes, so writing and rereading the int16s between quantize_i16 and split_i16 went.
inline float quantize_split_i16(const float* x, int64_t n, int64_t np, uint8_t* hi, uint8_t* lo) noexcept {
  float scale;
  const float inv = scalar::q16_factor(detail::abs_max(x, n), &scale);
  const int64_t m = inv != 0.0f ? n : 0;
  const v128_t vinv = wasm_f32x4_splat(inv), bias = wasm_i32x4_splat(8192), low7 = wasm_i32x4_splat(127);
  auto bytes = [](v128_t a, v128_t b, v128_t c, v128_t d) {
    return wasm_u8x16_narrow_i16x8(wasm_i16x8_narrow_i32x4(a, b), wasm_i16x8_narrow_i32x4(c, d));
  };
  int64_t j = 0;
  for (; j + 16 <= m; j += 16) {
    v128_t v[4];
    for (int i = 0; i < 4; ++i) v[i] = wasm_i32x4_add(detail::round_i16(x + j + 4 * i, vinv), bias);
    wasm_v128_store(hi + j, bytes(wasm_u32x4_shr(v[0], 7), wasm_u32x4_shr(v[1], 7), wasm_u32x4_shr(v[2], 7), wasm_u32x4_shr(v[3], 7)));
    wasm_v128_store(lo + j, bytes(wasm_v128_and(v[0], low7), wasm_v128_and(v[1], low7), wasm_v128_and(v[2], low7), wasm_v128_and(v[3], low7)));
  }
  for (; j < m; ++j) scalar::split_one(static_cast<int16_t>(std::nearbyint(x[j] * inv)), hi + j, lo + j);
  for (; j < np; ++j) scalar::split_one(0, hi + j, lo + j);
  return scale;
}

// Twin of scalar::gemm_6x8: gemm_4x8's loop for six rows, twelve accumulators. With relaxed
// SIMD's fused madd that is 15 live vectors, within x86-64's sixteen XMM registers, and the
// attention tiles ran at 68-70 GFLOP/s against gemm_4x8's 63-64 (Chromium 156, AMD Zen 5, the
// FMA peak 67). With a separate multiply and add each product needs a 16th register: it spilled,
// 38 GFLOP/s, so only the relaxed builds use it (kernels::kWideRows).
template <int64_t RS, int64_t CS>
inline void gemm_6x8(int64_t K, const float* a, const float* b, int64_t ldb, float* c, int64_t ldc,
                     int64_t n, bool accumulate) noexcept {
  if (n != 8) {
    scalar::gemm_6x8<RS, CS>(K, a, b, ldb, c, ldc, n, accumulate);
    return;
  }
  v128_t c00 = wasm_f32x4_splat(0.0f), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  v128_t c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  if (accumulate) {
    c00 = wasm_v128_load(c), c01 = wasm_v128_load(c + 4);
    c10 = wasm_v128_load(c + ldc), c11 = wasm_v128_load(c + ldc + 4);
    c20 = wasm_v128_load(c + 2 * ldc), c21 = wasm_v128_load(c + 2 * ldc + 4);
    c30 = wasm_v128_load(c + 3 * ldc), c31 = wasm_v128_load(c + 3 * ldc + 4);
    c40 = wasm_v128_load(c + 4 * ldc), c41 = wasm_v128_load(c + 4 * ldc + 4);
    c50 = wasm_v128_load(c + 5 * ldc), c51 = wasm_v128_load(c + 5 * ldc + 4);
  }
  for (const float* end = a + K * CS; a != end; a += CS, b += ldb) {
    const v128_t b0 = wasm_v128_load(b), b1 = wasm_v128_load(b + 4);
    v128_t x = wasm_v128_load32_splat(a);
    c00 = madd(x, b0, c00), c01 = madd(x, b1, c01);
    x = wasm_v128_load32_splat(a + RS);
    c10 = madd(x, b0, c10), c11 = madd(x, b1, c11);
    x = wasm_v128_load32_splat(a + 2 * RS);
    c20 = madd(x, b0, c20), c21 = madd(x, b1, c21);
    x = wasm_v128_load32_splat(a + 3 * RS);
    c30 = madd(x, b0, c30), c31 = madd(x, b1, c31);
    x = wasm_v128_load32_splat(a + 4 * RS);
    c40 = madd(x, b0, c40), c41 = madd(x, b1, c41);
    x = wasm_v128_load32_splat(a + 5 * RS);
    c50 = madd(x, b0, c50), c51 = madd(x, b1, c51);
  }
  wasm_v128_store(c, c00), wasm_v128_store(c + 4, c01);
  wasm_v128_store(c + ldc, c10), wasm_v128_store(c + ldc + 4, c11);
  wasm_v128_store(c + 2 * ldc, c20), wasm_v128_store(c + 2 * ldc + 4, c21);
  wasm_v128_store(c + 3 * ldc, c30), wasm_v128_store(c + 3 * ldc + 4, c31);
  wasm_v128_store(c + 4 * ldc, c40), wasm_v128_store(c + 4 * ldc + 4, c41);
  wasm_v128_store(c + 5 * ldc, c50), wasm_v128_store(c + 5 * ldc + 4, c51);
}

// Twin of scalar::gemm_4x16: two gemm_4x8 blocks (sixteen f32x4 accumulators at once would
// spill on x86-64's sixteen XMM registers); each element sums in the same order, so the same bits.
template <int64_t RS, int64_t CS>
inline void gemm_4x16(int64_t K, const float* a, const float* b0, const float* b1, int64_t ldb, float* c,
                      int64_t ldc, bool accumulate) noexcept {
  gemm_4x8<RS, CS>(K, a, b0, ldb, c, ldc, 8, accumulate);
  gemm_4x8<RS, CS>(K, a, b1, ldb, c + 8, ldc, 8, accumulate);
}

// Twin of scalar::gemm_4x32: four gemm_4x8 blocks; the same bits.
template <int64_t RS, int64_t CS>
inline void gemm_4x32(int64_t K, const float* a, const float* b, int64_t ldb, float* c, int64_t ldc,
                      bool accumulate) noexcept {
  for (int64_t j = 0; j < 32; j += 8) gemm_4x8<RS, CS>(K, a, b + j, ldb, c + j, ldc, 8, accumulate);
}

namespace detail {
// One k-pair of gemm_q8_8 for R rows: the tile's 16 weight bytes at w (8 outputs x 2 k's),
// widened once, times each row's pair (a 32-bit splat from x + r ldx), into a0 (outputs 0-3)
// and a1 (4-7). Always inlined, so that the accumulators stay values.
// The bytes arrive as two v128.load8x8_s (x86: vpmovsxbw from memory), not one load and two
// extends (the high half's is a shuffle and a widening on x86): one vector operation fewer
// beside the step's 2R dot products and 2R adds, which Intel issues on three vector ports.
// Intel Xeon (Emerald Rapids), Node 20, best of 10 processes each: the 5-row pass 1.24 ->
// 1.16 ms (1.07x); beam-5 Transformer translations 1.04-1.05x (10 and 20 words). Not measured
// on AMD, where it also saves an operation.
template <int R>
[[gnu::always_inline]] inline void q8_pair_step(const int8_t* w, const int16_t* x, int64_t ldx, v128_t* a0,
                                                v128_t* a1) noexcept {
  const v128_t lo = wasm_i16x8_load8x8(w), hi = wasm_i16x8_load8x8(w + 8);
  for (int r = 0; r < R; ++r) {
    const v128_t xs = wasm_v128_load32_splat(x + r * ldx);
    a0[r] = wasm_i32x4_add(a0[r], wasm_i32x4_dot_i16x8(xs, lo));
    a1[r] = wasm_i32x4_add(a1[r], wasm_i32x4_dot_i16x8(xs, hi));
  }
}

template <int R>
[[gnu::always_inline]] inline void q8_pair_store(const v128_t* a0, const v128_t* a1, int32_t* out) noexcept {
  for (int r = 0; r < R; ++r) {
    wasm_v128_store(out + 8 * r, a0[r]);
    wasm_v128_store(out + 8 * r + 4, a1[r]);
  }
}
}  // namespace detail

// Twin of scalar::gemm_q8_8: per k-pair the tile's 16 weight bytes, loaded and widened once and
// shared by the R rows; each row's pair is one 32-bit splat (v128.load32_splat), and i32x4.dot_i16x8_s
// gives four outputs' 2 multiply-adds at once, so no horizontal sums. 2 accumulators per row; R <= 5
// (at 5 rows, 2R + 3 = 13 vectors). Called out of line (nn/gemm.cpp's q8_pairs_call), 5 rows keep
// them in registers in Node 20 and Chromium 156 (a pass of 5 rows 1.38x / 1.25x faster than 2 + 3;
// inlined into its caller, Node 20's V8 spilled them, 0.6x). One step per k-pair: two per loop
// iteration ran beam-5 translations 1.25x slower in Node 20 and no faster in Chromium 156.
// Pointers stepped, not an index scaled for each address: V8 then adds no shift per step.
// Integer sums, so bit-identical.
template <int R>
inline void gemm_q8_8(const int16_t* x, int64_t ldx, const int8_t* w, int64_t kp, int32_t* out) noexcept {
  v128_t a0[R], a1[R];
  for (int r = 0; r < R; ++r) a0[r] = a1[r] = wasm_i32x4_splat(0);
  if constexpr (R == 1) {
    // One row: two k-pairs a step, into two more accumulators (10 vectors, no spills), so the
    // loop's own instructions are spread over twice the work. Greedy translations (all one-row
    // products) 1.06x faster, Node 20, Intel Xeon; integer sums, so the same bits.
    v128_t b0[1] = {a0[0]}, b1[1] = {a0[0]};
    for (const int8_t* end = w + 32 * (kp / 2); w != end; w += 32, x += 4) {
      detail::q8_pair_step<1>(w, x, ldx, a0, a1);
      detail::q8_pair_step<1>(w + 16, x + 2, ldx, b0, b1);
    }
    if (kp % 2) detail::q8_pair_step<1>(w, x, ldx, a0, a1);
    a0[0] = wasm_i32x4_add(a0[0], b0[0]), a1[0] = wasm_i32x4_add(a1[0], b1[0]);
  } else {
    for (const int8_t* end = w + 16 * kp; w != end; w += 16, x += 2) detail::q8_pair_step<R>(w, x, ldx, a0, a1);
  }
  detail::q8_pair_store<R>(a0, a1, out);
}

// Twin of scalar::gemm_q8_8_sparse: gemm_q8_8's step with the weights' pair taken from the list.
// Integer sums, so bit-identical.
template <int R>
inline void gemm_q8_8_sparse(const int16_t* x, int64_t ldx, const int8_t* w, const int32_t* pairs, int64_t n,
                             int32_t* out) noexcept {
  v128_t a0[R], a1[R];
  for (int r = 0; r < R; ++r) a0[r] = a1[r] = wasm_i32x4_splat(0);
  for (const int32_t* end = pairs + n; pairs != end; ++pairs, x += 2)
    detail::q8_pair_step<R>(w + 16 * *pairs, x, ldx, a0, a1);
  detail::q8_pair_store<R>(a0, a1, out);
}

// Twin of scalar::scale_q8_8: the same multiplies and adds, 4 lanes at a time, so the same bits
// (ReLU as f32x4.pmax(0, v): 0 for NaN and -0, as the twin); a partial tile (the last of a width
// not a multiple of 8) by the scalar twin.
template <int R>
inline void scale_q8_8(const int32_t* acc, const float* sx, const float* w_scale, const float* bias, bool relu, float* y,
                       int64_t ldy, int64_t n) noexcept {
  if (n != 8) {
    scalar::scale_q8_8<R>(acc, sx, w_scale, bias, relu, y, ldy, n);
    return;
  }
  const v128_t w0 = wasm_v128_load(w_scale), w1 = wasm_v128_load(w_scale + 4), zero = wasm_f32x4_splat(0.0f);
  const v128_t b0 = bias ? wasm_v128_load(bias) : zero, b1 = bias ? wasm_v128_load(bias + 4) : zero;
  for (int r = 0; r < R; ++r) {
    const v128_t s = wasm_f32x4_splat(sx[r]);
    v128_t v0 = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_v128_load(acc + 8 * r)), wasm_f32x4_mul(s, w0));
    v128_t v1 = wasm_f32x4_mul(wasm_f32x4_convert_i32x4(wasm_v128_load(acc + 8 * r + 4)), wasm_f32x4_mul(s, w1));
    if (bias) v0 = wasm_f32x4_add(v0, b0), v1 = wasm_f32x4_add(v1, b1);
    if (relu) v0 = wasm_f32x4_pmax(zero, v0), v1 = wasm_f32x4_pmax(zero, v1);
    wasm_v128_store(y + r * ldy, v0);
    wasm_v128_store(y + r * ldy + 4, v1);
  }
}

#if defined(ATTNLAB_RELAXED_SIMD)
// Twin of scalar::gemm_q8_quad, relaxed builds only: per k-quad two loads of the tile's weights
// (columns 0-3 and 4-7), shared by the R rows, and per row two byte splats and four relaxed dot
// products of 16 multiply-adds each, where gemm_q8_8 takes four dot_i16x8 and four adds for the
// same 32 of x's products. Zen 5, Chromium 156, a 2 MB tile stream (K = 256): 70-73 GMAC/s at 2-3
// rows against gemm_q8_8's 52-56 at 3-5; 4 rows (16 accumulators) spill: 46. Integer sums, so the
// same bits as the scalar twin and as gemm_q8_8.
template <int R>
inline void gemm_q8_quad(const uint8_t* hi, const uint8_t* lo, int64_t ldx, const int8_t* w, int64_t kq,
                         const int8_t* sums, int32_t* out) noexcept {
  v128_t h0[R], h1[R], l0[R], l1[R];
  for (int r = 0; r < R; ++r) h0[r] = h1[r] = l0[r] = l1[r] = wasm_i32x4_splat(0);
  int64_t q = 0;
  if constexpr (R == 1) {
    // One row alone has four accumulators, each a chain of dependent dot products: too few to
    // keep the dot product's pipes busy. Odd k-quads go into four more (integer sums: the same
    // bits in any order). Greedy translations, all one-row products: 1.13-1.21x (Chromium 156).
    v128_t h0b = h0[0], h1b = h0[0], l0b = h0[0], l1b = h0[0];
    for (; q + 2 <= kq; q += 2) {
      const v128_t w0 = wasm_v128_load(w + 32 * q), w1 = wasm_v128_load(w + 32 * q + 16);
      const v128_t w2 = wasm_v128_load(w + 32 * q + 32), w3 = wasm_v128_load(w + 32 * q + 48);
      const v128_t xh = wasm_v128_load32_splat(hi + 4 * q), xl = wasm_v128_load32_splat(lo + 4 * q);
      const v128_t yh = wasm_v128_load32_splat(hi + 4 * q + 4), yl = wasm_v128_load32_splat(lo + 4 * q + 4);
      h0[0] = dot_i8i7_add(w0, xh, h0[0]);
      h1[0] = dot_i8i7_add(w1, xh, h1[0]);
      l0[0] = dot_i8i7_add(w0, xl, l0[0]);
      l1[0] = dot_i8i7_add(w1, xl, l1[0]);
      h0b = dot_i8i7_add(w2, yh, h0b);
      h1b = dot_i8i7_add(w3, yh, h1b);
      l0b = dot_i8i7_add(w2, yl, l0b);
      l1b = dot_i8i7_add(w3, yl, l1b);
    }
    h0[0] = wasm_i32x4_add(h0[0], h0b), h1[0] = wasm_i32x4_add(h1[0], h1b);
    l0[0] = wasm_i32x4_add(l0[0], l0b), l1[0] = wasm_i32x4_add(l1[0], l1b);
  }
  for (; q < kq; ++q) {
    const v128_t w0 = wasm_v128_load(w + 32 * q), w1 = wasm_v128_load(w + 32 * q + 16);
    for (int r = 0; r < R; ++r) {
      const v128_t xh = wasm_v128_load32_splat(hi + r * ldx + 4 * q), xl = wasm_v128_load32_splat(lo + r * ldx + 4 * q);
      h0[r] = dot_i8i7_add(w0, xh, h0[r]);
      h1[r] = dot_i8i7_add(w1, xh, h1[r]);
      l0[r] = dot_i8i7_add(w0, xl, l0[r]);
      l1[r] = dot_i8i7_add(w1, xl, l1[r]);
    }
  }
  const v128_t s0 = wasm_i32x4_shl(wasm_v128_load(sums), 13), s1 = wasm_i32x4_shl(wasm_v128_load(sums + 16), 13);
  for (int r = 0; r < R; ++r) {
    wasm_v128_store(out + 8 * r, wasm_i32x4_sub(wasm_i32x4_add(wasm_i32x4_shl(h0[r], 7), l0[r]), s0));
    wasm_v128_store(out + 8 * r + 4, wasm_i32x4_sub(wasm_i32x4_add(wasm_i32x4_shl(h1[r], 7), l1[r]), s1));
  }
}

// Twin of scalar::gemm_q8_quad_sparse: gemm_q8_quad's step on the listed quads, without the
// offset's correction. Integer sums, so bit-identical.
template <int R>
inline void gemm_q8_quad_sparse(const uint8_t* hi, const uint8_t* lo, int64_t ldx, const int8_t* w, const int32_t* quads,
                                int64_t n, int32_t* out) noexcept {
  v128_t h0[R], h1[R], l0[R], l1[R];
  for (int r = 0; r < R; ++r) h0[r] = h1[r] = l0[r] = l1[r] = wasm_i32x4_splat(0);
  for (const int32_t* end = quads + n; quads != end; ++quads, hi += 4, lo += 4) {
    const int8_t* wq = w + 32 * *quads;
    const v128_t w0 = wasm_v128_load(wq), w1 = wasm_v128_load(wq + 16);
    for (int r = 0; r < R; ++r) {
      const v128_t xh = wasm_v128_load32_splat(hi + r * ldx), xl = wasm_v128_load32_splat(lo + r * ldx);
      h0[r] = dot_i8i7_add(w0, xh, h0[r]);
      h1[r] = dot_i8i7_add(w1, xh, h1[r]);
      l0[r] = dot_i8i7_add(w0, xl, l0[r]);
      l1[r] = dot_i8i7_add(w1, xl, l1[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    wasm_v128_store(out + 8 * r, wasm_i32x4_add(wasm_i32x4_shl(h0[r], 7), l0[r]));
    wasm_v128_store(out + 8 * r + 4, wasm_i32x4_add(wasm_i32x4_shl(h1[r], 7), l1[r]));
  }
}
#endif

}  // namespace attnlab::kernels::simd128
#endif
