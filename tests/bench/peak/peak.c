// SIMD128 f32x4 mul+add peak: 12 independent chains a = a * y + x (enough to cover the mul and
// add latencies on two mul and two add pipes), 8 flops per f32x4 mul+add pair. The chain runs
// through the mul so the compiler cannot hoist it. SIMD128 has no FMA.
// With -DPEAK_FMA, its FMA twin: each step one f32x4.relaxed_madd (8 flops) instead of a mul and
// an add. clang 14 cannot emit the final opcode, so the step calls the marker import of
// cpp/kernels/madd.hpp and tests/bench/run.sh passes peak_fma.wasm through scripts/relax-wasm.mjs,
// as the relaxed builds are (it needs relaxed SIMD: Node 20 with --experimental-wasm-relaxed-simd,
// Node >= 21, Chromium >= 114).
// Built by tests/bench/run.sh into peak.wasm and peak_fma.wasm, called from the benchmark.
#include <wasm_simd128.h>

#ifdef PEAK_FMA
__attribute__((import_module("env"), import_name("attnlab_madd"), const, nothrow))
v128_t attnlab_madd(v128_t a, v128_t b, v128_t c);
#define STEP(a, x) a = attnlab_madd(a, y, x)
#else
#define STEP(a, x) a = wasm_f32x4_add(wasm_f32x4_mul(a, y), x)
#endif

__attribute__((export_name("peak"))) float peak(int iterations, float seed) {
  const v128_t y = wasm_f32x4_splat(0.999999f);
  v128_t x0 = wasm_f32x4_splat(seed), x1 = wasm_f32x4_add(x0, x0), x2 = wasm_f32x4_add(x1, x0);
  v128_t a0 = x0, a1 = x1, a2 = x2, a3 = x0, a4 = x1, a5 = x2;
  v128_t a6 = x0, a7 = x1, a8 = x2, a9 = x0, a10 = x1, a11 = x2;
  for (int i = 0; i < iterations; ++i) {
    STEP(a0, x0); STEP(a1, x0); STEP(a2, x0); STEP(a3, x0); STEP(a4, x0); STEP(a5, x0);
    STEP(a6, x0); STEP(a7, x0); STEP(a8, x0); STEP(a9, x0); STEP(a10, x0); STEP(a11, x0);
  }
  v128_t s = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_add(a0, a1), wasm_f32x4_add(a2, a3)),
                            wasm_f32x4_add(wasm_f32x4_add(a4, a5), wasm_f32x4_add(a6, a7)));
  s = wasm_f32x4_add(s, wasm_f32x4_add(wasm_f32x4_add(a8, a9), wasm_f32x4_add(a10, a11)));
  return wasm_f32x4_extract_lane(s, 0);
}
