#include "attnlab/nn/tape.hpp"

#include "attnlab/error.hpp"

namespace attnlab::nn {

T Tape::make(int64_t r, int64_t c, bool rg) {
  nodes_.emplace_back();
  Tensor& t = nodes_.back();
  t.r = r;
  t.c = c;
  t.v.assign(static_cast<size_t>(r * c), 0.f);
  t.requires_grad = rg && grad_enabled;
  return &t;
}

T Tape::constant(int64_t r, int64_t c, std::vector<float> v) {
  require(static_cast<int64_t>(v.size()) == r * c, [] { return std::string("Tape::constant: size mismatch"); });
  nodes_.emplace_back();
  Tensor& t = nodes_.back();
  t.r = r;
  t.c = c;
  t.v = std::move(v);
  return &t;
}

void Tape::backward(T loss) {
  std::fill(loss->grad(), loss->grad() + loss->size(), 1.f);
  for (auto it = backs_.rbegin(); it != backs_.rend(); ++it) (*it)();
}

}  // namespace attnlab::nn
