// embind of the core ops (with variants.cpp and common.cpp): each entry reads its typed
// argument object (web/lib/wasm-module.ts) into the core's structs and calls the core; def()
// (marshal.hpp) returns "" or the Error's message.
#include "kernels.hpp"
#include "marshal.hpp"

using namespace attnlab;
using namespace attnlab::bindings;
using emscripten::function;

EMSCRIPTEN_BINDINGS(attnlab) {
  def("attention", [](val a) {
    const AttentionDims d = read_dims(a);
    attention(ptr(a, "q"), ptr(a, "k"), ptr(a, "v"), d, parse_score(str(a, "score")), read_params(a),
              read_masks(a["masks"], d.scores()), ptr<float>(a, "out"), ptr<float>(a, "weights"), thread_pool());
  });
  def("attentionScores", [](val a) {
    attention_scores(ptr(a, "q"), ptr(a, "k"), read_dims(a), parse_score(str(a, "score")), read_params(a),
                     ptr<float>(a, "out"), thread_pool());
  });
  def("maskedSoftmax", [](val a) {
    const AttentionDims d{shape(a, "lead"), num(a, "Sq"), num(a, "Sk")};
    masked_softmax(ptr(a, "x"), ptr<float>(a, "out"), d.batch(), d.Sq, d.Sk, read_masks(a["masks"], d.scores()),
                   thread_pool());
  });
  def("linear", [](val a) {
    linear_checked(ptr(a, "x"), num(a, "rows"), num(a, "in"), ptr(a, "weight"), ptr(a, "bias"), num(a, "out"),
                   ptr<float>(a, "y"), thread_pool());
  });
  def("nadarayaWatson", [](val a) {
    nadaraya_watson(ptr(a, "queries"), ptr(a, "keys"), ptr(a, "values"), num(a, "batch"), num(a, "Nq"), num(a, "Nk"),
                    num(a, "D"), num(a, "Dv"), parse_kernel(str(a, "kernel")), real(a, "bandwidth"),
                    ptr<float>(a, "out"), ptr<float>(a, "weights"), thread_pool());
  });
  def("positionalEncoding", [](double length, double dim, double out) {
    sinusoidal_encoding(static_cast<int64_t>(length), static_cast<int64_t>(dim), addr<float>(out));
  });
  function("isa", +[] { return std::string(kernels::active_isa()); });
  // Input values are checked here, after the copy into the heap, by the SIMD kernel: a JS loop
  // over every element cost more than the copy itself.
  function("findNonfinite", +[](double p, double n, bool neg_inf_ok) {
    return static_cast<double>(kernels::find_nonfinite(addr<const float>(p), static_cast<int64_t>(n), neg_inf_ok));
  });
}
