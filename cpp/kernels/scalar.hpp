// Scalar reference kernels: the plain loops every other ISA is checked against. Header-only so
// the hot loops inline into their callers; natively, -O3 -march=native autovectorises the
// fixed-size blocks (gemm_4x8 with n == 8 becomes four 8-lane accumulators).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "exp_approx.hpp"

namespace attnlab::kernels::scalar {

inline float dot(const float* a, const float* b, int64_t n) noexcept {
  float s = 0.0f;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

inline void axpy(float alpha, const float* x, float* y, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

inline void scale(float* x, float alpha, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) x[i] *= alpha;
}

// SIMD128's f32x4.pmax: b where a < b, else a (NaN in b never wins; of +0 and -0, a stays).
inline float pmax(float a, float b) noexcept { return a < b ? b : a; }

// In SIMD128's order (16 running maxima, folded to 4, then (0, 2) and (1, 3), then the tail), so
// the twins agree even on which zero wins, and natively the lanes vectorise: one chain of
// dependent compares over a 2,900-word vocabulary was 40% of the tutorial GRU's loss.
inline float max(const float* x, int64_t n) noexcept {
  float m[16];
  for (float& v : m) v = -std::numeric_limits<float>::infinity();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) m[j] = pmax(m[j], x[i + j]);
  float m4[4];
  for (int j = 0; j < 4; ++j) m4[j] = pmax(pmax(m[j], m[4 + j]), pmax(m[8 + j], m[12 + j]));
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; ++j) m4[j] = pmax(m4[j], x[i + j]);
  float r = pmax(pmax(m4[0], m4[2]), pmax(m4[1], m4[3]));
  for (; i < n; ++i) r = pmax(r, x[i]);
  return r;
}

// 2^y for y < 127.5 (a base-2 softmax's y <= 0, and what exp_approx passes), y below kExp2Min
// (and -inf) give 0, NaN gives NaN. Attention folds log2(e) into its query scale, so its scores
// arrive in base 2. 2^f on f in [-1/2, 1/2] is its own polynomial (exp_constants::kE*), and 2^n
// needs no bias added. The SIMD loop of these is bound by its operation count, not its latency
// (the same time with 1 to 4 vectors in flight). One multiply-add fewer (1 + f q(f)) was
// 1.04e-7 off, past the 1e-7 this function promises. The SIMD twin does the same operations in
// the same order, so the same bits.
inline float exp2_approx(float y) noexcept {
  using namespace exp_constants;
  y = y < kExp2Min ? kExp2Min : y;  // as f32x4.pmax: NaN passes
  // Round to an integer by adding 1.5 * 2^23 + 127: n + 127 (0..254) lands in t's low mantissa
  // bits, already biased as 2^n's exponent.
  const float t = y + 12583039.0f;
  const float f = y - (t - 12583039.0f);  // exact, in [-1/2, 1/2]
  const float f2 = f * f;
  const float r = (f * kE3 + kE2) + f2 * ((f * kE5 + kE4) + f2 * kE6);
  const float s = f2 * r + f * kE1;  // 2^f - 1, added to 1 last: 8.8e-8 at most, not 1.04e-7
  uint32_t bits;
  std::memcpy(&bits, &t, sizeof bits);
  bits <<= 23;  // 2^n for n in [-127, 127]: n = -127 gives 0.0f
  float pow2n;
  std::memcpy(&pow2n, &bits, sizeof pow2n);
  return (s + 1.0f) * pow2n;
}

// exp(x) = 2^(x log2 e) for x <= 88 (a softmax's x - max <= 0, tanh's 2x in [-30, 30],
// sigmoid's -|x|), 0 below -88.03 and for -inf, NaN for NaN. Rounding x log2(e) to float (and
// log2(e) itself) moves the result by up to 7.3e-8 |x| relative, so the error is below
// 1e-7 + 7.3e-8 |x|: 1.1e-7 for |x| < 1, 2.2e-6 measured at x = -87, where exp is 1.6e-38 and no
// softmax, tanh or sigmoid can tell. In exchange the SIMD exp is 20 operations, not the 28 of
// the Cody-Waite reduction (x - n ln2 in two exact steps) and degree-7 polynomial it replaced:
// 0.98 -> 0.58-0.60 ns an element in Chromium 156's SIMD128, 0.84-0.85 -> 0.55 in Node 20
// (tests/bench/exp_kernels.mjs), bound by the operation count, not the latency (a probe of
// Estrin's scheme for the old polynomial was no faster).
// Above 2^127.5 (x > 88.38) the scalar gives +inf and the SIMD lanes are undefined.
inline float exp_approx(float x) noexcept {
  const float y = x * exp_constants::kLog2e;
  return y < 127.5f ? exp2_approx(y) : (y == y ? std::numeric_limits<float>::infinity() : y);
}

