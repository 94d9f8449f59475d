#include "attnlab/nn/gemm.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "attnlab/thread_pool.hpp"
#include "kernels.hpp"

namespace attnlab::nn {
namespace {

// Rows [0, m) of C (m <= 4, row stride ldc), columns [0, M): (+)= A b, where a4 holds the 4 rows
// of A interleaved (kernels::pack_rows<4> layout, Kd deep) and b is [Kd, M] with row stride ldb.
void rows4_times(int64_t Kd, const float* a4, const float* b, int64_t ldb, float* c, int64_t ldc,
                 int64_t m, int64_t M, bool acc) {
  float tail[4 * 32] = {};
  for (int64_t j = 0; j < M;) {
    // 32 or 16 columns at a time where they exist (more accumulators than gemm_4x8, the same bits).
    const int64_t n = M - j >= 32 ? 32 : M - j >= 16 ? 16 : std::min<int64_t>(8, M - j);
    float* cj = m == 4 ? c + j : tail;
    const int64_t ld = m == 4 ? ldc : 32;
    if (m < 4 && acc)
      for (int64_t i = 0; i < m; ++i) std::memcpy(tail + i * 32, c + i * ldc + j, sizeof(float) * static_cast<size_t>(n));
    if (n == 32)
      kernels::gemm_4x32<1, 4>(Kd, a4, b + j, ldb, cj, ld, acc);
    else if (n == 16)
      kernels::gemm_4x16<1, 4>(Kd, a4, b + j, b + j + 8, ldb, cj, ld, acc);
    else
      kernels::gemm_4x8<1, 4>(Kd, a4, b + j, ldb, cj, ld, n, acc);
    if (m < 4)
      for (int64_t i = 0; i < m; ++i) std::memcpy(c + i * ldc + j, tail + i * 32, sizeof(float) * static_cast<size_t>(n));
    j += n;
  }
}

// The row groups of a4 (group g at a4 + g * gs, `rows` rows in all, C's rows 4g.. at c + 4g ldc)
// times one panel b of n <= 32 columns. Two groups at once where the ISA takes eight rows
// (kernels::kGemmRows) and both are full: the same bits, half the loads of b. The tutorial GRU's
// output layer ([224, 128] x [128, 2900]) on AMD EPYC (Zen 5, AVX-512), 1 thread, GFLOP/s:
// gemm_nt 95 -> 208, gemm_nn 95 -> 169, gemm_tn 92 -> 199 (tests/bench/results/train-gemm-rows8-*.md).
void groups_times(int64_t Kd, const float* a4, int64_t gs, int64_t rows, const float* b, int64_t ldb, float* c,
                  int64_t ldc, int64_t n, bool acc) {
  const int64_t groups = (rows + 3) / 4;
  int64_t g = 0;
  if (kernels::kGemmRows == 8 && n == 32)
    for (; (g + 2) * 4 <= rows; g += 2)
      kernels::gemm_8x32<1, 4>(Kd, a4 + g * gs, gs, b, ldb, c + g * 4 * ldc, ldc, acc);
  for (; g < groups; ++g)
    rows4_times(Kd, a4 + g * gs, b, ldb, c + g * 4 * ldc, ldc, std::min<int64_t>(4, rows - g * 4), n, acc);
}

// Where the ISA takes eight rows, a product's first N / 8 * 8 rows of A are read where they are
// (gemm_8x32 with kRowsGsApart), and only the last N % 8 are packed for rows4_times. Not packing
// the rest took the shipped Transformer recipe from 5.5 to 5.3 CPU s for its 40 steps, the same
// bits (train_compare.sh, Intel Xeon; the GRU recipe unchanged at 1.7 s). WebAssembly's four-row
// kernels take packed rows (0 here).
int64_t direct_rows(int64_t N) { return kernels::kGemmRows == 8 ? N / 8 * 8 : 0; }

// Rows [0, direct) of C (+)= A b for one panel b (n <= 32 columns, zero-padded to 32) with A's
// rows lda apart, eight at a time; a partial panel through a tile so C's next columns stay as
// they are. The same bits as groups_times over the same rows packed.
void direct_times(int64_t Kd, const float* A, int64_t lda, int64_t direct, const float* b, int64_t ldb, float* c,
                  int64_t ldc, int64_t n, bool acc) {
  if constexpr (kernels::kGemmRows != 8) return;
  for (int64_t r = 0; r < direct; r += 8) {
    float* cr = c + r * ldc;
    if (n == 32) {
      kernels::gemm_8x32<kernels::kRowsGsApart, 1>(Kd, A + r * lda, lda, b, ldb, cr, ldc, acc);
      continue;
    }
    float tile[8 * 32];
    if (acc)
      for (int64_t i = 0; i < 8; ++i) std::memcpy(tile + i * 32, cr + i * ldc, sizeof(float) * static_cast<size_t>(n));
    kernels::gemm_8x32<kernels::kRowsGsApart, 1>(Kd, A + r * lda, lda, b, ldb, tile, 32, acc);
    for (int64_t i = 0; i < 8; ++i) std::memcpy(cr + i * ldc, tile + i * 32, sizeof(float) * static_cast<size_t>(n));
  }
}

// gemm_q8_quad out of line. Inlined into q8_rows' chunk loop (K > 2048), its twelve accumulators
// came out at half speed in Chromium 156: 29.5 against 60-66 G multiply-adds/s with K = 2048 or
// less (128 rows x 768 outputs, Zen 5; GPT-2's 3072-deep projection ran at 0.6x gemm_q8_8).
// Out of line it runs at 62-66 at every depth, and no slower where it was fast.
// `tiles` consecutive tiles a call (ldt bytes apart, their sums 32 bytes apart), as q8_pairs_call
// below: beam-5 translations 1.01x in Chromium 156 (Intel Xeon; twice, against an A/A of 1.00x).
template <int R>
[[gnu::noinline]] void q8_quad_call(const uint8_t* hi, const uint8_t* lo, int64_t ldx, const int8_t* w, int64_t kq,
                                    const int8_t* sums, int64_t tiles, int64_t ldt, int32_t* out) {
  for (int64_t t = 0; t < tiles; ++t, w += ldt, sums += 32, out += 8 * R)
    kernels::gemm_q8_quad<R>(hi, lo, ldx, w, kq, sums, out);
}

// gemm_q8_8 out of line too. Inlined into q8_rows, Node 20's V8 compiled it at one of two speeds
// from one process to the next (a beam-5 Transformer translation 3.9 or 5.3 ms), and beside the
// scaling's bias and ReLU branches at the slow one always (greedy translations 2-3x slower).
// Out of line: 3.7 ms every time, greedy within 5% of the fast inlined one; Chromium 156 the same.
// `tiles` consecutive tiles (ldt bytes apart) a call, into out's R x 8 sums per tile: a decoder
// step makes ~1,100 tile passes of ~128 k-pairs, and one call per tile (each with the caller's
// loop, pointers and scaling between) cost beam-5 translations 0.7-0.9% (Intel Xeon, Node 20).
template <int R>
[[gnu::noinline]] void q8_pairs_call(const int16_t* x, int64_t ldx, const int8_t* w, int64_t kp, int64_t tiles,
                                     int64_t ldt, int32_t* out) {
  for (int64_t t = 0; t < tiles; ++t, w += ldt, out += 8 * R) kernels::gemm_q8_8<R>(x, ldx, w, kp, out);
}

// The sparse kernels out of line too, as the dense ones.
template <int R>
[[gnu::noinline]] void q8_quad_sparse_call(const uint8_t* hi, const uint8_t* lo, int64_t ldx, const int8_t* w,
                                           const int32_t* quads, int64_t n, int32_t* out) {
  kernels::gemm_q8_quad_sparse<R>(hi, lo, ldx, w, quads, n, out);
}

template <int R>
[[gnu::noinline]] void q8_sparse_call(const int16_t* x, int64_t ldx, const int8_t* w, const int32_t* pairs, int64_t n,
                                      int32_t* out) {
  kernels::gemm_q8_8_sparse<R>(x, ldx, w, pairs, n, out);
}

// The most tiles (of 8 outputs) one task of q8_product takes.
constexpr int64_t kMaxTilesPerTask = 32;

// R rows of int16 activations (row stride ldx, scales sx; `xb`: as split_i16's bytes, hi then lo,
// 2 ldx a row) times the packed int8 weights' tiles [t0, t1): y[r * M + m]. Past 2048 k's the
// int32 sums could overflow, so they are taken a chunk (Q8Layout::kQ8Chunk) at a time and added in
// int64: still exact, so the same bits as one pass wherever one pass fits, in either layout.
// t1 - t0 <= kMaxTilesPerTask.
// `pairs` (one chunk): xq holds only the k-pairs pairs[0, np) (sparse_pairs), or xb only the
// k-quads pairs[0, np), split without the offset (sparse_quads).
template <int R>
void q8_rows(const int16_t* xq, const uint8_t* xb, int64_t ldx, const float* sx, const kernels::Q8Layout& L,
             const int8_t* Wt, const float* w_scale, const float* bias, bool relu, float* y, int64_t t0, int64_t t1,
             const int32_t* pairs, int64_t np) {
  constexpr int64_t kChunk = kernels::Q8Layout::kQ8Chunk;
  const int64_t M = L.M, chunks = (ldx + kChunk - 1) / kChunk;
  int32_t acc[R * 8];
  int64_t wide[R * 8];
  auto chunk = [&](const int8_t* tile, int64_t t, int64_t c) {
    const int64_t k0 = c * kChunk, n = std::min(kChunk, ldx - k0);
    if (pairs && L.quads)
      q8_quad_sparse_call<R>(xb, xb + ldx, 2 * ldx, tile, pairs, np, acc);
    else if (pairs)
      q8_sparse_call<R>(xq, ldx, tile, pairs, np, acc);
    else if (L.quads)
      q8_quad_call<R>(xb + k0, xb + ldx + k0, 2 * ldx, tile + 8 * k0, n / 4, L.sums(Wt, c, t), 1, 0, acc);
    else
      q8_pairs_call<R>(xq + k0, ldx, tile + 8 * k0, n / 2, 1, 0, acc);
  };
  if (chunks <= 1 && !pairs) {  // dense: every tile's sums, then their scaling
    int32_t all[kMaxTilesPerTask * R * 8];
    if (L.quads)
      q8_quad_call<R>(xb, xb + ldx, 2 * ldx, Wt + t0 * 8 * ldx, ldx / 4, L.sums(Wt, 0, t0), t1 - t0, 8 * ldx, all);
    else
      q8_pairs_call<R>(xq, ldx, Wt + t0 * 8 * ldx, ldx / 2, t1 - t0, 8 * ldx, all);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t m0 = t * 8, n = std::min<int64_t>(8, M - m0);
      kernels::scale_q8_8<R>(all + (t - t0) * R * 8, sx, w_scale + m0, bias ? bias + m0 : nullptr, relu, y + m0, M, n);
    }
    return;
  }
  for (int64_t t = t0; t < t1; ++t) {
    const int8_t* tile = Wt + t * 8 * ldx;
    const int64_t m0 = t * 8, n = std::min<int64_t>(8, M - m0);
    if (chunks <= 1) {
      chunk(tile, t, 0);
      kernels::scale_q8_8<R>(acc, sx, w_scale + m0, bias ? bias + m0 : nullptr, relu, y + m0, M, n);
      continue;
    }
    std::fill(wide, wide + R * 8, int64_t{0});
    for (int64_t c = 0; c < chunks; ++c) {
      chunk(tile, t, c);
      for (int i = 0; i < R * 8; ++i) wide[i] += acc[i];
    }
    kernels::scalar::scale_q8_8<R>(wide, sx, w_scale + m0, bias ? bias + m0 : nullptr, relu, y + m0, M, n);
  }
}

// sparse_pairs and sparse_quads take the list where at most 1 - 1 / kSparseOver of the pairs or
// quads remain. In Node 20's profile a listed pair cost about what a pair of the dense kernel does
// (its weights' address is one load more), so any real share of zeros pays; the margin keeps the
// compaction off rows that are nearly dense.
constexpr int64_t kSparseOver = 8;

// The k-pairs of rows [0, rows) of xq (row stride ldx, kp pairs) that some row has nonzero:
// where they are few enough, their list in pairs and the rows compacted to them in place (pair q
// at 2q; see kernels::gemm_q8_8_sparse), returning how many; else -1, xq untouched. `any`: 2 kp
// int16s of scratch. A ReLU's outputs: the shipped Transformer's decoder FFN input is ~85% zeros
// a row, 45-75% of the pairs zero in all 5 rows of a beam. 32-bit indices: int64 ones are i64
// arithmetic in wasm32, which clang vectorised as i64x2 (this scan was 4% of a beam).
int64_t sparse_pairs(int16_t* xq, int64_t ldx, int64_t rows, int64_t kp, int32_t* pairs, int16_t* any) {
  const int32_t k2 = static_cast<int32_t>(2 * kp), ld = static_cast<int32_t>(ldx);
  std::memcpy(any, xq, sizeof(int16_t) * static_cast<size_t>(k2));
  for (int32_t r = 1; r < rows; ++r)
    for (int32_t i = 0; i < k2; ++i) any[i] |= xq[r * ld + i];
  int32_t n = 0;
  for (int32_t p = 0; p < k2 / 2; ++p) {
    pairs[n] = p;
    n += (any[2 * p] | any[2 * p + 1]) != 0;
  }
  if (int64_t{n} * kSparseOver > kp * (kSparseOver - 1)) return -1;
  for (int32_t r = 0; r < rows; ++r) {
    int16_t* x = xq + r * ld;
    for (int32_t q = 0; q < n; ++q) x[2 * q] = x[2 * pairs[q]], x[2 * q + 1] = x[2 * pairs[q] + 1];
  }
  return n;
}

// Whether sparse_pairs might take a list for a row group whose first row is xq (kp pairs): that
// row's first 32 pairs hold zero pairs at the rate the list needs (a group has no more zero pairs
// than its first row). Most products' rows (a layer norm's, an attention's) have no zeros, and
// scanning every pair of their rows for the list they never took was 1% of a beam-5 Transformer
// translation (Intel Xeon, Node 20). A guess, never a change of bits: either path gives the same
// sums.
bool pairs_look_sparse(const int16_t* xq, int64_t kp) {
  const int32_t n = static_cast<int32_t>(std::min<int64_t>(kp, 32));
  int32_t zeros = 0;
  for (int32_t p = 0; p < n; ++p) zeros += (xq[2 * p] | xq[2 * p + 1]) == 0;
  return int64_t{zeros} * kSparseOver >= n;
}

// The same for the quads layout (xb: a group's first row as split_i16's bytes, hi then lo ldx
// further; a zero is hi 64, lo 0).
bool quads_look_sparse(const uint8_t* xb, int64_t ldx) {
  const int32_t n = static_cast<int32_t>(std::min<int64_t>(ldx / 4, 32));
  int32_t zeros = 0;
  for (int32_t q = 0; q < n; ++q) {
    uint8_t any = 0;
    for (int32_t e = 0; e < 4; ++e) any |= static_cast<uint8_t>((xb[4 * q + e] ^ 64) | xb[ldx + 4 * q + e]);
    zeros += any == 0;
  }
  return int64_t{zeros} * kSparseOver >= n;
}

// The same for the quads layout: rows [0, rows) of xb (split_i16's bytes, row r's hi at
// xb + 2 r ldx, its lo ldx further), kq quads. Only rows with no negative entry (a ReLU's), whose
// bytes it rewrites without split_i16's offset (x = 128 hi + lo: hi - 64), so that a zero is two
// zero bytes and the quads left out need no share of the offset's correction.
int64_t sparse_quads(uint8_t* xb, int64_t ldx, int64_t rows, int64_t kq, int32_t* quads, uint8_t* any) {
  const int32_t k4 = static_cast<int32_t>(4 * kq), ld = static_cast<int32_t>(ldx);
  uint8_t below = 0;  // bit 7 set where some hi byte is under 64: a negative entry
  std::memset(any, 0, static_cast<size_t>(k4));
  for (int32_t r = 0; r < rows; ++r) {
    const uint8_t *hi = xb + 2 * r * ld, *lo = hi + ld;
    for (int32_t i = 0; i < k4; ++i) {
      const uint8_t h = static_cast<uint8_t>(hi[i] - 64);
      below |= h;
      any[i] |= static_cast<uint8_t>(h | lo[i]);
    }
  }
  if (below & 0x80) return -1;
  int32_t n = 0;
  for (int32_t q = 0; q < k4 / 4; ++q) {
    quads[n] = q;
    n += (any[4 * q] | any[4 * q + 1] | any[4 * q + 2] | any[4 * q + 3]) != 0;
  }
  if (int64_t{n} * kSparseOver > kq * (kSparseOver - 1)) return -1;
  for (int32_t r = 0; r < rows; ++r) {
    uint8_t *hi = xb + 2 * r * ld, *lo = hi + ld;
    for (int32_t q = 0; q < n; ++q)
      for (int32_t e = 0; e < 4; ++e) {
        hi[4 * q + e] = static_cast<uint8_t>(hi[4 * quads[q] + e] - 64);
        lo[4 * q + e] = lo[4 * quads[q] + e];
      }
  }
  return n;
}

// n floats of a scratch vector, grown (never shrunk) as needed; every product writes all it reads.
// Never null, even for n = 0: gemm_nn offsets its packed rows by chunk when every row is read in
// place and none were packed (UBSan: "applying non-zero offset to null pointer", fuzz_toy_trainer).
float* space(std::vector<float>& v, int64_t n) {
  n = std::max<int64_t>(n, 1);
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return v.data();
}

// Rows of the streamed operand per pass, packed as panels of kPanel columns that stay in cache
// while every row group of the other operand uses them.
constexpr int64_t kChunk = 256, kPanel = 32;
// gemm_tn's rows of C per pass over B's panels: 256 rows of a chunk's packed A^T are 256 KB, which
// stay in L2 while every panel passes them (the output layer's 3,000 rows were 3 MB, re-read from
// L3 for each panel): its weight gradient 130-131 -> 141-143 GFLOP/s (attnlab_nn_gemm_bench, Intel
// Xeon; the tutorial GRU's 2,900 rows 123-125 -> 127), the same bits.
constexpr int64_t kRowBlock = 256;

// Rows [0, rows) of x (row stride ldx, cols wide) as panels of kPanel columns:
// out[(p * rows + r) * kPanel + c] = x[r * ldx + kPanel p + c], zero past the last column.
void pack_column_panels(const float* x, int64_t ldx, int64_t rows, int64_t cols, float* out) {
  for (int64_t p = 0; p * kPanel < cols; ++p) {
    const int64_t w = std::min(kPanel, cols - p * kPanel);
    // A full panel's rows as copies of a constant size, which the compiler inlines: a call to
    // memcpy for each 128 bytes made this 1.3-3.3x slower natively (Intel Xeon, 256 rows of 256 to
    // 3,000 columns; results/train-pack-2026-11-27-intel.md).
    if (w == kPanel) {
      for (int64_t r = 0; r < rows; ++r)
        std::memcpy(out + (p * rows + r) * kPanel, x + r * ldx + p * kPanel, sizeof(float) * kPanel);
      continue;
    }
    for (int64_t r = 0; r < rows; ++r) {
      float* o = out + (p * rows + r) * kPanel;
      std::memcpy(o, x + r * ldx + p * kPanel, sizeof(float) * static_cast<size_t>(w));
      std::fill(o + w, o + kPanel, 0.f);
    }
  }
}

// Rows [0, rows) of x (row stride ldx, cols wide) as groups of 4 columns, each group's rows one
// after another: out[(g * rows + r) * 4 + c] = x[r * ldx + 4 g + c], zero past the last column
// (gemm_tn's A^T, interleaved by 4 for the kernels). kRows rows at a time, so each group's share
// of them is one run of 16-byte copies. Element by element, group after group, this packing was
// 2.1% of a perf profile of the shipped Transformer recipe; a row at a time (its 16-byte groups
// into as many output streams, 4 KB apart, which L1 maps to one set) 3.3%; so, 2.0%, and
// attnlab_nn_gemm_bench's gemm_tn 123-143 -> 128-152 GFLOP/s (Intel Xeon).
void pack_column_groups(const float* x, int64_t ldx, int64_t rows, int64_t cols, float* out) {
  constexpr int64_t kRows = 8;
  const int64_t full = cols / 4, groups = (cols + 3) / 4;
  int64_t r0 = 0;
  for (; r0 + kRows <= rows; r0 += kRows)
    for (int64_t g = 0; g < full; ++g)
      for (int64_t r = r0; r < r0 + kRows; ++r) std::memcpy(out + (g * rows + r) * 4, x + r * ldx + 4 * g, 4 * sizeof(float));
  for (int64_t g = 0; g < full; ++g)
    for (int64_t r = r0; r < rows; ++r) std::memcpy(out + (g * rows + r) * 4, x + r * ldx + 4 * g, 4 * sizeof(float));
  if (full < groups)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < 4; ++c) out[(full * rows + r) * 4 + c] = 4 * full + c < cols ? x[r * ldx + 4 * full + c] : 0.f;
}

}  // namespace

