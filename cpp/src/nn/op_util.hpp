// What the op files share: the argument check that names the op, and whether any input needs a
// gradient (then the op records its backward).
#pragma once
#include <initializer_list>
#include <string>

#include "attnlab/error.hpp"
#include "attnlab/nn/tape.hpp"

namespace attnlab::nn {

inline bool any_rg(std::initializer_list<T> xs) {
  for (T x : xs)
    if (x && x->requires_grad) return true;
  return false;
}
inline void check(bool ok, const char* op, const char* what) {
  if (!ok) throw Error(std::string("nn::") + op + ": " + what);
}
// x's gradient (+)= value(i) for every i < x->size(), through Tensor::grad_slot: added to another
// op's part, else assigned without zeroing first (0.f + value keeps the bits of adding to zeros).
template <class F>
void add_to_grad(T x, F&& value) {
  bool accumulate = false;
  float* __restrict d = x->grad_slot(accumulate);
  const int64_t n = x->size();
  if (accumulate)
    for (int64_t i = 0; i < n; ++i) d[i] += value(i);
  else
    for (int64_t i = 0; i < n; ++i) d[i] = 0.f + value(i);
}
// The same by row and column, value(r, c), for a gradient gathered from a strided one.
template <class F>
void add_to_grad_2d(T x, F&& value) {
  bool accumulate = false;
  float* __restrict d = x->grad_slot(accumulate);
  const int64_t R = x->r, C = x->c;
  for (int64_t r = 0; r < R; ++r)
    if (accumulate)
      for (int64_t c = 0; c < C; ++c) d[r * C + c] += value(r, c);
    else
      for (int64_t c = 0; c < C; ++c) d[r * C + c] = 0.f + value(r, c);
}

}  // namespace attnlab::nn