// The activations of the recurrent and additive-attention layers, on the exp kernel so every
// build computes them alike (libm's exp and tanh are also slow in WebAssembly).
// tanh(x) = 1 - 2 / (1 + exp(2x)), x clamped to [-15, 15] (tanh is +-1 in float beyond), with
// exp(2x) as 2^(x (2 log2 e)): doubling is exact, so one multiply, not two.
inline float tanh_approx(float x) noexcept {
  const float c = x < -15.0f ? -15.0f : (x > 15.0f ? 15.0f : x);  // as f32x4.pmax, .pmin: NaN passes
  return 1.0f - 2.0f / (1.0f + exp2_approx(c * (2.0f * exp_constants::kLog2e)));
}
// sigmoid(x) with e = exp(-|x|) <= 1 (no overflow): 1 / (1 + e) for x >= 0, e / (1 + e) below.
inline float sigmoid_approx(float x) noexcept {
  const float e = exp_approx(-std::fabs(x));
  return (x >= 0.0f ? 1.0f : e) / (1.0f + e);
}
// The GELUs of transformers' checkpoints, on the exp kernel, so that the scalar and SIMD128
// WebAssembly builds compute them alike (relaxed SIMD and native code may fuse multiply-adds;
// libm's erf was a third implementation) and fast: on normal values of sigma 1, the erf GELU with
// libm's erf took 4.3 ns an element in Node 20 and 5.0 in Chromium 156, this one's SIMD twin
// 2.3-2.4 (tests/bench/exp_kernels.mjs; libm's erf branches on |x|, so its time moves with the
// values: 4.8-15.8 ns for sigma 0.05-2 in Node).
// "gelu" (BERT's): x Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2, with erfc of z = |x| / sqrt 2 >= 0
// as erfc_constants says and reflected for x >= 0 (1 - erfc / 2): within 1.3e-7 max(1, |x|) of
// float64 (float's 0.5 x (1 + erf) with libm's erf: 1.05e-7), and no cancellation for x < 0.
inline float gelu_erf_approx(float x) noexcept {
  using namespace erfc_constants;
  const float z = std::fabs(x) * kSqrtHalf;
  const float t = 1.0f / (1.0f + 0.5f * z);
  // P(t) by Estrin's scheme (pairs, then t^2, then t^4): 4 dependent multiply-adds, not Horner's 9.
  const float t2 = t * t, t4 = t2 * t2;
  const float p01 = t * kP[1] + kP[0], p23 = t * kP[3] + kP[2], p45 = t * kP[5] + kP[4];
  const float p67 = t * kP[7] + kP[6], p89 = t * kP[9] + kP[8];
  const float p03 = t2 * p23 + p01, p47 = t2 * p67 + p45;
  const float p = t4 * (t4 * p89 + p47) + p03;
  const float half = 0.5f * (t * exp_approx(p - z * z));  // Phi(-|x|); 0 for |x| = inf
  return x * (x >= 0.0f ? 1.0f - half : half);
}
// "gelu_new" (GPT-2's): 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
inline float gelu_tanh_approx(float x) noexcept {
  const float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanh_approx(u));
}
inline void tanh_inplace(float* x, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) x[i] = tanh_approx(x[i]);
}
inline void gelu_erf_inplace(float* x, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) x[i] = gelu_erf_approx(x[i]);
}
inline void gelu_tanh_inplace(float* x, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) x[i] = gelu_tanh_approx(x[i]);
}
inline void sigmoid_sum(const float* a, const float* b, float* s, int64_t n) noexcept {
  for (int64_t i = 0; i < n; ++i) s[i] = sigmoid_approx(a[i] + b[i]);
}
// out[j] = dot(v, tanh(q + k_j)) for n rows k_j = k + j ldk of H: additive attention's scores.
// t (if not null, H per row) gets the tanhs, bit for bit tanh_approx's. The tanhs go through
// memory in blocks so that natively their loop vectorises apart from the ordered sum.
inline void tanh_dot_rows(const float* q, const float* k, int64_t ldk, const float* v, int64_t H, int64_t n,
                          float* out, float* t) noexcept {
  float block[256];
  for (int64_t j = 0; j < n; ++j) {
    const float* kj = k + j * ldk;
    float s = 0.0f;
    for (int64_t h0 = 0; h0 < H; h0 += 256) {
      const int64_t m = H - h0 < 256 ? H - h0 : 256;
      float* th = t ? t + j * H + h0 : block;
      for (int64_t h = 0; h < m; ++h) th[h] = tanh_approx(q[h0 + h] + kj[h0 + h]);
      for (int64_t h = 0; h < m; ++h) s += v[h0 + h] * th[h];
    }
    out[j] = s;
  }
}

