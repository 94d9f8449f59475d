#include "attnlab/linear.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "attnlab/attention.hpp"
#include "attnlab/row_groups.hpp"
#include "kernels.hpp"

namespace attnlab {
namespace {
constexpr int64_t kPanelsPerTask = 32;  // 256 output columns per task: one row still splits
// Rows of x per task: as many as keep their interleaved copy within kRowBytes (L2 holds it
// beside the panel in use), at least 32 and at most 128, then whole groups of G (6 rounds them up
// to 36..132). Every weight panel read from memory then serves all of them: GPT-2's 128-token
// prompt streamed its 0.5 GB of weights 4 times with 32.
constexpr int64_t kRowBytes = 1 << 20;
int64_t rows_per_task(int64_t in, int64_t G) {
  const int64_t r = std::clamp<int64_t>(kRowBytes / (4 * std::max<int64_t>(in, 1)) / 4 * 4, 32, 128);
  return (r + G - 1) / G * G;
}

// Rows [r0, r1) by panels [p0, p1) in register blocks of G rows (row_groups()): the rows
// interleaved by G (the A operand) once for all the panels. Every element sums over `in` in the
// same order whatever G is, so G never changes a bit.
template <int G>
void product_block(const float* x, int64_t ldx, int64_t r0, int64_t r1, int64_t in, const float* panels,
                   int64_t p0, int64_t p1, int64_t out, float* y, int64_t ldy) {
  const int64_t panel_size = 8 * in, R = (r1 - r0 + G - 1) / G * G;
  std::unique_ptr<float[]> xs(new float[R * in]);
  for (int64_t g = 0; g < R; g += G)
    kernels::pack_rows<G>(x + (r0 + g) * ldx, ldx, std::min<int64_t>(G, r1 - r0 - g), in, xs.get() + g * in);
  float tail[G * 16];  // the last block when fewer than G rows are left
  // Four rows take panels in pairs where both are full and the ISA gains by it (kPanelPairs).
  for (int64_t p = p0; p < p1;) {
    const float* panel = panels + p * panel_size;
    const bool pair = kernels::kPanelPairs && G == 4 && p + 1 < p1 && out - p * 8 >= 16;
    const int64_t n = pair ? 16 : std::min<int64_t>(8, out - p * 8);
    for (int64_t g = 0; g < R; g += G) {
      float* yg = y + (r0 + g) * ldy + p * 8;
      const int64_t m = std::min<int64_t>(G, r1 - r0 - g);
      float* c = m == G ? yg : tail;
      const int64_t ldc = m == G ? ldy : 16;
      if (pair)
        kernels::gemm_4x16<1, 4>(in, xs.get() + g * in, panel, panel + panel_size, 8, c, ldc, false);
      else
        kernels::gemm_rows<G, 1, G>(in, xs.get() + g * in, panel, 8, c, ldc, n, false);
      if (m < G)
        for (int64_t i = 0; i < m; ++i)
          std::memcpy(yg + i * ldy, tail + i * 16, sizeof(float) * static_cast<size_t>(n));
    }
    p += pair ? 2 : 1;
  }
}
}  // namespace

void linear_panels(const float* x, int64_t ldx, int64_t rows, int64_t in, const float* panels,
                   const float* bias, int64_t out, float* y, int64_t ldy, ThreadPool* pool) {
  if (rows <= 0 || out <= 0) return;
  const int64_t num_panels = (out + 7) / 8;
  // Never 6 for a generated token's single row, which streams the weights (GPT-2's vocabulary,
  // 147 MB: 4 rows 5.7 ms, 6 rows 7.5 ms, Chromium 156).
  constexpr int64_t kWide = kernels::kWideRows;
  const int G = row_group_for(rows);
  const int64_t kRowsPerTask = rows_per_task(in, G);
  const int64_t row_blocks = (rows + kRowsPerTask - 1) / kRowsPerTask;
  // Column blocks of up to kPanelsPerTask panels, more of them where the rows make few blocks, so
  // every thread gets several tasks (with 128-row blocks, GPT-2's 2304-wide layer gave 9 tasks to 2 threads).
  const int64_t threads = pool ? pool->size() : 1;
  const int64_t col_blocks = std::min(num_panels, std::max((num_panels + kPanelsPerTask - 1) / kPanelsPerTask,
                                                           (threads > 1 ? 8 * threads + row_blocks - 1 : 0) / row_blocks));
  const int64_t panels_per_task = (num_panels + col_blocks - 1) / col_blocks;
  parallel_for(pool, row_blocks * col_blocks, [&](int64_t t) {
    const int64_t r0 = t / col_blocks * kRowsPerTask, r1 = std::min(rows, r0 + kRowsPerTask);
    const int64_t p0 = t % col_blocks * panels_per_task, p1 = std::min(num_panels, p0 + panels_per_task);
    if (G == kWide)
      product_block<kWide>(x, ldx, r0, r1, in, panels, p0, p1, out, y, ldy);
    else
      product_block<4>(x, ldx, r0, r1, in, panels, p0, p1, out, y, ldy);
    if (bias)
      for (int64_t r = r0; r < r1; ++r)
        for (int64_t j = p0 * 8; j < std::min(out, p1 * 8); ++j) y[r * ldy + j] += bias[j];
  });
}

void linear(const float* x, int64_t ldx, int64_t rows, int64_t in, const float* W,
            const float* bias, int64_t out, float* y, int64_t ldy, ThreadPool* pool) {
  // W's rows become 8-column panels of the micro-kernel's b operand (O(in * out), once).
  std::unique_ptr<float[]> panels(new float[kernels::panels_size(out, in)]);
  parallel_for(pool, (out + 7) / 8, [&](int64_t p) {
    kernels::pack_panels(W + p * 8 * in, in, std::min<int64_t>(8, out - p * 8), in, panels.get() + p * 8 * in);
  });
  linear_panels(x, ldx, rows, in, panels.get(), bias, out, y, ldy, pool);
}

void linear_checked(const float* x, int64_t rows, int64_t in, const float* W, const float* bias,
                    int64_t out, float* y, ThreadPool* pool) {
  linear(x, in, rows, in, W, bias, out, y, out, pool);
  require_finite(y, rows * out, bias ? "x, weight, bias: the output overflows" : "x, weight: the product overflows");
}

}  // namespace attnlab
