// The exp-based kernels of cpp/kernels/ alone, for tests/bench/exp_kernels.mjs: a standalone
// WebAssembly module (SIMD128) whose run(kind, reps) passes over a beam's worth of values (5 rows
// of 3,000: a decoder step's log-softmax) `reps` times and returns a checksum, so nothing is dead.
// Kind 1 is the exp kernel before 6e95598 (a Cody-Waite reduction and a degree-7 polynomial,
// 28 operations a vector), kept here as the comparison for kind 0, today's exp (exp2 of
// x log2 e, 20 operations). Kinds 6-9: the GELUs of the pretrained checkpoints, each beside the
// libm form it replaced or would replace (erf: BERT's until it moved into the kernels), on
// normal values (sigma 1: a transformer's FFN pre-activations), copied in first (the kernels work
// in place; the libm loops read the values and write the copy: the kernels pay one copy more).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "kernels.hpp"

namespace k = attnlab::kernels;

namespace {

constexpr int kRows = 5, kCols = 3000, kH = 192;
// values: logits in [-25, 5]; work and tanhs: updated in place each rep (2^(x - 5) of values in
// (0, 1] stays in (1/32, 1/16]; repeated tanh shrinks slowly toward 0), so no copies are timed.
float values[kRows * kCols], work[kRows * kCols], tanhs[kRows * kCols], scores_big[kRows * kCols], q[kH], v[kH], scores[kCols / kH];
float normal[kRows * kCols], gelus[kRows * kCols];

v128_t cody_waite_exp4(v128_t x) {
  const v128_t magic = wasm_f32x4_splat(12582912.0f);
  const v128_t too_small = wasm_f32x4_lt(x, wasm_f32x4_splat(-87.33654475f));
  x = wasm_v128_andnot(x, too_small);
  const v128_t t = wasm_f32x4_add(wasm_f32x4_mul(x, wasm_f32x4_splat(1.44269504088896341f)), magic);
  const v128_t n = wasm_f32x4_sub(t, magic);
  v128_t r = wasm_f32x4_sub(x, wasm_f32x4_mul(n, wasm_f32x4_splat(0.693359375f)));
  r = wasm_f32x4_sub(r, wasm_f32x4_mul(n, wasm_f32x4_splat(-2.12194440e-4f)));
  v128_t p = wasm_f32x4_splat(1.9875691500e-4f);
  for (float c : {1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f})
    p = wasm_f32x4_add(wasm_f32x4_mul(p, r), wasm_f32x4_splat(c));
  p = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(wasm_f32x4_mul(p, r), r), r), wasm_f32x4_splat(1.0f));
  const v128_t pow2n = wasm_i32x4_add(wasm_i32x4_shl(t, 23), wasm_i32x4_splat(127 << 23));
  return wasm_v128_andnot(wasm_f32x4_mul(p, pow2n), too_small);
}

// exp_shift_total's own loop around the old exp.
float cody_waite_total(const float* x, float shift, int64_t n) {
  return k::simd128::detail::shift_exp_sum<cody_waite_exp4, k::scalar::exp_approx, false>(x, nullptr, shift, n);
}

}  // namespace

extern "C" {

__attribute__((export_name("init"))) void init() {
  uint32_t s = 1;
  for (float& x : values) {
    s = s * 1664525u + 1013904223u;
    x = -30.0f * static_cast<float>(s >> 8) / 16777216.0f + 5.0f;
  }
  for (int i = 0; i < kRows * kCols; ++i) work[i] = values[i], tanhs[i] = 0.2f * values[i];
  for (float& x : normal) {  // Irwin-Hall: twelve uniforms in [0, 1) less 6, sigma 1
    x = -6.0f;
    for (int u = 0; u < 12; ++u) {
      s = s * 1664525u + 1013904223u;
      x += static_cast<float>(s >> 8) / 16777216.0f;
    }
  }
  for (int h = 0; h < kH; ++h) q[h] = 0.01f * static_cast<float>(h % 17) - 0.08f, v[h] = 0.02f * static_cast<float>(h % 5) - 0.04f;
}

// Elements one call of kind touches per rep.
__attribute__((export_name("elements"))) int elements(int kind) {
  return kind == 5 ? (kCols / kH) * kH : kind == 4 ? (kRows - 1) * kCols : kRows * kCols;
}

__attribute__((export_name("run"))) float run(int kind, int reps) {
  float acc = 0.0f;
  for (int r = 0; r < reps; ++r) {
    const float shift = 5.0f + acc * 1e-30f;  // a dependency on the previous rep, never a change
    switch (kind) {
      case 0:
        for (int row = 0; row < kRows; ++row) acc += k::exp_shift_total(values + row * kCols, shift, kCols);
        break;
      case 1:
        for (int row = 0; row < kRows; ++row) acc += cody_waite_total(values + row * kCols, shift, kCols);
        break;
      case 2:  // the attention core's base-2 exp, stored
        for (int row = 0; row < kRows; ++row) acc += k::exp2_shift_sum(work + row * kCols, shift, kCols);
        break;
      case 3:
        k::tanh_inplace(tanhs, kRows * kCols);
        acc += tanhs[r % (kRows * kCols)] + shift * 0.0f;
        break;
      case 4:  // 4 rows of a + b (a GRU's gates)
        k::sigmoid_sum(values, values + kCols, scores_big, kRows * kCols - kCols);
        acc += scores_big[r % kCols] + shift * 0.0f;
        break;
      case 5:  // additive attention: 15 source positions of 192 for one beam row
        k::tanh_dot_rows(q, values, kH, v, kH, kCols / kH, scores, nullptr);
        acc += scores[r % (kCols / kH)] + shift * 0.0f;
        break;
      case 6:
      case 8:
        std::memcpy(gelus, normal, sizeof gelus);
        (kind == 6 ? k::gelu_erf_inplace : k::gelu_tanh_inplace)(gelus, kRows * kCols);
        acc += gelus[r % (kRows * kCols)] + shift * 0.0f;
        break;
      case 7:
        for (int i = 0; i < kRows * kCols; ++i)
          gelus[i] = 0.5f * normal[i] * (1.0f + std::erf(normal[i] * 0.70710678118654752f));
        acc += gelus[r % (kRows * kCols)] + shift * 0.0f;
        break;
      case 9:
        for (int i = 0; i < kRows * kCols; ++i) {
          const float x = normal[i];
          gelus[i] = 0.5f * x * (1.0f + std::tanh(0.79788456080286536f * (x + 0.044715f * x * x * x)));
        }
        acc += gelus[r % (kRows * kCols)] + shift * 0.0f;
        break;
      default:
        return 0.0f;
    }
  }
  return acc;
}
}
