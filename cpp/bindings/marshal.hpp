// What the binding files share, embind included: reading the typed argument objects of
// web/lib/wasm-module.ts, which web/lib has checked (see attnlab/error.hpp), the one error
// convention, the thread pool.
#pragma once
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <string>
#include <vector>

#include "attnlab/attnlab.hpp"

namespace attnlab::bindings {

using emscripten::val;

// The module's pool, set by setThreads() (common.cpp); null means the calling thread only.
ThreadPool* thread_pool();

// A heap address, passed as a JS number; a field holding one (null when null or undefined).
template <class T>
T* addr(double p) { return reinterpret_cast<T*>(static_cast<uintptr_t>(p)); }
inline bool given(const val& v) { return !v.isUndefined() && !v.isNull(); }
template <class T = const float>
T* ptr(const val& a, const char* field) {
  const val v = a[field];
  return given(v) ? addr<T>(v.as<double>()) : nullptr;
}
// Integers arrive as JS numbers (embind has no int64 without BigInt); exact below 2^53.
inline int64_t num(const val& a, const char* field) { return static_cast<int64_t>(a[field].as<double>()); }
inline double real(const val& a, const char* field) { return a[field].as<double>(); }
inline bool flag(const val& a, const char* field) { return a[field].as<bool>(); }
inline std::string str(const val& a, const char* field) { return a[field].as<std::string>(); }
// A JS array of integers, copied in by one typed-array set().
inline std::vector<int32_t> ints(const val& v) { return emscripten::convertJSArrayToNumberVector<int32_t>(v); }
inline Shape shape(const val& a, const char* field) {
  const std::vector<double> d = emscripten::vecFromJSArray<double>(a[field]);
  return Shape(d.begin(), d.end());
}

// Results out: a JS-owned typed array, copied from a typed view of the heap before the call
// returns (so nothing stays held, and no heap growth can detach it), or an array of strings.
template <class T>
val typed_copy(const std::vector<T>& v) {
  return val(emscripten::typed_memory_view(v.size(), v.data())).call<val>("slice");
}
inline val strings(const std::vector<std::string>& v) {
  val a = val::array();
  for (const std::string& s : v) a.call<void>("push", s);
  return a;
}

// Binds `name` to f under the one error convention (attnlab/error.hpp's error_message), so no
// entry point can forget it: f is a capture-free lambda returning nothing; JS gets "" or the
// message, which the TypeScript layer throws after its `fn: ` prefix.
template <class F, class Member = decltype(&F::operator())>
struct Entry;
template <class F, class... A>
struct Entry<F, void (F::*)(A...) const> {
  static inline void (*fn)(A...) = nullptr;
  static inline const char* what = nullptr;
  static std::string call(A... a) { return error_message([&] { fn(std::move(a)...); }, what); }
};
template <class F>
void def(const char* name, F f, const char* what = "this call") {
  Entry<F>::fn = f;
  Entry<F>::what = what;
  emscripten::function(name, &Entry<F>::call);
}

inline ScoreParams read_params(const val& a) {
  return {ptr(a, "W"), ptr(a, "Wq"), ptr(a, "Wk"), ptr(a, "wv"), num(a, "hidden"), static_cast<float>(real(a, "scale"))};
}
inline T5Params read_t5(const val& t) { return {num(t, "numBuckets"), num(t, "maxDistance"), flag(t, "bidirectional")}; }

// MaskArgs (web/lib/wasm-module.ts) over scores of shape `target` = [lead..., Sq, Sk].
inline MaskSet read_masks(const val& m, const Shape& target) {
  if (!given(m)) return {};
  MaskSpec s{flag(m, "causal"), num(m, "queryOffset")};
  for (const val& b : emscripten::vecFromJSArray<val>(m["bools"]))
    s.bools.push_back({ptr<const uint8_t>(b, "ptr"), shape(b, "shape"), flag(b, "trueBlocks")});
  for (const val& a : emscripten::vecFromJSArray<val>(m["additive"])) s.additive.push_back({ptr(a, "ptr"), shape(a, "shape")});
  if (const val v = m["validLens"]; given(v)) s.valid_lens = {ptr<const int32_t>(v, "ptr"), num(v, "length")};
  if (const val v = m["alibi"]; given(v)) s.alibi = {ptr(v, "slopes"), num(v, "heads"), ptr<float>(v, "table")};
  if (const val v = m["t5"]; given(v)) s.t5 = {ptr(v, "weights"), num(v, "heads"), read_t5(v), ptr<float>(v, "table")};
  return make_masks(s, target);
}

inline AttentionDims read_dims(const val& a) {
  return {shape(a, "lead"), num(a, "Sq"), num(a, "Sk"), num(a, "Dq"), num(a, "Dk"), num(a, "Dv")};
}

}  // namespace attnlab::bindings
