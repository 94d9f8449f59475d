// The hot loops behind one small interface (ggml-style): a scalar reference in namespace
// `scalar` (scalar.hpp), a WebAssembly SIMD128 version in `simd128` (simd128.hpp, only when
// compiled with -msimd128), and the unqualified names pick the best one this build has. All
// header-only so the loops inline into the drivers. Every kernel is tested against its scalar twin.
//
//   dot(a, b, n)                   sum_i a[i] * b[i]
//   axpy(alpha, x, y, n)           y[i] += alpha * x[i]
//   scale(x, alpha, n)             x[i] *= alpha
//   max(x, n)                      largest x[i]; -inf for n == 0
//   exp_shift_sum(x, shift, n)     x[i] = exp(x[i] - shift) for shift >= max(x) (a softmax's
//                                  shift); returns the sum. exp(-inf) is 0.
//   exp2_shift_sum(x, shift, n)    the same in base 2: x[i] = 2^(x[i] - shift)
//   exp_shift_total(x, shift, n)   exp_shift_sum's sum, bit for bit, leaving x as it is (a
//                                  log-softmax needs only the normaliser)
//   online_softmax4(s, ld, w, run_max, run_sum, alpha, rows = 4)
//                                  one online-softmax step of four score rows in base 2: rows to
//                                  2^(row - running max), running max and sum updated, alpha the
//                                  factor that rescales what was accumulated before (four lanes
//                                  written); rows < 4 takes only the first rows, the same bits
//   exp_approx(x)                  exp(x) as exp2_approx(x log2 e), x <= 88; rel. error < 1e-7 + 7.3e-8 |x|
//   exp2_approx(y)                 2^y for y < 127.5: a one-step reduction and a degree-6 polynomial
//                                  of the fraction; rel. error < 1e-7
//   mask_bytes(x, m, nz_blocks, n) x[i] = -inf where byte m[i] blocks
//   find_nonfinite(x, n, ninf_ok)  index of the first NaN or +-inf (-inf allowed if ninf_ok), or -1
//   find_above(x, n, bar)          index of the first x[i] > bar (NaN never is), or n
//   block_max16(x, n, bm)          bm[b] = max of x[16b, 16b + 16) (the last block may be shorter)
//   quantize_i16(x, n, np, xq)     x as int16 in [-8191, 8191] scaled by 8191 / max|x|, zero-padded
//                                  to np; returns the scale (max|x| / 8191)
//   gemm_q8_8<R>(x, ldx, w, kp, out)  out[r*8 + j] = sum_k x[r*ldx + k] * W[j][k] over k < 2 kp for
//                                  one 8-row tile of int8 weights in Q8Layout's pairs, exact
//                                  int32, R <= 5 rows sharing each load of the weights
//   gemm_q8_8_sparse<R>(x, ldx, w, pairs, n, out)
//                                  gemm_q8_8 over the tile's k-pairs pairs[0..n) only, x compacted
//                                  to them (pair q of x at 2q): skips pairs zero in every row
//   scale_q8_8<R>(acc, sx, w_scale, bias, relu, y, ldy, n)
//                                  y[r*ldy + j] = float(acc[r*8 + j]) * (sx[r] * w_scale[j]) for
//                                  j < n <= 8, + bias[j] (if not null), max(0, .) if relu: the
//                                  product's int32 sums of one tile to a layer's outputs
//   split_i16(x, n, hi, lo)        int16 in [-8191, 8191] as two 7-bit bytes: x + 8192 = 128 hi + lo
//   quantize_split_i16(x, n, np, hi, lo)
//                                  quantize_i16 then split_i16 in one pass (no int16s between)
//   gemm_q8_quad<R>(hi, lo, ldx, w, kq, sums, out)
//                                  the same product on Q8Layout's quads from split_i16's bytes,
//                                  R <= 3: relaxed SIMD's byte dot product where
//                                  q8_quads_supported() (the engine computes it right)
//   gemm_q8_quad_sparse<R>(hi, lo, ldx, w, quads, n, out)
//                                  gemm_q8_quad over the listed k-quads only, for rows with no
//                                  negative entry split without the offset (x = 128 hi + lo)
//   gemm_4x16<RS, CS>(K, a, b0, b1, ldb, c, ldc, acc)
//                                  two gemm_4x8 blocks side by side (b0: columns 0-7, b1: 8-15),
//                                  the same bits as two gemm_4x8 calls
//   gemm_4x32<RS, CS>(K, a, b, ldb, c, ldc, acc)
//                                  four gemm_4x8 blocks over 32 contiguous columns of b
//   gemm_8x32<RS, CS>(K, a, gs, b, ldb, c, ldc, acc)
//                                  two gemm_4x32 row groups (the second gs floats after the
//                                  first) sharing each load of b; the rows a product takes at
//                                  once is kGemmRows: 8 where the ISA has 32 vector registers
//                                  (AVX-512), else 4 (gemm_4x32 alone); RS = kRowsGsApart:
//                                  eight rows of a matrix, gs apart, read where they are
//   tanh_inplace(x, n)             x[i] = tanh(x[i]) through the exp kernel (scalar::tanh_approx)
//   sigmoid_sum(a, b, s, n)        s[i] = sigmoid(a[i] + b[i]) through the exp kernel
//   gelu_erf_inplace(x, n)         x[i] = x[i] Phi(x[i]) (BERT's GELU) through erfc and the exp
//                                  kernel; within 1.3e-7 max(1, |x|) of float64
//   gelu_tanh_inplace(x, n)        x[i] = GPT-2's tanh GELU of x[i] through tanh_inplace's tanh
//   tanh_dot_rows(q, k, ldk, v, H, n, out, t)
//                                  out[j] = dot(v, tanh(q + k[j ldk ..])) for n rows of H,
//                                  the tanhs kept in t (H per row) if not null: additive
//                                  attention's scores, in dot()'s order
//   gemm_4x8<RS, CS>(K, a, b, ldb, c, ldc, n, acc)
//                                  c[4][n] (+)= A[4][K] b[K][n], n <= 8, A[i][k] = a[i*RS + k*CS]:
//                                  the register block of every matrix product; bit-identical
//                                  across ISAs. A is either 4 interleaved rows (pack_rows<4>:
//                                  RS = 1, CS = 4) or rows a fixed stride apart (CS = 1)
//   gemm_1xn<CS>(K, a, b, bstep, ldb, c, n, acc)
//                                  one row against n columns in 8-column blocks bstep apart
//                                  (key panels, or a row's columns): gemm_4x8's row 0 per block,
//                                  the same bits; a single attention query row
//   gemm_6x8<RS, CS>(...)          gemm_4x8 for six rows (A of pack_rows<6>: RS = 1, CS = 6),
//                                  each element in the same order
//   gemm_rows<G, RS, CS>(...)      gemm_4x8 (G = 4) or gemm_6x8 (G = 6): G is 4 or kWideRows,
//                                  as attnlab::row_groups() says
//   transpose(x, stride, rows, cols, out, ldo)
//                                  out[c * ldo + r] = x[r * stride + c] (layout only, every ISA:
//                                  pack_panels and gemm_nt's weight panels)
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "scalar.hpp"
#include "simd128.hpp"

