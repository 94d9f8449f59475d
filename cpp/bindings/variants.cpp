// embind wrappers of the efficient and positional variants: sparse patterns, linear attention and
// RoPE (ALiBi travels with the masks, see marshal.hpp). Same contract as bindings.cpp: each
// returns "" or the error message, never throws into JavaScript.
#include <emscripten/bind.h>

#include <cmath>
#include <string>
#include <vector>

#include "attnlab/multihead.hpp"
#include "attnlab/attnlab.hpp"
#include "marshal.hpp"

using emscripten::val;
using namespace attnlab;
using namespace attnlab::bindings;

namespace {

uint64_t seed(const val& v) { return static_cast<uint64_t>(v.as<double>()); }

// pattern: { type: 'local' | 'longformer' | 'bigbird', window, global: number[], blockSize,
//            windowBlocks, randomBlocks, seed }, fields of other types ignored.
SparsePattern read_pattern(const val& p, int64_t Sq, int64_t Sk) {
  PatternSpec s;
  const std::string type = p["type"].as<std::string>();
  s.type = type == "bigbird" ? PatternType::BigBird
           : type == "longformer" ? PatternType::Longformer
                                  : PatternType::Local;
  if (s.type == PatternType::BigBird) {
    s.block = num(p["blockSize"]);
    s.window_blocks = num(p["windowBlocks"]);
    s.random_blocks = num(p["randomBlocks"]);
    s.seed = seed(p["seed"]);
  } else {
    s.window = num(p["window"]);
  }
  if (s.type != PatternType::Local) s.global = shape(p["global"]);
  return make_pattern(s, Sq, Sk);
}

RopeParams read_rope(const val& r) {
  RopeParams p;
  p.base = r["base"].as<double>();
  p.offset = num(r["offset"]);
  p.interleaved = r["interleaved"].as<bool>();
  return p;
}

std::string sparse_attention_js(val a) {
  return guarded([&] {
    const AttentionDims d = read_dims(a);
    const Score score = parse_score(a["score"].as<std::string>());
    float scale = a["scale"].as<float>();
    if (scale == 0.0f) scale = score == Score::ScaledDot ? 1.0f / std::sqrt(static_cast<float>(d.Dq)) : 1.0f;
    sparse_attention(ptr<const float>(a["q"]), ptr<const float>(a["k"]), ptr<const float>(a["v"]),
                     d.batch(), d.Dq, d.Dv, scale, read_pattern(a["pattern"], d.Sq, d.Sk),
                     read_masks(a["masks"], scores_shape(d)), ptr<float>(a["out"]),
                     ptr<float>(a["weights"]), thread_pool());
  });
}

std::string attention_pattern_js(val a) {
  return guarded([&] {
    pattern_mask(read_pattern(a["pattern"], num(a["Sq"]), num(a["Sk"])), a["causal"].as<bool>(),
                 ptr<uint8_t>(a["out"]));
  });
}

// { method: 'elu' | 'favor+' | 'linformer', q, k, v, batch, Sq, Sk, D, Dv, causal, features,
//   rank, seed, E, F (null: drawn from seed), out }
std::string linear_attention_js(val a) {
  return guarded([&] {
    const std::string method = a["method"].as<std::string>();
    const float *q = ptr<const float>(a["q"]), *k = ptr<const float>(a["k"]),
                *v = ptr<const float>(a["v"]);
    const int64_t batch = num(a["batch"]), Sq = num(a["Sq"]), Sk = num(a["Sk"]), D = num(a["D"]),
                  Dv = num(a["Dv"]);
    const bool causal = a["causal"].as<bool>();
    float* out = ptr<float>(a["out"]);
    if (method == "elu") {
      linear_attention_elu(q, k, v, batch, Sq, Sk, D, Dv, causal, out, thread_pool());
    } else if (method == "favor+") {
      const int64_t m = num(a["features"]);
      std::vector<float> W(static_cast<size_t>(m * D));
      favor_features(m, D, seed(a["seed"]), W.data());
      favor_attention(q, k, v, batch, Sq, Sk, D, Dv, W.data(), m, causal, out, thread_pool());
    } else {
      const int64_t rank = num(a["rank"]);
      const float *E = ptr<const float>(a["E"]), *F = ptr<const float>(a["F"]);
      std::vector<float> drawn;
      if (!E) {
        drawn.resize(static_cast<size_t>(2 * rank * Sk));
        linformer_projections(rank, Sk, seed(a["seed"]), drawn.data(), drawn.data() + rank * Sk);
        E = drawn.data();
        F = drawn.data() + rank * Sk;
      }
      linformer_attention(q, k, v, batch, Sq, Sk, D, Dv, E, F, rank, out, thread_pool());
    }
  });
}

// { x, out, outer, S, inner, D, base, offset, interleaved }
std::string rope_js(val a) {
  return guarded([&] {
    rope(ptr<const float>(a["x"]), ptr<float>(a["out"]), num(a["outer"]), num(a["S"]),
         num(a["inner"]), num(a["D"]), read_rope(a));
  });
}

// multiHeadAttention's arguments plus { base, offset, interleaved }.
std::string multi_head_attention_rope_js(val a) {
  return guarded([&] {
    const int64_t B = num(a["B"]), L = num(a["L"]), S = num(a["S"]);
    MultiHeadParams p;
    p.embed_dim = num(a["E"]);
    p.num_heads = num(a["H"]);
    p.in_proj_weight = ptr<const float>(a["inProjWeight"]);
    p.in_proj_bias = ptr<const float>(a["inProjBias"]);
    p.out_proj_weight = ptr<const float>(a["outProjWeight"]);
    p.out_proj_bias = ptr<const float>(a["outProjBias"]);
    const RopeParams rotary = read_rope(a);
    multi_head_attention(ptr<const float>(a["query"]), ptr<const float>(a["key"]),
                         ptr<const float>(a["value"]), B, L, S, p,
                         read_masks(a["masks"], {B, p.num_heads, L, S}), ptr<float>(a["out"]),
                         ptr<float>(a["weights"]), a["averageWeights"].as<bool>(), thread_pool(),
                         &rotary);
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_variants) {
  emscripten::function("sparseAttention", &sparse_attention_js);
  emscripten::function("attentionPattern", &attention_pattern_js);
  emscripten::function("linearAttention", &linear_attention_js);
  emscripten::function("rope", &rope_js);
  emscripten::function("multiHeadAttentionRope", &multi_head_attention_rope_js);
}
