// Dense layers whose weights are packed once, at load, into the 8-row panels of the gemm_4x8
// family (kernels::pack_panels), in place of the [out, in] matrix. attnlab::linear packs W on
// every call: for a generated token (one row) that pass over the weights cost as much as the
// product itself. Same kernels and the same order of sums as attnlab::linear: the same bits.
#pragma once
#include <cstdint>

#include "attnlab/thread_pool.hpp"

namespace attnlab::pretrained {

// Floats the packed form of an [out, in] matrix takes (out rounded up to 8).
int64_t packed_size(int64_t out, int64_t in);
// W [out, in] -> panels (may not alias W).
void pack_weights(const float* W, int64_t out, int64_t in, float* panels);
// Row r of the packed matrix (an embedding lookup from a packed, tied output matrix).
void packed_row(const float* panels, int64_t in, int64_t r, float* row);
// y [rows, out] = x [rows, in] W^T + bias. Tasks are fixed blocks of rows x output columns, so
// results do not depend on the thread count; few rows (a generated token) still split over columns.
void packed_linear(const float* x, int64_t rows, int64_t in, const float* panels, const float* bias, int64_t out,
                   float* y, ThreadPool* pool);

}  // namespace attnlab::pretrained