// out[i] = E(x[i] - shift) (Store; out may be x), returns the sum: the loop of exp_shift_sum,
// exp2_shift_sum and exp_shift_total. Summed in SIMD128's order (16 partial sums, folded to 4,
// then (0 + 1) + (2 + 3), then the tail in order): the same bits as the twin, and natively the
// partial sums vectorise with the exps (one chain of 2,900 dependent adds per row was 8.5% of the
// tutorial GRU's training step).
template <float (*E)(float), bool Store>
inline float shift_exp_sum(const float* x, float* out, float shift, int64_t n) noexcept {
  float acc[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) {
      const float e = E(x[i + j] - shift);
      if (Store) out[i + j] = e;
      acc[j] += e;
    }
  float a4[4];
  for (int j = 0; j < 4; ++j) a4[j] = (acc[j] + acc[4 + j]) + (acc[8 + j] + acc[12 + j]);
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; ++j) {
      const float e = E(x[i + j] - shift);
      if (Store) out[i + j] = e;
      a4[j] += e;
    }
  float sum = (a4[0] + a4[1]) + (a4[2] + a4[3]);
  for (; i < n; ++i) {
    const float e = E(x[i] - shift);
    if (Store) out[i] = e;
    sum += e;
  }
  return sum;
}

inline float exp_shift_sum(float* x, float shift, int64_t n) noexcept {
  return shift_exp_sum<exp_approx, true>(x, x, shift, n);
}

inline float exp2_shift_sum(float* x, float shift, int64_t n) noexcept {
  return shift_exp_sum<exp2_approx, true>(x, x, shift, n);
}

inline float exp_shift_total(const float* x, float shift, int64_t n) noexcept {
  return shift_exp_sum<exp_approx, false>(x, nullptr, shift, n);
}

// One online-softmax step over a tile of four score rows (row r at s + r * ld, w wide), as the
// fused attention kernel takes it, in base 2 (its scores come pre-multiplied by log2(e)): per
// row, m = max(run_max, max(row)); the row becomes 2^(row - m), run_sum = run_sum * alpha +
// sum(row), run_max = m, where alpha = 2^(old run_max - m) rescales what was summed before (0 on
// the row's first visible tile). A row that has seen nothing but -inf keeps run_max = -inf,
// becomes zeros, and gets alpha = 1. Returns whether any row has a visible key.
// With rows < 4 only the first `rows` rows are read and written (alpha: the first `rows` too).
inline bool online_softmax4(float* s, int64_t ld, int64_t w, float* run_max, float* run_sum,
                            float* alpha, int rows = 4) noexcept {
  bool any = false;
  for (int r = 0; r < rows; ++r) {
    float* row = s + r * ld;
    const float rm = max(row, w), m = run_max[r] < rm ? rm : run_max[r];
    const bool visible = m != -std::numeric_limits<float>::infinity();
    any = any || visible;
    alpha[r] = visible ? exp2_approx(run_max[r] - m) : 1.0f;
    run_sum[r] = run_sum[r] * alpha[r] + exp2_shift_sum(row, visible ? m : 0.0f, w);
    run_max[r] = m;
  }
  return any;
}

// x[i] = -inf where the mask byte says "blocked": m[i] != 0 when nonzero_blocks, else m[i] == 0.
inline void mask_bytes(float* x, const uint8_t* m, bool nonzero_blocks, int64_t n) noexcept {
  const float blocked = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i)
    if ((m[i] != 0) == nonzero_blocks) x[i] = blocked;
}

