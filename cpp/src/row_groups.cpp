#include "attnlab/row_groups.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <type_traits>

#include "kernels.hpp"

namespace attnlab {
namespace {
std::atomic<bool> wide{false};
}  // namespace

int set_row_groups(int rows) {
  wide.store(rows == kernels::kWideRows && rows > 4, std::memory_order_relaxed);
  return row_groups();
}

int row_groups() { return wide.load(std::memory_order_relaxed) ? kernels::kWideRows : 4; }

int row_group_for(int64_t rows) {
  constexpr int64_t kWide = kernels::kWideRows;
  const auto round_up = [](int64_t x, int64_t m) { return (x + m - 1) / m * m; };
  return row_groups() == kWide && round_up(rows, kWide) * 100 <= round_up(rows, 4) * 108 ? kWide : 4;
}

float row_groups_probe(int rows, int reps) {
  // One 64-key tile at D = 64, as the attention kernel runs it: QK^T into the score tile (the
  // dense layer's product too), then P V.
  constexpr int64_t D = 64, T = 64;
  constexpr int G = kernels::kWideRows;
  static float q[G * D], k[T * D], v[T * D], s[G * T], acc[G * D];
  // Operands written here, so the compiler cannot take them for the zeros they start as and fold
  // the products away; 0.01 keeps every sum far from denormals and overflow.
  static bool filled = false;
  if (!filled) {
    std::fill(q, q + G * D, 0.01f), std::fill(k, k + T * D, 0.01f), std::fill(v, v + T * D, 0.01f);
    filled = true;
  }
  auto tile = [&](auto rows_c) {
    constexpr int R = decltype(rows_c)::value;
    for (int64_t p = 0; p < T; p += 8) kernels::gemm_rows<R, 1, R>(D, q, k + p * D, 8, s + p, T, 8, false);
    for (int64_t c = 0; c < D; c += 8) kernels::gemm_rows<R, T, 1>(T, s, v + c, D, acc + c, D, 8, true);
  };
  for (int r = 0; r < reps; ++r) {
    if (rows == G)
      tile(std::integral_constant<int, G>());
    else
      tile(std::integral_constant<int, 4>());
  }
  float sum = s[0];  // every output feeds the checksum, so none of the work is dead
  for (float a : acc) sum += a;
  return sum;
}

}  // namespace attnlab
