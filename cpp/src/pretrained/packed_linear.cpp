#include "packed_linear.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "kernels.hpp"

namespace attnlab::pretrained {
namespace {
constexpr int64_t kRowsPerTask = 32;    // as attnlab::linear: a [32, in] block of x stays in cache
constexpr int64_t kPanelsPerTask = 32;  // 256 output columns per task
}  // namespace

int64_t packed_size(int64_t out, int64_t in) { return kernels::panels_size(out, in); }

void pack_weights(const float* W, int64_t out, int64_t in, float* panels) {
  kernels::pack_panels(W, in, out, in, panels);
}

void packed_row(const float* panels, int64_t in, int64_t r, float* row) {
  const float* p = panels + (r / 8) * 8 * in + r % 8;
  for (int64_t c = 0; c < in; ++c) row[c] = p[c * 8];
}

void packed_linear(const float* x, int64_t rows, int64_t in, const float* panels, const float* bias, int64_t out,
                   float* y, ThreadPool* pool) {
  const int64_t panel_size = 8 * in, num_panels = (out + 7) / 8;
  const int64_t row_blocks = (rows + kRowsPerTask - 1) / kRowsPerTask;
  const int64_t col_blocks = (num_panels + kPanelsPerTask - 1) / kPanelsPerTask;
  parallel_for(pool, row_blocks * col_blocks, [&](int64_t t) {
    const int64_t r0 = t / col_blocks * kRowsPerTask, r1 = std::min(rows, r0 + kRowsPerTask);
    const int64_t p0 = t % col_blocks * kPanelsPerTask, p1 = std::min(num_panels, p0 + kPanelsPerTask);
    const int64_t R = (r1 - r0 + 3) / 4 * 4;
    std::unique_ptr<float[]> xs(new float[R * in]);
    for (int64_t g = 0; g < R; g += 4)
      kernels::pack_rows4(x + (r0 + g) * in, in, std::min<int64_t>(4, r1 - r0 - g), in, xs.get() + g * in);
    float tail[4 * 16];
    for (int64_t p = p0; p < p1;) {
      const float* panel = panels + p * panel_size;
      const bool pair = p + 1 < p1 && out - p * 8 >= 16;
      const int64_t n = pair ? 16 : std::min<int64_t>(8, out - p * 8);
      for (int64_t g = 0; g < R; g += 4) {
        float* yg = y + (r0 + g) * out + p * 8;
        const int64_t m = std::min<int64_t>(4, r1 - r0 - g);
        float* c = m == 4 ? yg : tail;
        const int64_t ldc = m == 4 ? out : 16;
        if (pair)
          kernels::gemm_4x16<1, 4>(in, xs.get() + g * in, panel, panel + panel_size, 8, c, ldc, false);
        else
          kernels::gemm_4x8<1, 4>(in, xs.get() + g * in, panel, 8, c, ldc, n, false);
        if (m < 4)
          for (int64_t i = 0; i < m; ++i) std::memcpy(yg + i * out, tail + i * 16, sizeof(float) * static_cast<size_t>(n));
      }
      p += pair ? 2 : 1;
    }
    if (bias)
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t j = p0 * 8; j < std::min(out, p1 * 8); ++j) y[r * out + j] += bias[j];
  });
}

}  // namespace attnlab::pretrained