// Index of the first NaN or +-inf in x[0..n) (-inf allowed when neg_inf_ok), or -1.
inline int64_t find_nonfinite(const float* x, int64_t n, bool neg_inf_ok) noexcept {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i)
    if (!(x[i] - x[i] == 0.0f) && !(neg_inf_ok && x[i] == neg_inf)) return i;
  return -1;
}

inline int64_t find_above(const float* x, int64_t n, float bar) noexcept {
  for (int64_t i = 0; i < n; ++i)
    if (x[i] > bar) return i;
  return n;
}

// bm[b] = the largest of x[16b, min(16b + 16, n)) for b < (n + 15) / 16. A whole block folds in
// SIMD128's order (four lanes of four, then lanes (0, 2) and (1, 3)), so the twins agree even on
// which zero or NaN wins; the last, partial block in order.
inline void block_max16(const float* x, int64_t n, float* bm) noexcept {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    float v[4];
    for (int j = 0; j < 4; ++j) v[j] = pmax(pmax(x[i + j], x[i + 4 + j]), pmax(x[i + 8 + j], x[i + 12 + j]));
    *bm++ = pmax(pmax(v[0], v[2]), pmax(v[1], v[3]));
  }
  if (i < n) {
    float r = x[i];
    for (++i; i < n; ++i) r = pmax(r, x[i]);
    *bm = r;
  }
}

