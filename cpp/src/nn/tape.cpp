#include "attnlab/nn/tape.hpp"

#include <cstring>

#include "attnlab/error.hpp"

namespace attnlab::nn {

Tensor& Tape::node(int64_t r, int64_t c) {
  if (used_ == nodes_.size()) nodes_.emplace_back();
  Tensor& t = nodes_[used_++];
  t.r = r;
  t.c = c;
  t.has_grad = false;
  t.requires_grad = false;
  return t;
}

// Zeroed with memset (a recycled node of the same size is the common case: a decoder's steps).
// Out of line, not inlined into every op: the home page's first view has no WebAssembly bytes to
// spare. Growing a node still runs libc++'s element loop, which the -Os build makes slow (2.4 ns a
// float in the profile); copying from a zero buffer avoided it but cost 70 more gzipped bytes.
T Tape::make_uninit(int64_t r, int64_t c, bool rg) {
  Tensor& t = node(r, c);
  const size_t n = static_cast<size_t>(r * c);
  if (t.v.size() != n) t.v.resize(n);
  t.requires_grad = rg && grad_enabled;
  return &t;
}

T Tape::make(int64_t r, int64_t c, bool rg) {
  T t = make_uninit(r, c, rg);
  if (t->size()) std::memset(t->v.data(), 0, sizeof(float) * static_cast<size_t>(t->size()));
  return t;
}

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
