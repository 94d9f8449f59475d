// A dense layer on the gemm_4x8 micro-kernel (gemm_6x8 where row_groups() says 6): y = x W^T +
// bias, W in PyTorch Linear layout.
#pragma once
#include <cstdint>

#include "attnlab/thread_pool.hpp"

namespace attnlab {

// x [rows, in] (row stride ldx), W [out, in], bias [out] or null -> y [rows, out] (row stride
// ldy). Tasks are fixed blocks of rows x output columns, so results do not depend on the thread
// count; few rows (a generated token) still split over columns.
void linear(const float* x, int64_t ldx, int64_t rows, int64_t in, const float* W,
            const float* bias, int64_t out, float* y, int64_t ldy, ThreadPool* pool);
// linear() of the JavaScript op: contiguous rows, and an Error naming its arguments when the
// output overflows (inf or NaN from finite inputs) where linear() leaves it to the caller.
void linear_checked(const float* x, int64_t rows, int64_t in, const float* W, const float* bias,
                    int64_t out, float* y, ThreadPool* pool);
// The same product with W already packed (kernels::pack_panels of W [out, in], what linear() does
// on every call): weights used many times, as a pretrained model's, are packed once, at load.
void linear_panels(const float* x, int64_t ldx, int64_t rows, int64_t in, const float* panels,
                   const float* bias, int64_t out, float* y, int64_t ldy, ThreadPool* pool);

}  // namespace attnlab