// c[R][n] (+)= A[R][K] b[K][n], n <= 8, one element at a time in order k = 0, 1, ...: gemm_4x8's
// partial blocks (n < 8) and gemm_6x8. For n < 8, GCC would rather vectorise the K loop (then add
// lane by lane, in order) than the columns, so that is switched off here.
template <int R, int64_t RS, int64_t CS>
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-vectorize")))
#endif
inline void gemm_rx8(int64_t K, const float* a, const float* b, int64_t ldb, float* c, int64_t ldc,
                     int64_t n, bool accumulate) noexcept {
  float acc[R][8] = {};
  if (accumulate)
    for (int i = 0; i < R; ++i)
      for (int64_t j = 0; j < n; ++j) acc[i][j] = c[i * ldc + j];
  for (int64_t k = 0; k < K; ++k)
    for (int i = 0; i < R; ++i)
      for (int64_t j = 0; j < n; ++j) acc[i][j] += a[i * RS + k * CS] * b[k * ldb + j];
  for (int i = 0; i < R; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = acc[i][j];
}

// The register block of every matrix product here: c[4][n] = (accumulate ? c : 0) + A b for
// n <= 8, A[i][k] = a[i * RS + k * CS] (strides known at compile time, so a SIMD build addresses
// the four rows by constant offsets), b[k][j] = b[k * ldb + j], c row stride ldc. Each c element
// sums its K products in order k = 0, 1, ... so every ISA's version gives the same bits.
// For n < 8, GCC would rather vectorise the K loop (then add lane by lane, in order) than the
// columns, so that is switched off here.
template <int64_t RS, int64_t CS>
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-vectorize")))
#endif
inline void gemm_4x8(int64_t K, const float* a, const float* b, int64_t ldb, float* c, int64_t ldc,
                     int64_t n, bool accumulate) noexcept {
  if (n == 8) {
    // Eight columns as one 8-lane vector (GCC/Clang vector extension): natively one AVX register
    // per row. Left to the auto-vectoriser, instantiations came out differently (attention's
    // P V product did one row as scalar FMAs: native attention 38.7 GFLOP/s at H8 S512, now
    // 53.8). Without SIMD (the WASM scalar build) the lanes are plain scalar operations.
    using v8 = float __attribute__((vector_size(32)));
    v8 c0 = {}, c1 = {}, c2 = {}, c3 = {};
    if (accumulate) {
      std::memcpy(&c0, c, sizeof c0), std::memcpy(&c1, c + ldc, sizeof c1);
      std::memcpy(&c2, c + 2 * ldc, sizeof c2), std::memcpy(&c3, c + 3 * ldc, sizeof c3);
    }
    for (int64_t k = 0; k < K; ++k) {
      v8 bk;
      std::memcpy(&bk, b + k * ldb, sizeof bk);
      c0 += a[k * CS] * bk;
      c1 += a[RS + k * CS] * bk;
      c2 += a[2 * RS + k * CS] * bk;
      c3 += a[3 * RS + k * CS] * bk;
    }
    std::memcpy(c, &c0, sizeof c0), std::memcpy(c + ldc, &c1, sizeof c1);
    std::memcpy(c + 2 * ldc, &c2, sizeof c2), std::memcpy(c + 3 * ldc, &c3, sizeof c3);
    return;
  }
  gemm_rx8<4, RS, CS>(K, a, b, ldb, c, ldc, n, accumulate);
}

// One row of A against n columns of b held in 8-column blocks: c[j] (+)= sum_k a[k * CS] *
// b[(j / 8) * bstep + k * ldb + j % 8] for j < n, each element in gemm_4x8's order, so the bits of
// row 0 of a gemm_4x8 call per block. Blocks are key panels (bstep = 8 K) or a row's columns
// (bstep = 8). A single query row takes it instead of a 4-row group that is 3/4 padding.
template <int64_t CS>
inline void gemm_1xn(int64_t K, const float* a, const float* b, int64_t bstep, int64_t ldb, float* c, int64_t n,
                     bool accumulate) noexcept {
  for (int64_t j = 0; j < n; j += 8)
    gemm_rx8<1, 0, CS>(K, a, b + j / 8 * bstep, ldb, c + j, 0, n - j < 8 ? n - j : 8, accumulate);
}

// gemm_4x8 for six rows: c[6][n] (+)= A[6][K] b[K][n], each element summed in gemm_4x8's order.
// The attention kernel's row group where relaxed SIMD fuses the multiply-add (kernels.hpp).
template <int64_t RS, int64_t CS>
inline void gemm_6x8(int64_t K, const float* a, const float* b, int64_t ldb, float* c, int64_t ldc,
                     int64_t n, bool accumulate) noexcept {
  gemm_rx8<6, RS, CS>(K, a, b, ldb, c, ldc, n, accumulate);
}

// A row stride for gemm_8x32 that is not a constant: rows i at a + i gs (a matrix's own rows).
inline constexpr int64_t kRowsGsApart = -1;

// Two gemm_4x8-ordered column blocks of V's width side by side: c[R][2W] (+)= A [b0 | b1], columns
// 0..W-1 from b0 and W..2W-1 from b1 (each [K][W], row stride ldb), for R = 4 rows or 8 (rows 4-7
// a second group of four, `gs` floats after the first; or, for RS = kRowsGsApart, each row gs
// floats after the last). Every element sums in gemm_4x8's order: the same bits. gemm_4x16,
// gemm_4x32 and gemm_8x32 below are its widths and heights.
template <class V, int R, int64_t RS, int64_t CS>
inline void gemm_rx2v(int64_t K, const float* a, int64_t gs, const float* b0, const float* b1, int64_t ldb,
                      float* c, int64_t ldc, bool accumulate) noexcept {
  constexpr int64_t W = sizeof(V) / sizeof(float);
  V acc[R][2] = {};
  if (accumulate)
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      std::memcpy(&acc[i][0], c + i * ldc, sizeof(V));
      std::memcpy(&acc[i][1], c + i * ldc + W, sizeof(V));
    }
  for (int64_t k = 0; k < K; ++k) {
    V x0, x1;
    std::memcpy(&x0, b0 + k * ldb, sizeof x0);
    std::memcpy(&x1, b1 + k * ldb, sizeof x1);
    // Unrolled, so the accumulators live in registers (GCC 12 kept eight rows' in memory).
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const float ai = RS == kRowsGsApart ? a[i * gs + k * CS] : a[i / 4 * gs + i % 4 * RS + k * CS];
      acc[i][0] += ai * x0;
      acc[i][1] += ai * x1;
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i) {
    std::memcpy(c + i * ldc, &acc[i][0], sizeof(V));
    std::memcpy(c + i * ldc + W, &acc[i][1], sizeof(V));
  }
}

