// madd(a, b, c) = a * b + c on four float lanes: the one place the kernels choose between a
// separate multiply and add (SIMD128: the same bits on every engine and machine) and relaxed
// SIMD's f32x4.relaxed_madd (one rounding where the processor has FMA, two where it has not).
//
// Why a marker instead of wasm_f32x4_relaxed_madd: Debian's clang 14 emits only the prototype
// encoding (f32x4.fma, fd af 01) that no shipping engine accepts, and Emscripten 3.1.6's binaryen
// rejects the final one. So the relaxed builds (ATTNLAB_RELAXED_SIMD) call an imported function
// `attnlab_madd`, and scripts/relax-wasm.mjs rewrites each call into f32x4.relaxed_madd (fd 85 02)
// after linking and drops the import. Its JS-library stub (relaxed.js) throws, so a module that
// missed the rewrite fails loudly instead of running slowly.
#pragma once
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#if defined(ATTNLAB_RELAXED_SIMD)
// const: no memory effects, so LLVM keeps loads and constants hoisted around it as it would an
// instruction; nothrow: no landing pad around its calls.
extern "C" __attribute__((import_module("env"), import_name("attnlab_madd"), const, nothrow))
v128_t attnlab_madd(v128_t a, v128_t b, v128_t c);
// The same for i32x4.relaxed_dot_i8x16_i7x16_add_s (fd 93 02). Its trailing int (always 0) only
// gives the marker a type of its own, which is how relax-wasm.mjs tells the two apart.
extern "C" __attribute__((import_module("env"), import_name("attnlab_dot_i8i7"), const, nothrow))
v128_t attnlab_dot_i8i7(v128_t a, v128_t b, v128_t c, int type_tag);
#endif

namespace attnlab::kernels::simd128 {

// c + a * b with c first, the kernels' order before this helper: the same bits, NaNs included.
inline v128_t madd(v128_t a, v128_t b, v128_t c) noexcept {
#if defined(ATTNLAB_RELAXED_SIMD)
  return attnlab_madd(a, b, c);
#else
  return wasm_f32x4_add(c, wasm_f32x4_mul(a, b));
#endif
}

// c - a * b, as madd(-a, b, c): negation is exact, so fused or not it is the same value as the
// subtraction of the product.
inline v128_t nmadd(v128_t a, v128_t b, v128_t c) noexcept {
#if defined(ATTNLAB_RELAXED_SIMD)
  return attnlab_madd(wasm_f32x4_neg(a), b, c);
#else
  return wasm_f32x4_sub(c, wasm_f32x4_mul(a, b));
#endif
}

#if defined(ATTNLAB_RELAXED_SIMD)
// c + the sums of four byte products per lane: a's bytes signed, b's in [0, 127] (relaxed SIMD
// leaves b's top bit to the engine, so b never has it). x86 runs it as vpdpbusd where there is
// AVX-VNNI, else pmaddubsw + pmaddwd (no saturation: |2 * 127 * 128| < 2^15).
inline v128_t dot_i8i7_add(v128_t a, v128_t b, v128_t c) noexcept { return attnlab_dot_i8i7(a, b, c, 0); }
#endif

}  // namespace attnlab::kernels::simd128
#endif
