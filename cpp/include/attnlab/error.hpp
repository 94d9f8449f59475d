// attnlab::Error: the one exception type for bad arguments, its message naming the core's own
// arguments. Native callers and the fuzzers rely on it. In the WebAssembly build the TypeScript
// layer (web/lib) checks every argument first and words those errors itself, so a core message
// that reaches JavaScript (through error_message() below, which every binding runs under) is
// about what only the core can tell: a model file, an overflow, the heap.
#pragma once
#include <new>
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

// The bindings' one error convention: runs f and returns "" on success, else the message the
// TypeScript layer throws after its `fn: ` prefix, so no C++ exception crosses into JavaScript.
// `what` names what outgrew the heap ("this checkpoint").
template <class F>
std::string error_message(F&& f, const char* what = "this call") {
  try {
    f();
    return "";
  } catch (const Error& e) {
    return e.what();
  } catch (const std::bad_alloc&) {
    return std::string("out of memory: the WebAssembly heap could not grow enough for ") + what;
  } catch (const std::length_error&) {
    // A buffer past size_t on wasm32 (4 GiB): more than the heap's 2 GiB in any case.
    return "out of memory: this call's working memory exceeds the WebAssembly heap's 2 GiB limit";
  } catch (const std::exception& e) {
    return std::string("internal error: ") + e.what();
  }
}

}  // namespace attnlab
