// The only embind code: thin wrappers from JS argument objects (heap pointers and shapes, already
// validated by web/lib) to the core ops. Every wrapper returns "" on success or the error message,
// which the TypeScript layer throws as an Error; no C++ exception crosses into JavaScript.
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <memory>
#include <new>
#include <string>
#include <system_error>

#include "attnlab/attnlab.hpp"
#include "kernels.hpp"

using emscripten::val;
using namespace attnlab;

namespace {

std::unique_ptr<ThreadPool> pool;

template <class T>
T* ptr(const val& v) {
  return v.isUndefined() || v.isNull() ? nullptr
                                       : reinterpret_cast<T*>(static_cast<uintptr_t>(v.as<double>()));
}

// Integers arrive as JS numbers (embind has no int64 without BigInt); exact below 2^53.
int64_t num(const val& v) { return static_cast<int64_t>(v.as<double>()); }

Shape shape(const val& v) {
  Shape s;
  for (double d : emscripten::vecFromJSArray<double>(v)) s.push_back(static_cast<int64_t>(d));
  return s;
}

// masks: { causal, bools: [{ptr, shape, trueBlocks}], additive: [{ptr, shape}],
//          validLens: {name, ptr, length} | null } over scores of shape `target` = [lead..., Sq, Sk].
MaskSet read_masks(const val& m, const Shape& target) {
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
  const val vl = m["validLens"];
  if (!vl.isUndefined() && !vl.isNull()) {
    const Shape lead(target.begin(), target.end() - 2);
    set.valid_lens = make_valid_lens(ptr<const int32_t>(vl["ptr"]), num(vl["length"]),
                                     lead, target[target.size() - 2], target.back(),
                                     vl["name"].as<std::string>());
  }
  return set;
}

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

AttentionDims read_dims(const val& a) {
  AttentionDims d;
  d.lead = shape(a["lead"]);
  d.Sq = num(a["Sq"]);
  d.Sk = num(a["Sk"]);
  d.Dq = num(a["Dq"]);
  d.Dk = num(a["Dk"]);
  d.Dv = num(a["Dv"]);
  return d;
}

ScoreParams read_params(const val& a) {
  ScoreParams p;
  p.W = ptr<const float>(a["W"]);
  p.Wq = ptr<const float>(a["Wq"]);
  p.Wk = ptr<const float>(a["Wk"]);
  p.wv = ptr<const float>(a["wv"]);
  p.hidden = num(a["hidden"]);
  p.scale = a["scale"].as<float>();
  return p;
}

Shape scores_shape(const AttentionDims& d) {
  Shape t = d.lead;
  t.push_back(d.Sq);
  t.push_back(d.Sk);
  return t;
}

std::string attention_js(val a) {
  return guarded([&] {
    const AttentionDims d = read_dims(a);
    attention(ptr<const float>(a["q"]), ptr<const float>(a["k"]), ptr<const float>(a["v"]), d,
              parse_score(a["score"].as<std::string>()), read_params(a),
              read_masks(a["masks"], scores_shape(d)), ptr<float>(a["out"]),
              ptr<float>(a["weights"]), pool.get());
  });
}

std::string scores_js(val a) {
  return guarded([&] {
    const AttentionDims d = read_dims(a);
    attention_scores(ptr<const float>(a["q"]), ptr<const float>(a["k"]), d,
                     parse_score(a["score"].as<std::string>()), read_params(a),
                     ptr<float>(a["out"]), pool.get());
  });
}

std::string masked_softmax_js(val a) {
  return guarded([&] {
    const Shape lead = shape(a["lead"]);
    const int64_t Sq = num(a["Sq"]), Sk = num(a["Sk"]);
    Shape target = lead;
    target.push_back(Sq);
    target.push_back(Sk);
    masked_softmax(ptr<const float>(a["x"]), ptr<float>(a["out"]), numel(lead), Sq, Sk,
                   read_masks(a["masks"], target), pool.get());
  });
}

std::string multi_head_attention_js(val a) {
  return guarded([&] {
    const int64_t B = num(a["B"]), L = num(a["L"]), S = num(a["S"]);
    MultiHeadParams p;
    p.embed_dim = num(a["E"]);
    p.num_heads = num(a["H"]);
    p.in_proj_weight = ptr<const float>(a["inProjWeight"]);
    p.in_proj_bias = ptr<const float>(a["inProjBias"]);
    p.out_proj_weight = ptr<const float>(a["outProjWeight"]);
    p.out_proj_bias = ptr<const float>(a["outProjBias"]);
    multi_head_attention(ptr<const float>(a["query"]), ptr<const float>(a["key"]),
                         ptr<const float>(a["value"]), B, L, S, p,
                         read_masks(a["masks"], {B, p.num_heads, L, S}), ptr<float>(a["out"]),
                         ptr<float>(a["weights"]), a["averageWeights"].as<bool>(), pool.get());
  });
}

std::string linear_js(val a) {
  return guarded([&] {
    const int64_t in = num(a["in"]);
    linear(ptr<const float>(a["x"]), in, num(a["rows"]), in, ptr<const float>(a["weight"]),
           ptr<const float>(a["bias"]), num(a["out"]), ptr<float>(a["y"]), num(a["out"]), pool.get());
  });
}

std::string nadaraya_watson_js(val a) {
  return guarded([&] {
    nadaraya_watson(ptr<const float>(a["queries"]), ptr<const float>(a["keys"]),
                    ptr<const float>(a["values"]), num(a["batch"]),
                    num(a["Nq"]), num(a["Nk"]), num(a["D"]),
                    num(a["Dv"]), parse_kernel(a["kernel"].as<std::string>()),
                    a["bandwidth"].as<double>(), ptr<float>(a["out"]), ptr<float>(a["weights"]),
                    pool.get());
  });
}

std::string positional_encoding_js(double length, double dim, double out) {
  return guarded([&] {
    sinusoidal_encoding(static_cast<int64_t>(length), static_cast<int64_t>(dim),
                        reinterpret_cast<float*>(static_cast<uintptr_t>(out)));
  });
}

// Replaces the pool. Workers start asynchronously in a browser; poll threadsStarted().
std::string set_threads(int n) {
  return guarded([&] {
    pool.reset();
    if (n > 1) pool = std::make_unique<ThreadPool>(n);
  });
}
int thread_count() { return pool ? pool->size() : 1; }
int threads_started() { return pool ? pool->started() : 1; }

// Bytes malloc has handed out and not had back: what a leak test watches.
double heap_used() { return static_cast<double>(mallinfo().uordblks); }

std::string isa() { return kernels::active_isa(); }

// Input values are checked here, after the copy into the heap, by the SIMD kernel: a JS loop
// over every element cost more than the copy itself.
double find_nonfinite(double ptr, double n, bool neg_inf_ok) {
  return static_cast<double>(kernels::find_nonfinite(
      reinterpret_cast<const float*>(static_cast<uintptr_t>(ptr)), static_cast<int64_t>(n), neg_inf_ok));
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab) {
  emscripten::function("attention", &attention_js);
  emscripten::function("attentionScores", &scores_js);
  emscripten::function("maskedSoftmax", &masked_softmax_js);
  emscripten::function("multiHeadAttention", &multi_head_attention_js);
  emscripten::function("linear", &linear_js);
  emscripten::function("nadarayaWatson", &nadaraya_watson_js);
  emscripten::function("positionalEncoding", &positional_encoding_js);
  emscripten::function("setThreads", &set_threads);
  emscripten::function("threadCount", &thread_count);
  emscripten::function("threadsStarted", &threads_started);
  emscripten::function("heapUsed", &heap_used);
  emscripten::function("isa", &isa);
  emscripten::function("findNonfinite", &find_nonfinite);
}