void gemm_nt(const float* A, const float* B, float* C, int64_t N, int64_t M, int64_t K, GemmScratch* scratch) {
  // B's rows become the columns of kPanel-wide panels, each packed just before every row group
  // of A passes it, so it is still in L1 (packing all of B first left a wide B's panels in L2 or
  // L3 by their turn: attnlab_nn_gemm_bench 137-147 -> 151-160 GFLOP/s on the Transformer's
  // shapes, Intel Xeon); A's rows are read in place (direct_rows) or interleaved by 4. The same order of sums per
  // element as attnlab::linear (whose 8-wide panels suit its threaded tasks): the same bits.
  const int64_t direct = direct_rows(N), rest = N - direct, groups = (rest + 3) / 4, panels = (M + kPanel - 1) / kPanel;
  GemmScratch own;
  GemmScratch& sc = scratch ? *scratch : own;
  float* a4 = space(sc.a, groups * 4 * K);
  float* bp = space(sc.b, kPanel * K);
  for (int64_t g = 0; g < groups; ++g)
    kernels::pack_rows<4>(A + (direct + g * 4) * K, K, std::min<int64_t>(4, rest - g * 4), K, a4 + g * 4 * K);
  for (int64_t p = 0; p < panels; ++p) {
    const int64_t n = std::min(kPanel, M - p * kPanel);
    kernels::transpose(B + p * kPanel * K, K, n, K, bp, kPanel);
    for (int64_t k = 0; k < K && n < kPanel; ++k) std::fill(bp + k * kPanel + n, bp + (k + 1) * kPanel, 0.f);
    direct_times(K, A, K, direct, bp, kPanel, C + p * kPanel, M, n, false);
    groups_times(K, a4, 4 * K, rest, bp, kPanel, C + direct * M + p * kPanel, M, n, false);
  }
}