// c[4][16] (+)= A [b0 | b1] (two 8-wide panels, or 16 columns of a row-major matrix), 8-lane
// vectors. Eight accumulators instead of gemm_4x8's four: natively (AVX2) four of them leave half
// the multiply-add units idle behind the 4-cycle latency.
template <int64_t RS, int64_t CS>
inline void gemm_4x16(int64_t K, const float* a, const float* b0, const float* b1, int64_t ldb, float* c,
                      int64_t ldc, bool accumulate) noexcept {
  using v8 = float __attribute__((vector_size(32)));
  gemm_rx2v<v8, 4, RS, CS>(K, a, 0, b0, b1, ldb, c, ldc, accumulate);
}

// c[4][32] (+)= A b over 32 contiguous columns of b, as two 16-lane vectors per row: with AVX-512
// (gemm.cpp is built preferring 512-bit vectors) eight zmm accumulators, twice gemm_4x16's
// multiply-adds per cycle.
template <int64_t RS, int64_t CS>
inline void gemm_4x32(int64_t K, const float* a, const float* b, int64_t ldb, float* c, int64_t ldc,
                      bool accumulate) noexcept {
  using v16 = float __attribute__((vector_size(64)));
  gemm_rx2v<v16, 4, RS, CS>(K, a, 0, b, b + 16, ldb, c, ldc, accumulate);
}

// c[8][32] (+)= A b: two groups of four rows (the second `gs` floats after the first), the same
// bits as two gemm_4x32 calls. Only where 32 vector registers hold its sixteen 16-lane
// accumulators (AVX-512: kernels::kGemmRows): per k, each load of b feeds eight multiply-adds
// instead of four, so the loads no longer match the multiply-adds one for one (gemm_4x32 reads b
// again for every row, as memory operands): about 2x on the engine's products natively (gemm.cpp).
// RS = kRowsGsApart reads eight rows of a row-major matrix (row stride gs, CS = 1) unpacked.
template <int64_t RS, int64_t CS>
inline void gemm_8x32(int64_t K, const float* a, int64_t gs, const float* b, int64_t ldb, float* c, int64_t ldc,
                      bool accumulate) noexcept {
  using v16 = float __attribute__((vector_size(64)));
  gemm_rx2v<v16, 8, RS, CS>(K, a, gs, b, b + 16, ldb, c, ldc, accumulate);
}

// max |x[i]| over n floats, NaN if any is NaN: quantize_i16's max.
inline float abs_max(const float* x, int64_t n) noexcept {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float a = std::fabs(x[i]);
    amax = a > amax || a != a ? a : amax;
  }
  return amax;
}

// quantize_i16's factor for a row whose max |x| is amax: 8191 / amax, or 0 for a row that
// quantises to zeros. *scale gets what quantize_i16 returns. A zero row gives scale 0. An inf or
// NaN row passes amax on as its scale, so the products built on it stay non-finite. A row so
// small that 8191 / max|x| overflows (max|x| < 2.5e-35) counts as zero: its products are far
// below float resolution of anything they are added to, and the overflowed factor would make
// inf * 0 = NaN.
inline float q16_factor(float amax, float* scale) noexcept {
  const float inv = 8191.0f / amax;
  if (!(amax > 0.0f) || !(amax <= std::numeric_limits<float>::max()) ||
      !(inv <= std::numeric_limits<float>::max())) {
    *scale = amax <= std::numeric_limits<float>::max() ? 0.0f : amax;
    return 0.0f;
  }
  *scale = amax / 8191.0f;
  return inv;
}

// One int16 in [-8191, 8191] as split_i16's two 7-bit bytes: q + 8192 = 128 hi + lo.
inline void split_one(int q, uint8_t* hi, uint8_t* lo) noexcept {
  *hi = static_cast<uint8_t>((q + 8192) >> 7);
  *lo = static_cast<uint8_t>((q + 8192) & 127);
}

// Row x (n floats) as int16 in [-8191, 8191]: xq[i] = round-half-even(x[i] * 8191 / max|x|),
// zero from n to np. Returns the scale (q16_factor).
inline float quantize_i16(const float* x, int64_t n, int64_t np, int16_t* xq) noexcept {
  float scale;
  const float inv = q16_factor(abs_max(x, n), &scale);
  const int64_t m = inv != 0.0f ? n : 0;
  for (int64_t i = 0; i < m; ++i) xq[i] = static_cast<int16_t>(std::nearbyint(x[i] * inv));
  for (int64_t i = m; i < np; ++i) xq[i] = 0;
  return scale;
}

