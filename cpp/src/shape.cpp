#include "attnlab/shape.hpp"

#include "attnlab/error.hpp"

namespace attnlab {

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Broadcast broadcast_to(const Shape& operand, const Shape& target, const std::string& name) {
  const size_t n = target.size(), m = operand.size();
  require(n >= 2 && m <= n, [&] {
    return name + ": expected a shape that broadcasts to " + to_string(target) + ", got " +
           to_string(operand);
  });
  // Right-align operand against target; strides of broadcast (size-1 or missing) dims are 0.
  std::vector<int64_t> stride(n, 0);
  int64_t s = 1;
  for (size_t t = n; t-- > 0;) {
    if (t + m < n) break;
    const int64_t d = operand[t + m - n];
    require(d == target[t] || d == 1, [&] {
      return name + ": expected a shape that broadcasts to " + to_string(target) + ", got " +
             to_string(operand);
    });
    stride[t] = d == 1 ? 0 : s;
    s *= d;
  }
  Broadcast b;
  b.row_stride = stride[n - 2];
  b.col_stride = stride[n - 1];
  const size_t lead = n - 2;
  int64_t batch = 1;
  for (size_t t = 0; t < lead; ++t) batch *= target[t];
  b.batch_offset.resize(static_cast<size_t>(batch));
  for (int64_t idx = 0; idx < batch; ++idx) {
    int64_t rem = idx, off = 0;
    for (size_t t = lead; t-- > 0;) {
      off += (rem % target[t]) * stride[t];
      rem /= target[t];
    }
    b.batch_offset[static_cast<size_t>(idx)] = off;
  }
  return b;
}

}  // namespace attnlab