void gemm_nn(const float* A, const float* B, float* C, int64_t N, int64_t K, int64_t M, bool acc, GemmScratch* scratch) {
  // B in chunks of kChunk rows (a Linear's input gradient reads the whole weight matrix, 1.5 MB
  // for the tutorial GRU's output layer), each chunk's 32-column panels packed one at a time, as
  // gemm_nt's, just before every row of A uses it (the GRU cell's 124 -> 144 GFLOP/s in the
  // bench). Each element still sums its K products in order (carried in C between chunks), so
  // neither changes a bit.
  const int64_t direct = direct_rows(N), rest = N - direct, groups = (rest + 3) / 4, panels = (M + kPanel - 1) / kPanel;
  GemmScratch own;
  GemmScratch& sc = scratch ? *scratch : own;
  float* a4 = space(sc.a, groups * 4 * K);
  float* bp = space(sc.b, kPanel * std::min(kChunk, K));
  for (int64_t g = 0; g < groups; ++g)
    kernels::pack_rows<4>(A + (direct + g * 4) * K, K, std::min<int64_t>(4, rest - g * 4), K, a4 + g * 4 * K);
  for (int64_t k0 = 0; k0 < K || k0 == 0; k0 += kChunk) {
    const int64_t kd = std::min(kChunk, K - k0);
    for (int64_t p = 0; p < panels; ++p) {
      const int64_t n = std::min(kPanel, M - p * kPanel);
      pack_column_panels(B + k0 * M + p * kPanel, M, kd, n, bp);
      direct_times(kd, A + k0, K, direct, bp, kPanel, C + p * kPanel, M, n, acc || k0 > 0);
      groups_times(kd, a4 + k0 * 4, 4 * K, rest, bp, kPanel, C + direct * M + p * kPanel, M, n, acc || k0 > 0);
    }
    if (K == 0) break;
  }
}

