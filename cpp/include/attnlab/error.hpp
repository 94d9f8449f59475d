// attnlab::Error: the one exception type for bad arguments.
// The bindings catch it at the boundary and hand its message to JavaScript as an Error.
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
