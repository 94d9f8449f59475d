// Shapes of flat row-major arrays, and numpy-style broadcasting of masks over leading dimensions.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace attnlab {

using Shape = std::vector<int64_t>;

int64_t numel(const Shape& shape);
std::string to_string(const Shape& shape);  // "[2, 3, 4]"

// Where each slice of a broadcast operand starts. The operand has shape `operand`, right-aligned
// against `target` = [lead..., rows, cols]; each operand dimension is 1 or equal to the target's.
// For flat index b over target's leading dimensions, the operand's [rows, cols] slice starts at
// batch_offset[b]; element (i, j) is at batch_offset[b] + i * row_stride + j * col_stride.
struct Broadcast {
  std::vector<int64_t> batch_offset;
  int64_t row_stride = 0;
  int64_t col_stride = 0;
};

// Throws attnlab::Error naming `name` when `operand` does not broadcast to `target`.
Broadcast broadcast_to(const Shape& operand, const Shape& target, const std::string& name);

}  // namespace attnlab