void gemm_tn(const float* A, const float* B, float* C, int64_t N, int64_t K, int64_t M, bool acc, GemmScratch* scratch) {
  // The same over chunks of the N rows of A and B (B is the layer's input: 786 KB for the shipped
  // Transformer's batches). Rows k..k+3 of A^T are columns of A: interleaved by 4 as the
  // kernel's A operand, for every k of the chunk at once.
  const int64_t groups = (K + 3) / 4, panels = (M + kPanel - 1) / kPanel, nc = std::min(kChunk, N);
  GemmScratch own;
  GemmScratch& sc = scratch ? *scratch : own;
  // With one block of rows each panel is used once, so all share one panel's space, which
  // stays in L1 (the FFN's second weight gradient, C [256, 1024], 115-119 -> 122-125 GFLOP/s
  // in the Transformer recipe's own calls, Intel Xeon).
  const bool one_block = K <= kRowBlock;
  float* a4 = space(sc.a, groups * 4 * nc);
  float* bp = space(sc.b, (one_block ? 1 : panels) * kPanel * nc);
  for (int64_t n0 = 0; n0 < N || n0 == 0; n0 += kChunk) {
    const int64_t nd = std::min(kChunk, N - n0);
    pack_column_groups(A + n0 * K, K, nd, K, a4);
    for (int64_t r0 = 0; r0 < K; r0 += kRowBlock)
      for (int64_t p = 0; p < panels; ++p) {
        const int64_t n = std::min(kPanel, M - p * kPanel);
        float* b = one_block ? bp : bp + p * kPanel * nd;
        if (r0 == 0) pack_column_panels(B + n0 * M + p * kPanel, M, nd, n, b);
        groups_times(nd, a4 + r0 * nd, 4 * nd, std::min(kRowBlock, K - r0), b, kPanel, C + r0 * M + p * kPanel, M, n,
                     acc || n0 > 0);
      }
    if (N == 0) break;
  }
}

