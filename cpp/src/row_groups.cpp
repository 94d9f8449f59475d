#include "attnlab/row_groups.hpp"

#include <atomic>
#include <cstdint>

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

}  // namespace attnlab