// quantize_i16 then split_i16 (below) in one pass, without the int16s between them: hi[i] and
// lo[i] for i < np (padding and zero rows: 64 and 0), the same scale returned.
inline float quantize_split_i16(const float* x, int64_t n, int64_t np, uint8_t* hi, uint8_t* lo) noexcept {
  float scale;
  const float inv = q16_factor(abs_max(x, n), &scale);
  const int64_t m = inv != 0.0f ? n : 0;
  for (int64_t i = 0; i < m; ++i) split_one(static_cast<int16_t>(std::nearbyint(x[i] * inv)), hi + i, lo + i);
  for (int64_t i = m; i < np; ++i) split_one(0, hi + i, lo + i);
  return scale;
}

// One k-pair of gemm_q8_8 for R rows (rows[r] + at) into their sums s[r * 8 + j]: the tile's 16
// weight bytes widened once and shared by the rows, as the SIMD twin does
// (simd128::detail::q8_pair_step). Rows by pointer: with each row's offset computed from x and
// ldx here, GCC 12.2 (gemm.cpp's -O3 -march=native -mprefer-vector-width=512) built a
// q8_pairs_call<5> that read past the rows it was given (a segfault in
// NnGemm.Int8ProductFiveRowPassesKeepEveryBit, 13 rows 3,000 deep); with -fno-tree-vectorize, at
// -O2, or under AddressSanitizer (which found no access out of bounds) it passed.
template <int R>
inline void q8_pair_sums(const int8_t* w, const int16_t* const* rows, int64_t at, int32_t* s) noexcept {
  int32_t even[8], odd[8];
  for (int j = 0; j < 8; ++j) even[j] = w[2 * j], odd[j] = w[2 * j + 1];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const int32_t x0 = rows[r][at], x1 = rows[r][at + 1];
    for (int j = 0; j < 8; ++j) s[r * 8 + j] += x0 * even[j] + x1 * odd[j];
  }
}

// One tile of an int8 weight matrix times R rows of int16 activations: out[r * 8 + j] =
// sum_{p < kp} x_r[2p] W[j][2p] + x_r[2p + 1] W[j][2p + 1] for the tile's 8 weight rows, packed
// k-pair by k-pair: byte 16p + 2j + e is W[j][2p + e] (kernels::Q8Layout's pairs); x_r is
// x + r ldx. Exact int32 (|x| <= 8191, |w| <= 127, 2 kp <= 2048 cannot overflow), so every ISA
// and every order of the sums gives the same bits. k-pairs outside, rows and outputs inside:
// natively (GCC 12, Intel Xeon) 2.1 -> 4.9-8.4 G multiply-adds/s for 1-5 rows, and 0.7-0.8 ->
// 2.3-2.9 in the scalar WebAssembly build, against sums taken one output at a time.
template <int R>
inline void gemm_q8_8(const int16_t* x, int64_t ldx, const int8_t* w, int64_t kp, int32_t* out) noexcept {
  const int16_t* rows[R];
  for (int r = 0; r < R; ++r) rows[r] = x + r * ldx;
  int32_t s[R * 8] = {};
  for (int64_t p = 0; p < kp; ++p) q8_pair_sums<R>(w + 16 * p, rows, 2 * p, s);
  for (int i = 0; i < R * 8; ++i) out[i] = s[i];
}

// gemm_q8_8 over some of the tile's k-pairs: out[r * 8 + j] = sum_{q < n} x_r[2q] W[j][2p] +
// x_r[2q + 1] W[j][2p + 1] with p = pairs[q]: the activations (x_r = x + r ldx) compacted to the
// pairs that are not zero in every row (a ReLU's outputs), the weights read where they are. The
// pairs left out would only add exact zeros, so for such x the same bits as gemm_q8_8 on the
// whole rows.
template <int R>
inline void gemm_q8_8_sparse(const int16_t* x, int64_t ldx, const int8_t* w, const int32_t* pairs, int64_t n,
                             int32_t* out) noexcept {
  const int16_t* rows[R];
  for (int r = 0; r < R; ++r) rows[r] = x + r * ldx;
  int32_t s[R * 8] = {};
  for (int64_t q = 0; q < n; ++q) q8_pair_sums<R>(w + 16 * pairs[q], rows, 2 * q, s);
  for (int i = 0; i < R * 8; ++i) out[i] = s[i];
}

