// attnlab::Error: the one exception type for bad arguments, its message naming the core's own
// arguments. Native callers and the fuzzers rely on it. In the WebAssembly build the TypeScript
// layer (web/lib) checks every argument first and words those errors itself, so a core message
// that reaches JavaScript (through cpp/bindings/marshal.hpp's guarded()) is about what only the
// core can tell: a model file, an overflow, the heap.
#pragma once
#include <stdexcept>
#include <string>

namespace attnlab {

struct Error : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Builds the message only when the check fails, so checks cost nothing on the happy path.
template <class MakeMessage>
inline void require(bool ok, MakeMessage&& make_message) {
  if (!ok) throw Error(make_message());
}

}  // namespace attnlab
