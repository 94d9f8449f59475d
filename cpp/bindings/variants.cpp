// embind of the variants: sparse patterns, linear and LSH attention, synthesizers, RoPE, Shaw's
// relative embeddings, multi-head attention with its positional options (ALiBi and T5's bias
// travel with the masks). Same contract as bindings.cpp.
#include <optional>

#include "marshal.hpp"

using namespace attnlab;
using namespace attnlab::bindings;
using emscripten::function;

namespace {

uint64_t seed(const val& a) { return static_cast<uint64_t>(real(a, "seed")); }

// PatternArg: web/lib/patterns.ts zeroes the fields the type does not use.
SparsePattern read_pattern(const val& p, int64_t Sq, int64_t Sk) {
  return make_pattern({parse_pattern_type(str(p, "type")), num(p, "window"), shape(p, "global"), num(p, "blockSize"),
                       num(p, "windowBlocks"), num(p, "randomBlocks"), seed(p)}, Sq, Sk);
}

RopeParams read_rope(const val& r) { return {real(r, "base"), num(r, "offset"), flag(r, "interleaved")}; }
ShawParams read_shaw(const val& r) { return {ptr(r, "keys"), ptr(r, "values"), num(r, "maxDistance")}; }
SynthMlp read_mlp(const val& m) {
  if (!given(m)) return {};
  return {ptr(m, "W1"), ptr(m, "b1"), ptr(m, "W2"), ptr(m, "b2"), num(m, "hidden"), num(m, "out")};
}
float scale_of(const val& a, const AttentionDims& d) {
  return resolve_scale(parse_score(str(a, "score")), static_cast<float>(real(a, "scale")), d.Dq);
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_variants) {
  def("sparseAttention", [](val a) {
    const AttentionDims d = read_dims(a);
    sparse_attention(ptr(a, "q"), ptr(a, "k"), ptr(a, "v"), d.batch(), d.Dq, d.Dv, scale_of(a, d),
                     read_pattern(a["pattern"], d.Sq, d.Sk), read_masks(a["masks"], d.scores()),
                     ptr<float>(a, "out"), ptr<float>(a, "weights"), thread_pool());
  });
  def("attentionPattern", [](val a) {
    pattern_mask(read_pattern(a["pattern"], num(a, "Sq"), num(a, "Sk")), flag(a, "causal"), ptr<uint8_t>(a, "out"));
  });
  def("shawAttention", [](val a) {
    const AttentionDims d = read_dims(a);
    shaw_attention(ptr(a, "q"), ptr(a, "k"), ptr(a, "v"), d.batch(), d.Sq, d.Sk, d.Dq, d.Dv, scale_of(a, d),
                   read_shaw(a["shaw"]), read_masks(a["masks"], d.scores()), ptr<float>(a, "out"),
                   ptr<float>(a, "weights"), thread_pool());
  });
  def("multiHeadAttention", [](val a) {
    const int64_t B = num(a, "B"), L = num(a, "L"), S = num(a, "S");
    const MultiHeadParams p{num(a, "E"), num(a, "H"), ptr(a, "inProjWeight"), ptr(a, "inProjBias"), ptr(a, "outProjWeight"),
                            ptr(a, "outProjBias")};
    const std::optional<RopeParams> rotary = given(a["rope"]) ? std::optional(read_rope(a["rope"])) : std::nullopt;
    const std::optional<ShawParams> shaw = given(a["shaw"]) ? std::optional(read_shaw(a["shaw"])) : std::nullopt;
    multi_head_attention(ptr(a, "query"), ptr(a, "key"), ptr(a, "value"), B, L, S, p,
                         read_masks(a["masks"], {B, p.num_heads, L, S}), ptr<float>(a, "out"), ptr<float>(a, "weights"),
                         flag(a, "averageWeights"), thread_pool(), rotary ? &*rotary : nullptr, shaw ? &*shaw : nullptr);
  });
  def("linearAttention", [](val a) {
    LinearSpec s{parse_linear_method(str(a, "method")), flag(a, "causal"), num(a, "features"), num(a, "rank"),
                 ptr(a, "E"), ptr(a, "F"), seed(a)};
    linear_attention(ptr(a, "q"), ptr(a, "k"), ptr(a, "v"), num(a, "batch"), num(a, "Sq"), num(a, "Sk"), num(a, "D"),
                     num(a, "Dv"), s, ptr<float>(a, "out"), thread_pool());
  });
  def("rope", [](val a) {
    // `name`: the argument x came from (x, or attention's q or k), for the overflow Error.
    rope(ptr(a, "x"), ptr<float>(a, "out"), num(a, "outer"), num(a, "S"), num(a, "inner"), num(a, "D"), read_rope(a),
         str(a, "name").c_str());
  });
  // T5's bias diagonals [heads, Sq + Sk - 1], for a backend that takes them as a mask (WebGPU).
  def("t5BiasTable", [](val a) {
    const int64_t heads = num(a, "heads");
    t5_bias(ptr(a, "weights"), heads, read_t5(a), heads, num(a, "Sq"), num(a, "Sk"), ptr<float>(a, "out"),
            num(a, "queryOffset"));
  });
  def("lshAttention", [](val a) {
    const LshParams p{num(a, "nBuckets"), num(a, "nHashes"), num(a, "chunkSize"), flag(a, "causal"), seed(a)};
    lsh_attention(ptr(a, "qk"), ptr(a, "v"), num(a, "batch"), num(a, "S"), num(a, "D"), num(a, "Dv"), p,
                  ptr<float>(a, "out"), ptr<int32_t>(a, "buckets"), ptr<int32_t>(a, "attended"), thread_pool());
  });
  def("synthesizer", [](val a) {
    const SynthesizerParams p{parse_synth_kind(str(a, "kind")), read_mlp(a["mlp"]), read_mlp(a["mlpB"]),
                              ptr(a, "R"), ptr(a, "R1"), ptr(a, "R2"), num(a, "rank"), ptr(a, "q"), ptr(a, "k"),
                              num(a, "Dqk"), static_cast<float>(real(a, "dotWeight")), flag(a, "causal")};
    synthesizer_seeded(ptr(a, "x"), ptr(a, "v"), num(a, "batch"), num(a, "S"), num(a, "D"), num(a, "Dv"), p, seed(a),
                       ptr<float>(a, "out"), ptr<float>(a, "weights"), thread_pool());
  });
}