void gemm_nn_strided(const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc, int64_t N,
                     int64_t K, int64_t M, bool acc, GemmScratch* scratch) {
  GemmScratch own;
  float* a4 = space((scratch ? *scratch : own).a, 4 * K);
  for (int64_t r = 0; r < N; r += 4) {
    const int64_t m = std::min<int64_t>(4, N - r);
    kernels::pack_rows<4>(A + r * lda, lda, m, K, a4);
    rows4_times(K, a4, B, ldb, C + r * ldc, ldc, m, M, acc);
  }
}

namespace {
// A's rows equal to an earlier row share its outputs: a beam's hypotheses that end in the same
// token have the same input to a decoder's first layer (token and position), 20% of the
// rows of a beam-5 translation of issue 14's 10-word sentence there (46 rows, 37 distinct). Up to
// kMaxShared rows (a beam's; each row is compared with the distinct rows before it, and a long
// prompt's rows all differ): the distinct ones' indices in first[0, n) (returned), row i being
// distinct row of_row[i]. Equal floats quantise to equal int16s, so the shared outputs are the
// bits the row's own would be.
constexpr int64_t kMaxShared = 64;
int64_t distinct_rows(const float* A, int64_t N, int64_t K, int32_t* first, int32_t* of_row) {
  int32_t n = 0;
  for (int32_t i = 0; i < N; ++i) {
    const float* a = A + i * K;
    int32_t j = 0;
    while (j < n && std::memcmp(a, A + first[j] * K, sizeof(float) * static_cast<size_t>(K)) != 0) ++j;
    if (j == n) first[n++] = i;
    of_row[i] = j;
  }
  return n;
}

// C's first rows (the distinct rows' outputs, M wide) spread to all N rows, row i taking
// of_row[i] <= i: from the last row down, so no row is overwritten before it is read.
void expand_rows(float* C, int64_t N, int64_t M, const int32_t* of_row) {
  for (int64_t i = N - 1; i >= 0; --i)
    if (of_row[i] != i) std::memcpy(C + i * M, C + of_row[i] * M, sizeof(float) * static_cast<size_t>(M));
}

std::atomic<bool> five_rows{false};
std::atomic<bool> quads{kernels::q8_quads_supported()};

// gemm_nt_q8 with at most `most` rows per pass over the weights (the pairs layout; quads take 3).
void q8_product(const float* A, int64_t N, int64_t K, const kernels::Q8Layout& L, const int8_t* Wt, const float* w_scale,
                const float* bias, bool relu, float* C, ThreadPool* pool, GemmScratch* scratch, int64_t most) {
  // A decoder step's 23 products of 1-5 rows each would otherwise allocate, zero and free these.
  GemmScratch own;
  GemmScratch& sc = scratch ? *scratch : own;
  const int64_t ldw = L.ldw, M = L.M;
  if (static_cast<int64_t>(sc.sx.size()) < N) sc.sx.resize(static_cast<size_t>(N));
  float* sx = sc.sx.data();
  // The product runs on A's distinct rows (row `first[j]` as row j), into C's first rows, which
  // expand_rows then spreads over all N.
  const int64_t rows_in = N;
  const int32_t* first = nullptr;
  if (N > 1 && N <= kMaxShared) {
    if (static_cast<int64_t>(sc.rows.size()) < 2 * N) sc.rows.resize(static_cast<size_t>(2 * N));
    N = distinct_rows(A, N, K, sc.rows.data(), sc.rows.data() + N);
    first = sc.rows.data();
  }
  auto row_of = [&](int64_t j) { return A + (first ? first[j] : j) * K; };
  int16_t* xq = nullptr;  // the pairs layout's operand
  uint8_t* xb = nullptr;  // the quads layout's: split_i16's bytes, hi then lo, per row
  if (L.quads) {
    if (static_cast<int64_t>(sc.xb.size()) < 2 * N * ldw) sc.xb.resize(static_cast<size_t>(2 * N * ldw));
    xb = sc.xb.data();
    for (int64_t i = 0; i < N; ++i)
      sx[i] = kernels::quantize_split_i16(row_of(i), K, ldw, xb + 2 * i * ldw, xb + (2 * i + 1) * ldw);
    most = 3;  // 4 rows' 16 accumulators spill (kernels::gemm_q8_quad)
  } else {
    if (static_cast<int64_t>(sc.xq.size()) < N * ldw) sc.xq.resize(static_cast<size_t>(N * ldw));
    xq = sc.xq.data();
    for (int64_t i = 0; i < N; ++i) sx[i] = kernels::quantize_i16(row_of(i), K, ldw, xq + i * ldw);
  }
  // Up to `most` rows (4, or 5: q8_row_groups) share each pass over the weights; more rows go in
  // balanced groups (a beam of 5 as 2 + 3 or as one pass, 9 as 3 + 3 + 3 or 4 + 5). GMAC/s for
  // 1-5 rows in one pass, Zen 5, Node 20: 30, 43, 47, 50, 29; Chromium 156: 22-27, 35-39, 39-46,
  // 50-52, 45-52 (a coarser clock).
  // Tasks: a row group times up to 32 tiles (256 outputs), fewer where that leaves a pool's
  // threads under 4 tasks each (a decoder step's 256-wide layers would be one task), but never
  // under ~64K multiply-adds (a handoff to another thread costs a few microseconds: a GRU
  // encoder's one-row products stay on this one). Each output is one task's, so any thread count
  // gives the same bits.
  const int64_t groups = (N + most - 1) / most, tiles = (M + 7) / 8, threads = pool ? pool->size() : 1;
  const int64_t rows_per_group = (N + groups - 1) / std::max<int64_t>(groups, 1);
  const int64_t min_tiles = (65536 + 8 * rows_per_group * ldw - 1) / std::max<int64_t>(8 * rows_per_group * ldw, 1);
  const int64_t want = threads > 1 ? std::max((tiles * groups + 4 * threads - 1) / (4 * threads), min_tiles) : 32;
  const int64_t kTilesPerTask = std::clamp<int64_t>(want, 4, kMaxTilesPerTask);
  const int64_t blocks = (tiles + kTilesPerTask - 1) / kTilesPerTask;
  // Each group's nonzero k-pairs or k-quads (in one chunk): np[g] of them at pairs + g kp, or -1
  // for the whole rows.
  const int64_t kp = ldw / 2;
  int32_t* pairs = nullptr;
  int64_t* np = nullptr;
  if (ldw <= kernels::Q8Layout::kQ8Chunk) {
    if (static_cast<int64_t>(sc.pairs.size()) < groups * kp) sc.pairs.resize(static_cast<size_t>(groups * kp));
    if (static_cast<int64_t>(sc.np.size()) < groups) sc.np.resize(static_cast<size_t>(groups));
    if (static_cast<int64_t>(sc.any.size()) < ldw) sc.any.resize(static_cast<size_t>(ldw));
    pairs = sc.pairs.data(), np = sc.np.data();
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t i0 = g * N / groups, rows = (g + 1) * N / groups - i0;
      int16_t* x = xq ? xq + i0 * ldw : nullptr;
      uint8_t* b = xb ? xb + 2 * i0 * ldw : nullptr;
      if (x ? !pairs_look_sparse(x, kp) : !quads_look_sparse(b, ldw))
        np[g] = -1;
      else
        np[g] = x ? sparse_pairs(x, ldw, rows, kp, pairs + g * kp, sc.any.data())
                  : sparse_quads(b, ldw, rows, ldw / 4, pairs + g * kp, reinterpret_cast<uint8_t*>(sc.any.data()));
    }
  }
  auto task = [&](int64_t k) {
    const int64_t g = k / blocks, t0 = k % blocks * kTilesPerTask, t1 = std::min(tiles, t0 + kTilesPerTask);
    const int64_t i0 = g * N / groups, rows = (g + 1) * N / groups - i0;
    const int16_t* xr = xq ? xq + i0 * ldw : nullptr;
    const uint8_t* br = xb ? xb + 2 * i0 * ldw : nullptr;
    const float* s = sx + i0;
    float* yr = C + i0 * M;
    const int64_t n = np ? np[g] : -1;
    const int32_t* pr = n >= 0 ? pairs + g * kp : nullptr;
    switch (rows) {
      case 1: q8_rows<1>(xr, br, ldw, s, L, Wt, w_scale, bias, relu, yr, t0, t1, pr, n); break;
      case 2: q8_rows<2>(xr, br, ldw, s, L, Wt, w_scale, bias, relu, yr, t0, t1, pr, n); break;
      case 3: q8_rows<3>(xr, br, ldw, s, L, Wt, w_scale, bias, relu, yr, t0, t1, pr, n); break;
      case 4: q8_rows<4>(xr, br, ldw, s, L, Wt, w_scale, bias, relu, yr, t0, t1, pr, n); break;
      default: q8_rows<5>(xr, br, ldw, s, L, Wt, w_scale, bias, relu, yr, t0, t1, pr, n); break;
    }
  };
  if (pool) parallel_for(pool, groups * blocks, task);
  else
    for (int64_t k = 0; k < groups * blocks; ++k) task(k);
  if (first) expand_rows(C, rows_in, M, first + rows_in);
}
}  // namespace

