#include "attnlab/nn/tape.hpp"

#include "attnlab/error.hpp"

namespace attnlab::nn {

T Tape::constant(int64_t r, int64_t c, std::vector<float> v) {
  require(static_cast<int64_t>(v.size()) == r * c, [] { return std::string("Tape::constant: size mismatch"); });
  Tensor& t = node(r, c);
  t.v = std::move(v);
  return &t;
}

void Tape::backward(T loss) {
  std::fill(loss->grad(), loss->grad() + loss->size(), 1.f);
  for (auto it = backs_.rbegin(); it != backs_.rend(); ++it) (*it)();
}

}  // namespace attnlab::nn
