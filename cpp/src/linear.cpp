#include "attnlab/linear.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "kernels.hpp"

namespace attnlab {
namespace {
constexpr int64_t kRowsPerTask = 32;  // rows of x per task: their [32, in] block stays in cache
}

void linear(const float* x, int64_t ldx, int64_t rows, int64_t in, const float* W,
            const float* bias, int64_t out, float* y, int64_t ldy, ThreadPool* pool) {
  // W's rows become 8-column panels of the micro-kernel's b operand (O(in * out), once).
  const int64_t panel_size = 8 * in;
  std::unique_ptr<float[]> panels(new float[kernels::panels_size(out, in)]);
  const int64_t num_panels = (out + 7) / 8;
  parallel_for(pool, num_panels, [&](int64_t p) {
    kernels::pack_panels(W + p * 8 * in, in, std::min<int64_t>(8, out - p * 8), in,
                         panels.get() + p * panel_size);
  });
  parallel_for(pool, (rows + kRowsPerTask - 1) / kRowsPerTask, [&](int64_t t) {
    const int64_t r0 = t * kRowsPerTask, r1 = std::min(rows, r0 + kRowsPerTask);
    const int64_t full = r0 + (r1 - r0) / 4 * 4, tail = r1 - full;
    // Fewer than 4 rows left: the block runs on zero-padded copies of them.
    float tail_y[4 * 8];
    std::unique_ptr<float[]> tail_x(new float[tail ? 4 * in : 0]());
    for (int64_t i = 0; i < tail; ++i)
      std::memcpy(tail_x.get() + i * in, x + (full + i) * ldx, sizeof(float) * static_cast<size_t>(in));
    for (int64_t p = 0; p < num_panels; ++p) {
      const float* panel = panels.get() + p * panel_size;
      const int64_t n = std::min<int64_t>(8, out - p * 8);
      for (int64_t r = r0; r < full; r += 4)
        kernels::gemm_4x8(in, x + r * ldx, ldx, panel, 8, y + r * ldy + p * 8, ldy, n, false);
      if (tail) {
        kernels::gemm_4x8(in, tail_x.get(), in, panel, 8, tail_y, 8, n, false);
        for (int64_t i = 0; i < tail; ++i)
          std::memcpy(y + (full + i) * ldy + p * 8, tail_y + i * 8, sizeof(float) * static_cast<size_t>(n));
      }
    }
    if (bias)
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t j = 0; j < out; ++j) y[r * ldy + j] += bias[j];
  });
}

}  // namespace attnlab