// A quarter of fp32's weight traffic, and 8 multiply-adds per SIMD instruction; the activations'
// rounding (<= 6e-5 of the row's largest entry) is far below the weights' own int8 rounding.
void gemm_nt_q8(const float* A, int64_t N, int64_t K, const kernels::Q8Layout& layout, const int8_t* Wt,
                const float* w_scale, float* C, ThreadPool* pool, GemmScratch* scratch, const float* bias, bool relu) {
  q8_product(A, N, K, layout, Wt, w_scale, bias, relu, C, pool, scratch, q8_row_groups());
}

bool set_q8_quads(bool on) {
  quads.store(on && kernels::q8_quads_supported(), std::memory_order_relaxed);
  return q8_quads();
}

bool q8_quads() { return quads.load(std::memory_order_relaxed); }

int set_q8_row_groups(int rows) {
  five_rows.store(rows == 5, std::memory_order_relaxed);
  return q8_row_groups();
}

int q8_row_groups() { return five_rows.load(std::memory_order_relaxed) ? 5 : 4; }

float q8_row_groups_probe(int rows, int reps) {
  // The decision itself: a beam of 5 rows through the product as a decoder step runs it, in one
  // pass or in 2 + 3. Not the kernel alone: looped on its own it ran 5 rows at 4 rows' rate in
  // Node 20 (0.063 against 0.061 ms a row), where the product took 1.46x; what spills there is
  // the kernel inside the product's loop. The values only keep the compiler from folding the work
  // away.
  constexpr int64_t N = 5, K = 256, M = 256;
  static std::vector<float> a, c, scale;
  static std::vector<int8_t> wt;
  static GemmScratch sc;
  const kernels::Q8Layout L{M, K, false};
  if (a.empty()) {
    a.resize(N * K), c.resize(N * M), scale.assign(M, 1.0f / 64);
    std::vector<int8_t> w(M * K);
    for (int64_t i = 0; i < N * K; ++i) a[i] = static_cast<float>(i % 37) - 18.0f;
    for (int64_t i = 0; i < M * K; ++i) w[i] = static_cast<int8_t>(i % 101 - 50);
    wt.resize(static_cast<size_t>(L.size()));
    L.pack(w.data(), wt.data());
  }
  float sum = 0.0f;
  for (int r = 0; r < reps; ++r) {
    q8_product(a.data(), N, K, L, wt.data(), scale.data(), nullptr, false, c.data(), nullptr, &sc, rows == 5 ? 5 : 4);
    sum += c[r % (N * M)];
  }
  return sum;
}

}  // namespace attnlab::nn
