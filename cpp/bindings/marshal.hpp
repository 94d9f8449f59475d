// What the binding files share: reading the typed argument objects of web/lib/wasm-module.ts,
// which web/lib has checked (see attnlab/error.hpp), the one error convention, the thread pool.
#pragma once
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <map>
#include <memory>
#include <new>
#include <stdexcept>
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

// The one error convention: "" on success, else the message the TypeScript layer throws after
// its `fn: ` prefix. No C++ exception crosses into JavaScript. `what` names what outgrew the heap.
template <class F>
std::string guarded(F&& f, const char* what = "this call") {
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

// Binds `name` to f under that convention, so no entry point can forget it: f is a
// capture-free lambda returning nothing; JS gets guarded()'s "" or message.
template <class F, class Member = decltype(&F::operator())>
struct Entry;
template <class F, class... A>
struct Entry<F, void (F::*)(A...) const> {
  static inline void (*fn)(A...) = nullptr;
  static inline const char* what = nullptr;
  static std::string call(A... a) { return guarded([&] { fn(std::move(a)...); }, what); }
};
template <class F>
void def(const char* name, F f, const char* what = "this call") {
  Entry<F>::fn = f;
  Entry<F>::what = what;
  emscripten::function(name, &Entry<F>::call);
}

// What JS holds by id (translators, trainers, checkpoints). Ids are unique across a module's
// tables: the nn module's dispose(id) frees a translator or a trainer.
inline int next_held_id = 1;
template <class T>
struct Held {
  int add(std::unique_ptr<T> x) {
    items[next_held_id] = std::move(x);
    return next_held_id++;
  }
  T& at(int id, const char* what) {
    auto it = items.find(id);
    require(it != items.end(), [&] { return std::string(what) + " has been disposed"; });
    return *it->second;
  }
  std::map<int, std::unique_ptr<T>> items;
};

inline T5Params read_t5(const val& t) { return {num(t, "numBuckets"), num(t, "maxDistance"), flag(t, "bidirectional")}; }

// MaskArgs over scores of shape `target` = [lead..., Sq, Sk].
inline MaskSet read_masks(const val& m, const Shape& target) {
  MaskSet set;
  if (!given(m)) return set;
  set.causal = flag(m, "causal");
  set.query_offset = num(m, "queryOffset");
  for (const val& b : emscripten::vecFromJSArray<val>(m["bools"]))
    set.bools.push_back({ptr<const uint8_t>(b, "ptr"), broadcast_to(shape(b, "shape"), target, "mask"), flag(b, "trueBlocks")});
  for (const val& a : emscripten::vecFromJSArray<val>(m["additive"]))
    set.additive.push_back({ptr(a, "ptr"), broadcast_to(shape(a, "shape"), target, "mask")});
  const Shape lead(target.begin(), target.end() - 2);
  const int64_t Sq = target[target.size() - 2], Sk = target.back();
  const val vl = m["validLens"], al = m["alibi"], t5 = m["t5"];
  if (given(vl)) set.valid_lens = make_valid_lens(ptr<const int32_t>(vl, "ptr"), num(vl, "length"), lead, Sq, Sk, "valid_lens");
  if (given(al) && Sq > 0 && Sk > 0)
    set.additive.push_back(alibi_bias(ptr(al, "slopes"), num(al, "heads"), numel(lead), Sq, Sk, ptr<float>(al, "table"), set.query_offset));
  if (given(t5) && Sq > 0 && Sk > 0)
    set.additive.push_back(t5_bias(ptr(t5, "weights"), num(t5, "heads"), read_t5(t5), numel(lead), Sq, Sk, ptr<float>(t5, "table"),
                                   set.query_offset));
  return set;
}

inline AttentionDims read_dims(const val& a) {
  return {shape(a, "lead"), num(a, "Sq"), num(a, "Sk"), num(a, "Dq"), num(a, "Dk"), num(a, "Dv")};
}
inline Shape scores_shape(const AttentionDims& d) {
  Shape t = d.lead;
  t.push_back(d.Sq);
  t.push_back(d.Sk);
  return t;
}

}  // namespace attnlab::bindings