namespace attnlab::kernels {

#if defined(__wasm_simd128__) && defined(ATTNLAB_RELAXED_SIMD)
namespace isa = simd128;  // with madd() as f32x4.relaxed_madd (madd.hpp)
inline const char* active_isa() noexcept { return "relaxed-simd128"; }
#elif defined(__wasm_simd128__)
namespace isa = simd128;
inline const char* active_isa() noexcept { return "simd128"; }
#else
namespace isa = scalar;
inline const char* active_isa() noexcept { return "scalar"; }
#endif

using isa::axpy;
using isa::gemm_q8_8;
using isa::gemm_q8_8_sparse;
using scalar::split_i16;
#if defined(__wasm_simd128__) && defined(ATTNLAB_RELAXED_SIMD)
using simd128::gemm_q8_quad;
using simd128::gemm_q8_quad_sparse;
#else
using scalar::gemm_q8_quad;  // for the twin tests only: without relaxed SIMD it is no faster
using scalar::gemm_q8_quad_sparse;
#endif
using isa::quantize_i16;
using isa::quantize_split_i16;
using isa::scale_q8_8;
using isa::dot;
using isa::exp2_approx;
using isa::exp_approx;
using isa::exp2_shift_sum;
using isa::exp_shift_sum;
using isa::exp_shift_total;
using isa::find_nonfinite;
using isa::find_above;
using isa::block_max16;
using isa::gemm_1xn;
using isa::gemm_4x16;
using isa::gemm_4x32;
using isa::gemm_4x8;
using isa::gemm_6x8;
// The widest row group a build offers (attnlab/row_groups.hpp): six where relaxed SIMD fuses the
// multiply-add (gemm_6x8's twelve accumulators fit the registers: attention tiles 68-70 GFLOP/s
// against 63-64 for four, a dense layer's 67 against 61, Chromium 156), else four.
#if defined(__wasm_simd128__) && defined(ATTNLAB_RELAXED_SIMD)
inline constexpr int kWideRows = 6;
#else
inline constexpr int kWideRows = 4;
#endif
// Whether a single attention row goes alone through gemm_1xn rather than in a group of 4 (three
// rows of padding). In WebAssembly the multiply-adds are what the kernels write (madd, or a
// multiply and an add), so that gives the bits of the row within a group. Natively GCC fuses
// multiply-adds into FMAs by context: the same loop came out fused alone and not fused inlined
// into attention, so a single row keeps its group there.
#if defined(__wasm__)
inline constexpr bool kSingleRow = true;
#else
inline constexpr bool kSingleRow = false;
#endif
// Whether a dense layer (linear_panels) takes its 8-column panels in pairs, gemm_4x16. Natively
// that is one pass with 8 accumulators of 8 lanes: 125 against 72 GFLOP/s on panels in cache
// (AVX2, Zen 5), though 1.7x slower streaming 147 MB of panels for one row. SIMD128's is two
// gemm_4x8 calls: the same 62 GFLOP/s on panels in cache, and 2.6x slower streaming (15.0
// against 5.7 ms, Chromium 156), so its panels go one at a time.
#if defined(__wasm_simd128__)
inline constexpr bool kPanelPairs = false;
#else
inline constexpr bool kPanelPairs = true;
#endif
// In the relaxed builds each call is a function of its own. Inlined into its callers' loops, Node
// 20's V8 (11.3) kept neither 4 nor 6 rows' fused accumulators in registers: attention ran
// 2.3-2.5x slower than the SIMD128 build (H8 S512: 26.9 against 10.8 ms out of line, the same
// bits). SIMD128's stay inline: out of line, its 4-row attention tiles took 8% longer in Node 20
// (12.8 against 11.8 ms). Chromium 156 runs both builds alike either way (within 1%).
#if defined(__wasm_simd128__) && defined(ATTNLAB_RELAXED_SIMD)
#define ATTNLAB_GEMM_ROWS [[gnu::noinline]] inline
#else
#define ATTNLAB_GEMM_ROWS inline
#endif
template <int G, int64_t RS, int64_t CS>
ATTNLAB_GEMM_ROWS void gemm_rows(int64_t K, const float* a, const float* b, int64_t ldb, float* c, int64_t ldc, int64_t n,
                      bool accumulate) noexcept {
  static_assert(G == 4 || G == 6, "gemm_rows: 4 or 6 rows");
  if constexpr (G == 6)
    gemm_6x8<RS, CS>(K, a, b, ldb, c, ldc, n, accumulate);
  else
    gemm_4x8<RS, CS>(K, a, b, ldb, c, ldc, n, accumulate);
}
#undef ATTNLAB_GEMM_ROWS
// Sixteen 16-lane accumulators: only AVX-512 has the registers (and the lanes) for them.
// SIMD128's eight times sixteen f32x4 would spill; its products stay four rows at a time.
using scalar::gemm_8x32;
using scalar::kRowsGsApart;
#if defined(__AVX512F__)
inline constexpr int kGemmRows = 8;
#else
inline constexpr int kGemmRows = 4;
#endif
using isa::mask_bytes;
using isa::max;
using isa::online_softmax4;
using isa::scale;
using isa::sigmoid_sum;
using isa::tanh_dot_rows;
using isa::tanh_inplace;
using isa::gelu_erf_inplace;
using isa::gelu_tanh_inplace;

// Rows [0, rows) of x, rows <= G (row stride `stride`, `cols` wide), interleaved:
// out[c][r] = x[r * stride + c], zero past the last row. The A operand of gemm_4x8<1, 4> (G = 4)
// and gemm_6x8<1, 6>.
template <int G>
inline void pack_rows(const float* x, int64_t stride, int64_t rows, int64_t cols, float* out) noexcept {
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < G; ++r) out[c * G + r] = r < rows ? x[r * stride + c] : 0.0f;
}

