// What the binding files share: reading heap pointers, numbers, shapes and masks out of the JS
// argument objects, the error guard, and the thread pool the ops run on.
#pragma once
#include <emscripten/val.h>

#include <new>
#include <string>

#include "attnlab/attnlab.hpp"

namespace attnlab::bindings {

using emscripten::val;

// The pool set by setThreads(); null means the calling thread only.
ThreadPool* thread_pool();

template <class T>
T* ptr(const val& v) {
  return v.isUndefined() || v.isNull() ? nullptr
                                       : reinterpret_cast<T*>(static_cast<uintptr_t>(v.as<double>()));
}

// Integers arrive as JS numbers (embind has no int64 without BigInt); exact below 2^53.
inline int64_t num(const val& v) { return static_cast<int64_t>(v.as<double>()); }

inline Shape shape(const val& v) {
  Shape s;
  for (double d : emscripten::vecFromJSArray<double>(v)) s.push_back(static_cast<int64_t>(d));
  return s;
}

// T5's bucket scheme: { numBuckets, maxDistance, bidirectional }.
inline T5Params read_t5(const val& t) {
  return {num(t["numBuckets"]), num(t["maxDistance"]), t["bidirectional"].as<bool>()};
}

// masks: { causal, bools: [{ptr, shape, trueBlocks}], additive: [{ptr, shape}],
//          validLens: {name, ptr, length} | null,
//          alibi: {slopes (null: the paper's), heads, table [heads, Sq + Sk - 1]} | undefined,
//          t5: {weights [heads, numBuckets], heads, numBuckets, maxDistance, bidirectional,
//               table [heads, Sq + Sk - 1]} | undefined }
// over scores of shape `target` = [lead..., Sq, Sk].
inline MaskSet read_masks(const val& m, const Shape& target) {
  MaskSet set;
  if (m.isUndefined() || m.isNull()) return set;
  set.causal = m["causal"].as<bool>();
  const val bools = m["bools"];
  for (unsigned i = 0, n = bools["length"].as<unsigned>(); i < n; ++i) {
    const val b = bools[i];
    set.bools.push_back({ptr<const uint8_t>(b["ptr"]),
                         broadcast_to(shape(b["shape"]), target, b["name"].as<std::string>()),
                         b["trueBlocks"].as<bool>()});
  }
  const val adds = m["additive"];
  for (unsigned i = 0, n = adds["length"].as<unsigned>(); i < n; ++i) {
    const val a = adds[i];
    set.additive.push_back({ptr<const float>(a["ptr"]),
                            broadcast_to(shape(a["shape"]), target, a["name"].as<std::string>())});
  }
  const Shape lead(target.begin(), target.end() - 2);
  const int64_t Sq = target[target.size() - 2], Sk = target.back();
  const val vl = m["validLens"];
  if (!vl.isUndefined() && !vl.isNull()) {
    set.valid_lens = make_valid_lens(ptr<const int32_t>(vl["ptr"]), num(vl["length"]), lead, Sq,
                                     Sk, vl["name"].as<std::string>());
  }
  const val al = m["alibi"];
  if (!al.isUndefined() && !al.isNull() && Sq > 0 && Sk > 0) {
    const int64_t heads = num(al["heads"]);
    const float* slopes = ptr<const float>(al["slopes"]);
    const std::vector<float> standard = slopes ? std::vector<float>() : alibi_slopes(heads);
    set.additive.push_back(alibi_bias(slopes ? slopes : standard.data(), heads, numel(lead), Sq,
                                      Sk, ptr<float>(al["table"])));
  }
  const val t5 = m["t5"];
  if (!t5.isUndefined() && !t5.isNull() && Sq > 0 && Sk > 0) {
    set.additive.push_back(t5_bias(ptr<const float>(t5["weights"]), num(t5["heads"]),
                                   read_t5(t5), numel(lead), Sq, Sk, ptr<float>(t5["table"])));
  }
  return set;
}

// Runs f; returns "" on success or the message the TypeScript layer throws.
template <class F>
std::string guarded(F&& f) {
  try {
    f();
    return "";
  } catch (const Error& e) {
    return e.what();
  } catch (const std::bad_alloc&) {
    return "out of memory: the WebAssembly heap could not grow enough for this call";
  } catch (const std::exception& e) {
    return std::string("internal error: ") + e.what();
  }
}

// multiHeadAttention's { E, H, inProjWeight, inProjBias, outProjWeight, outProjBias } (heap
// pointers; biases may be null).
inline MultiHeadParams read_mha_params(const val& a) {
  MultiHeadParams p;
  p.embed_dim = num(a["E"]);
  p.num_heads = num(a["H"]);
  p.in_proj_weight = ptr<const float>(a["inProjWeight"]);
  p.in_proj_bias = ptr<const float>(a["inProjBias"]);
  p.out_proj_weight = ptr<const float>(a["outProjWeight"]);
  p.out_proj_bias = ptr<const float>(a["outProjBias"]);
  return p;
}

inline AttentionDims read_dims(const val& a) {
  AttentionDims d;
  d.lead = shape(a["lead"]);
  d.Sq = num(a["Sq"]);
  d.Sk = num(a["Sk"]);
  d.Dq = num(a["Dq"]);
  d.Dk = num(a["Dk"]);
  d.Dv = num(a["Dv"]);
  return d;
}

inline Shape scores_shape(const AttentionDims& d) {
  Shape t = d.lead;
  t.push_back(d.Sq);
  t.push_back(d.Sk);
  return t;
}

}  // namespace attnlab::bindings
