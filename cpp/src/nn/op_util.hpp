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

}  // namespace attnlab::nn