// x's rows [0, rows) (row stride `stride`, `cols` wide) transposed: out[c * ldo + r] =
// x[r * stride + c]. Blocks of 8 x 8 as eight 8-lane vectors and three rounds of the compiler's
// shuffles (AVX natively, i8x16.shuffle in WebAssembly, plain moves without SIMD), the rest element
// by element. Layout only. Where nn::gemm_nt packs a weight into 32-wide panels (natively, Intel
// Xeon, AVX-512): [256, 1024] 465-476 -> 74-77 us, [1024, 256] 135-162 -> 84-100 us, against the
// element loop, whose every store was 128 bytes past the last (results/train-pack-2026-11-27-intel.md).
inline void transpose(const float* x, int64_t stride, int64_t rows, int64_t cols, float* out, int64_t ldo) noexcept {
  using v8 = float __attribute__((vector_size(32)));
  const int64_t r8 = rows / 8 * 8, c8 = cols / 8 * 8;
  for (int64_t r0 = 0; r0 < r8; r0 += 8)
    for (int64_t c0 = 0; c0 < c8; c0 += 8) {
      v8 a[8], b[8], e[8];
      for (int i = 0; i < 8; ++i) std::memcpy(&a[i], x + (r0 + i) * stride + c0, sizeof(v8));
      // Pairs of rows interleaved (per 4-lane half), then pairs of pairs: e[h + j] (h = 0 or 4)
      // holds column j of rows h..h+3 in its low half and column j + 4 in its high half.
      for (int i = 0; i < 8; i += 2) {
        b[i] = __builtin_shufflevector(a[i], a[i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
        b[i + 1] = __builtin_shufflevector(a[i], a[i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
      }
      for (int h = 0; h < 8; h += 4)
        for (int j = 0; j < 2; ++j) {
          e[h + 2 * j] = __builtin_shufflevector(b[h + j], b[h + j + 2], 0, 1, 8, 9, 4, 5, 12, 13);
          e[h + 2 * j + 1] = __builtin_shufflevector(b[h + j], b[h + j + 2], 2, 3, 10, 11, 6, 7, 14, 15);
        }
      for (int j = 0; j < 4; ++j) {
        const v8 lo = __builtin_shufflevector(e[j], e[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        const v8 hi = __builtin_shufflevector(e[j], e[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
        std::memcpy(out + (c0 + j) * ldo + r0, &lo, sizeof(v8));
        std::memcpy(out + (c0 + j + 4) * ldo + r0, &hi, sizeof(v8));
      }
    }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = r < r8 ? c8 : 0; c < cols; ++c) out[c * ldo + r] = x[r * stride + c];
}

// Rows [0, rows) of x (row stride `stride`, `cols` wide) as panels of 8 rows, transposed:
// panels[p][c][r] = x[(8p + r) * stride + c], zero past the last row. A panel is the `b` operand
// of gemm_4x8 (ldb = 8), so x's rows become its columns. Layout only: the same for every ISA.
inline int64_t panels_size(int64_t rows, int64_t cols) noexcept { return (rows + 7) / 8 * 8 * cols; }
// Through transpose(): attention's keys (1,024 x 64) 100 -> 53 us in Node 20 (SIMD128), 19 -> 12 us
// natively (Intel Xeon).
inline void pack_panels(const float* x, int64_t stride, int64_t rows, int64_t cols, float* panels) noexcept {
  for (int64_t r0 = 0; r0 < rows; r0 += 8, panels += 8 * cols) {
    const int64_t nr = rows - r0 < 8 ? rows - r0 : 8;
    transpose(x + r0 * stride, stride, nr, cols, panels, 8);
    for (int64_t r = nr; r < 8; ++r)
      for (int64_t c = 0; c < cols; ++c) panels[c * 8 + r] = 0.0f;
  }
}

// Int8 weight rows [0, M) (row stride ldw, a multiple of 16, zero-padded past K) as tiles of 8
// rows, laid out for one of the two kernels; rows past M are zero. Layout only: the same for every
// ISA. pack_row places one row (m) alone, for weights quantised row by row as they stream in.
// - pairs (gemm_q8_8): tile t, k-pair p at (t * ldw / 2 + p) * 16, byte 2j + e = W[8t + j][2p + e].
// - quads (gemm_q8_quad): tile t, k-quad q at (t * ldw / 4 + q) * 32, byte 16h + 4j + e =
//   W[8t + 4h + j][4q + e]; after the tiles, int32 row sums for each chunk c of kQ8Chunk k's:
//   at byte 4 (c * 8 tiles + m).
struct Q8Layout {
  static constexpr int64_t kQ8Chunk = 2048;  // the k's of one exact int32 pass (|x w| K < 2^31)
  int64_t M = 0, ldw = 0;
  bool quads = false;

  int64_t tiles() const noexcept { return (M + 7) / 8; }
  int64_t chunks() const noexcept { return quads ? (ldw + kQ8Chunk - 1) / kQ8Chunk : 0; }
  int64_t size() const noexcept { return tiles() * 8 * ldw + 4 * tiles() * 8 * chunks(); }
  // The 8 sums (32 bytes) of tile t in chunk c.
  const int8_t* sums(const int8_t* packed, int64_t c, int64_t t) const noexcept {
    return packed + tiles() * 8 * ldw + 4 * (c * tiles() * 8 + 8 * t);
  }
  int64_t offset(int64_t m, int64_t k) const noexcept {
    const int64_t tile = (m / 8) * 8 * ldw, j = m % 8;
    return quads ? tile + (k / 4) * 32 + 16 * (j / 4) + 4 * (j % 4) + k % 4 : tile + (k / 2) * 16 + 2 * j + k % 2;
  }
  void pack_row(const int8_t* row, int64_t m, int8_t* packed) const noexcept {
    for (int64_t k = 0; k < ldw; ++k) packed[offset(m, k)] = row[k];
    for (int64_t c = 0; c < chunks(); ++c) {
      int32_t s = 0;
      for (int64_t k = c * kQ8Chunk; k < ldw && k < (c + 1) * kQ8Chunk; ++k) s += row[k];
      std::memcpy(packed + tiles() * 8 * ldw + 4 * (c * tiles() * 8 + m), &s, sizeof s);
    }
  }
  int8_t at(const int8_t* packed, int64_t m, int64_t k) const noexcept { return packed[offset(m, k)]; }
  // All rows of W (row stride ldw) into packed, which holds size() bytes.
  void pack(const int8_t* W, int8_t* packed) const noexcept {
    for (int64_t i = 0; i < size(); ++i) packed[i] = 0;  // (memset takes no null, which empty weights give)
    for (int64_t m = 0; m < M; ++m) pack_row(W + m * ldw, m, packed);
  }
};

#if defined(__wasm_simd128__) && defined(ATTNLAB_RELAXED_SIMD)
// Whether this engine's relaxed dot product meets the scalar twin, measured once, on operands that
// span the kernel's ranges (weights -127..127, activations -8191..8191); where it does not, new
// int8 weights keep gemm_q8_8 (nn::q8_quads). Node 20's V8 (behind
// --experimental-wasm-relaxed-simd) returns twice the dot product and drops the addend, but only
// in its baseline compiler, so this check passes or fails by tier there: loader.ts turns the quads
// off in that V8 outright. The operands pass through a volatile so that nothing folds.
inline bool q8_quads_supported() noexcept {
  static const bool ok = [] {
    constexpr int64_t K = 64;
    const Q8Layout L{8, K, true};
    int8_t w[8 * K], packed[8 * K + 32];
    uint8_t hi[3 * K], lo[3 * K];
    int16_t x[3 * K];
    volatile int seed = 12345;
    uint32_t s = static_cast<uint32_t>(seed);
    auto next = [&] { return s = s * 1103515245u + 12345u, static_cast<int32_t>(s >> 8); };
    for (int64_t i = 0; i < 8 * K; ++i) w[i] = static_cast<int8_t>(i % K < 2 ? (i % K ? -127 : 127) : next() % 255 - 127);
    for (int64_t i = 0; i < 3 * K; ++i) x[i] = static_cast<int16_t>(i < 2 ? (i ? -8191 : 8191) : next() % 16383 - 8191);
    L.pack(w, packed);
    split_i16(x, 3 * K, hi, lo);
    int32_t got[24], want[24];
    simd128::gemm_q8_quad<3>(hi, lo, K, packed, K / 4, L.sums(packed, 0, 0), got);
    scalar::gemm_q8_quad<3>(hi, lo, K, packed, K / 4, L.sums(packed, 0, 0), want);
    return std::memcmp(got, want, sizeof got) == 0;
  }();
  return ok;
}
#else
inline bool q8_quads_supported() noexcept { return false; }
#endif

}  // namespace attnlab::kernels
