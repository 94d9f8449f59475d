// The engine's matrix products over flat row-major arrays, all on the core's kernels
// (cpp/kernels: the gemm_4x8 family for fp32, gemm_q8_8 or gemm_q8_quad for int8 weights): the forward of every Linear
// and the two products of its backward. Each output element sums its products in order
// (k = 0, 1, ...) whatever the blocking, so every WebAssembly variant gives the same bits (the
// kernels' twin contract); native builds may differ in the last bit where they fuse multiply-adds.
#pragma once
#include <cstdint>
#include <vector>

namespace attnlab {
class ThreadPool;
}
namespace attnlab::kernels {
struct Q8Layout;
}

namespace attnlab::nn {

// The packed operands' space, kept between products by whoever calls them often (a Tape: a
// training step's products would otherwise allocate, page in and zero megabytes each; natively
// that was 17% of the tutorial GRU recipe's time). Null: the product allocates its own.
struct GemmScratch {
  std::vector<float> a, b;
  std::vector<int16_t> xq;  // gemm_nt_q8's quantised rows (the pairs layout) and their scales
  std::vector<float> sx;
  std::vector<int32_t> pairs;  // each row group's nonzero k-pairs, and how many (-1: all)
  std::vector<int64_t> np;
  std::vector<int16_t> any;    // a row group's rows or-ed together
  std::vector<uint8_t> xb;     // the rows as kernels::split_i16's bytes (the quads layout)
  std::vector<int32_t> rows;   // gemm_nt_q8's distinct rows of A, and which of them each row is
};

// C [N, M] = A [N, K] B^T, B [M, K] (a Linear's forward: x W^T).
void gemm_nt(const float* A, const float* B, float* C, int64_t N, int64_t M, int64_t K, GemmScratch* scratch = nullptr);
// C [K, M] (+)= A^T [K, N] B [N, M] (A [N, K]): a Linear's weight gradient dy^T x.
void gemm_tn(const float* A, const float* B, float* C, int64_t N, int64_t K, int64_t M, bool accumulate,
             GemmScratch* scratch = nullptr);
// C [N, M] (+)= A [N, K] B [K, M]: a Linear's input gradient dy W.
void gemm_nn(const float* A, const float* B, float* C, int64_t N, int64_t K, int64_t M, bool accumulate,
             GemmScratch* scratch = nullptr);
// C [N, M] (+)= A [N, K] B [K, M] with rows lda, ldb and ldc floats apart, B and C read and written
// where they are: the small per-head products of attention's backward (a head's columns of wider
// rows), four rows of A packed at a time, in one pass over K.
void gemm_nn_strided(const float* A, int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc, int64_t N,
                     int64_t K, int64_t M, bool accumulate, GemmScratch* scratch = nullptr);
// C [N, M] = A [N, K] W^T for int8 weights W [M, ldw] (rows zero-padded to ldw, a multiple of 16,
// K <= ldw) packed as `layout` says into Wt, with per-row scales: each row of A quantised to int16,
// exact integer dot products, one float scale per pair. Tasks of 32-256 outputs on `pool` (null:
// this thread); the same bits at any thread count and in either layout. `bias` (M, or null) is
// added and ReLU applied (relu) as each tile is scaled, the bits of separate passes. A row equal
// to an earlier one gets a copy of its outputs (the same bits as its own).
void gemm_nt_q8(const float* A, int64_t N, int64_t K, const kernels::Q8Layout& layout, const int8_t* Wt,
                const float* w_scale, float* C, ThreadPool* pool = nullptr, GemmScratch* scratch = nullptr,
                const float* bias = nullptr, bool relu = false);

// The layout new int8 weights are packed in: quads (relaxed SIMD's byte dot product: a beam of 5
// 1.2-1.3x faster in Chromium 156, Zen 5) where kernels::q8_quads_supported(), else pairs. Either
// gives the same bits; set_q8_quads(false) (tests) packs pairs, and returns the setting now used.
bool set_q8_quads(bool on);
bool q8_quads();

// How many rows share a pass over gemm_nt_q8's weights: 4, or 5 (a beam of 5 in one pass, not
// 2 + 3). kernels::gemm_q8_8<5> keeps 13 vectors live, and whether they stay in registers is up
// to the engine's compiler. Inlined into q8_rows, Node 20's V8 spilled them (a beam-5 product
// 1.6x slower in one pass); out of line (q8_pairs_call) it is 1.38x faster in one pass there, as
// in Chromium 156 (1.25x; Zen 5). So loader.ts sets 5 in V8 and elsewhere times
// q8_row_groups_probe (a 5-row product, 256 x 256, `reps` times, in passes of at most `rows`;
// returns a checksum) with 4 and 5 and sets the faster, once per module, before any op. Integer
// sums: the bits never depend on it.
int set_q8_row_groups(int rows);  // returns the rows now used: 5, or 4 for anything else
int q8_row_groups();
float q8_row_groups_probe(int rows, int reps);

}  // namespace attnlab::nn