// The int8 product's scaling of one tile: y[r * ldy + j] = float(acc[r * 8 + j]) *
// (sx[r] * w_scale[j]) for R rows (activation scales sx) and the tile's first n <= 8 outputs,
// then + bias[j] (unless null: the tile's biases) and max(0, .) (relu). A layer's bias and ReLU
// here rather than in passes of their own over its outputs. Acc int64_t: the exact sums of a
// product past 2048 k's (nn::q8_rows), which no SIMD kernel takes.
template <int R, class Acc = int32_t>
inline void scale_q8_8(const Acc* acc, const float* sx, const float* w_scale, const float* bias, bool relu, float* y,
                       int64_t ldy, int64_t n) noexcept {
  for (int r = 0; r < R; ++r)
    for (int64_t j = 0; j < n; ++j) {
      float v = static_cast<float>(acc[r * 8 + j]) * (sx[r] * w_scale[j]);
      if (bias) v += bias[j];
      y[r * ldy + j] = relu && !(v > 0.0f) ? 0.0f : v;
    }
}

// int16 activations (|x| <= 8191) as two bytes in [0, 127] each, the operands of relaxed SIMD's
// byte dot product: x + 8192 = 128 hi + lo.
inline void split_i16(const int16_t* x, int64_t n, uint8_t* hi, uint8_t* lo) noexcept {
  for (int64_t i = 0; i < n; ++i) split_one(x[i], hi + i, lo + i);
}

// gemm_q8_8 on the quads layout (Q8Layout): out[r * 8 + j] = sum_k x[r][k] * W[j][k] over
// k < 4 kq <= 2048, from split_i16's bytes (row stride ldx) as 128 H + L - 8192 S, where H and L
// are the weights' dot products with hi and lo and S (sums[j], int32) is the sum of W[j]'s k's.
// H and L are exact int32; the combination wraps modulo 2^32, which is exact because the true
// sum fits (|x w| 4 kq <= 8191 * 127 * 2048 < 2^31).
template <int R>
inline void gemm_q8_quad(const uint8_t* hi, const uint8_t* lo, int64_t ldx, const int8_t* w, int64_t kq,
                         const int8_t* sums, int32_t* out) noexcept {
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < 8; ++j) {
      int32_t h = 0, l = 0, s = 0;
      for (int64_t q = 0; q < kq; ++q)
        for (int e = 0; e < 4; ++e) {
          const int32_t wv = w[32 * q + 16 * (j / 4) + 4 * (j % 4) + e];
          h += wv * hi[r * ldx + 4 * q + e];
          l += wv * lo[r * ldx + 4 * q + e];
        }
      std::memcpy(&s, sums + 4 * j, sizeof s);
      out[r * 8 + j] = static_cast<int32_t>(static_cast<uint32_t>(h) * 128u + static_cast<uint32_t>(l) -
                                            static_cast<uint32_t>(s) * 8192u);
    }
}

// gemm_q8_quad over some of the tile's k-quads, for rows with no negative entry split without
// the offset (x = 128 hi + lo, so a zero is two zero bytes): out[r * 8 + j] = 128 H + L, H and L
// the weights' dot products with hi and lo over the quads quads[0, n), the bytes compacted to them
// (quad q of a row at 4q). The quads left out hold zeros only, so the same bits as gemm_q8_quad
// on the whole rows.
template <int R>
inline void gemm_q8_quad_sparse(const uint8_t* hi, const uint8_t* lo, int64_t ldx, const int8_t* w, const int32_t* quads,
                                int64_t n, int32_t* out) noexcept {
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < 8; ++j) {
      int32_t h = 0, l = 0;
      for (int64_t q = 0; q < n; ++q)
        for (int e = 0; e < 4; ++e) {
          const int32_t wv = w[32 * quads[q] + 16 * (j / 4) + 4 * (j % 4) + e];
          h += wv * hi[r * ldx + 4 * q + e];
          l += wv * lo[r * ldx + 4 * q + e];
        }
      out[r * 8 + j] = static_cast<int32_t>(static_cast<uint32_t>(h) * 128u + static_cast<uint32_t>(l));
    }
}

}  // namespace attnlab::kernels::scalar
