// embind code (with variants.cpp): thin wrappers from JS argument objects (heap pointers and
// shapes, already validated by web/lib) to the core ops. Every wrapper returns "" on success or the error message,
// which the TypeScript layer throws as an Error; no C++ exception crosses into JavaScript.
#include <emscripten/bind.h>
#include <emscripten/val.h>
#include <malloc.h>

#include <memory>
#include <string>
#include <system_error>

#include "attnlab/attnlab.hpp"
#include "kernels.hpp"
#include "marshal.hpp"

using emscripten::val;
using namespace attnlab;
using namespace attnlab::bindings;

namespace {

std::unique_ptr<ThreadPool> pool;

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
    const MultiHeadParams p = read_mha_params(a);
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
// Called as a JS op starts, before it checks and copies its inputs (see ThreadPool::wake).
void wake_threads() {
  if (pool) pool->wake();
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

ThreadPool* attnlab::bindings::thread_pool() { return pool.get(); }

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
  emscripten::function("wakeThreads", &wake_threads);
  emscripten::function("threadsStarted", &threads_started);
  emscripten::function("heapUsed", &heap_used);
  emscripten::function("isa", &isa);
  emscripten::function("findNonfinite", &find_nonfinite);
}
