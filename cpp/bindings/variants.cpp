// embind wrappers of the efficient and positional variants: sparse patterns, linear attention,
// LSH attention, synthesizers, RoPE and Shaw's relative embeddings (ALiBi and T5's bias travel with
// the masks, see marshal.hpp). Same contract as bindings.cpp: each
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

// shaw: { keys, values (or null), maxDistance }
ShawParams read_shaw(const val& r) {
  return {ptr<const float>(r["keys"]), ptr<const float>(r["values"]), num(r["maxDistance"])};
}

// sparseAttention's arguments (without a pattern) plus shaw.
std::string shaw_attention_js(val a) {
  return guarded([&] {
    const AttentionDims d = read_dims(a);
    const Score score = parse_score(a["score"].as<std::string>());
    float scale = a["scale"].as<float>();
    if (scale == 0.0f) scale = score == Score::ScaledDot ? 1.0f / std::sqrt(static_cast<float>(d.Dq)) : 1.0f;
    shaw_attention(ptr<const float>(a["q"]), ptr<const float>(a["k"]), ptr<const float>(a["v"]),
                   d.batch(), d.Sq, d.Sk, d.Dq, d.Dv, scale, read_shaw(a["shaw"]),
                   read_masks(a["masks"], scores_shape(d)), ptr<float>(a["out"]),
                   ptr<float>(a["weights"]), thread_pool());
  });
}

// multiHeadAttention's arguments plus rope ({ base, offset, interleaved } or null) and shaw (or
// null): the positional forms of multi-head attention.
std::string multi_head_attention_positions_js(val a) {
  return guarded([&] {
    const int64_t B = num(a["B"]), L = num(a["L"]), S = num(a["S"]);
    const MultiHeadParams p = read_mha_params(a);
    const bool has_rope = !a["rope"].isNull(), has_shaw = !a["shaw"].isNull();
    const RopeParams rotary = has_rope ? read_rope(a["rope"]) : RopeParams{};
    const ShawParams shaw = has_shaw ? read_shaw(a["shaw"]) : ShawParams{};
    multi_head_attention(ptr<const float>(a["query"]), ptr<const float>(a["key"]),
                         ptr<const float>(a["value"]), B, L, S, p,
                         read_masks(a["masks"], {B, p.num_heads, L, S}), ptr<float>(a["out"]),
                         ptr<float>(a["weights"]), a["averageWeights"].as<bool>(), thread_pool(),
                         has_rope ? &rotary : nullptr, has_shaw ? &shaw : nullptr);
  });
}

// { heads, numBuckets, maxDistance, bidirectional, weights, Sq, Sk, out [heads, Sq + Sk - 1] }:
// T5's bias diagonals, for a backend that takes them as a mask (WebGPU).
std::string t5_bias_table_js(val a) {
  return guarded([&] {
    const int64_t heads = num(a["heads"]);
    t5_bias(ptr<const float>(a["weights"]), heads, read_t5(a), heads, num(a["Sq"]), num(a["Sk"]),
            ptr<float>(a["out"]));
  });
}

// { qk, v, batch, S, D, Dv, nBuckets, nHashes, chunkSize (0: S / nBuckets), causal, seed, out,
//   buckets (or null), attended (or null) }
std::string lsh_attention_js(val a) {
  return guarded([&] {
    LshParams p;
    p.n_buckets = num(a["nBuckets"]);
    p.n_hashes = num(a["nHashes"]);
    p.chunk = num(a["chunkSize"]);
    p.causal = a["causal"].as<bool>();
    p.seed = seed(a["seed"]);
    lsh_attention(ptr<const float>(a["qk"]), ptr<const float>(a["v"]), num(a["batch"]), num(a["S"]),
                  num(a["D"]), num(a["Dv"]), p, ptr<float>(a["out"]), ptr<int32_t>(a["buckets"]),
                  ptr<int32_t>(a["attended"]), thread_pool());
  });
}

// { W1, b1, W2, b2, hidden, out } or null
SynthMlp read_mlp(const val& m) {
  if (m.isNull() || m.isUndefined()) return {};
  return {ptr<const float>(m["W1"]), ptr<const float>(m["b1"]), ptr<const float>(m["W2"]),
          ptr<const float>(m["b2"]), num(m["hidden"]), num(m["out"])};
}

// { kind: 'dense' | 'random' | 'factorized-dense' | 'factorized-random', x, v, batch, S, D, Dv,
//   mlp, mlpB, R, R1, R2 (null: drawn from seed), rank, seed, q, k, Dqk, dotWeight, causal, out,
//   weights }
std::string synthesizer_js(val a) {
  return guarded([&] {
    const std::string kind = a["kind"].as<std::string>();
    const int64_t S = num(a["S"]), rank = num(a["rank"]);
    SynthesizerParams p;
    p.kind = kind == "random"              ? SynthKind::Random
             : kind == "factorized-dense"  ? SynthKind::FactorizedDense
             : kind == "factorized-random" ? SynthKind::FactorizedRandom
                                           : SynthKind::Dense;
    p.mlp = read_mlp(a["mlp"]);
    p.mlp_b = read_mlp(a["mlpB"]);
    p.R = ptr<const float>(a["R"]);
    p.R1 = ptr<const float>(a["R1"]);
    p.R2 = ptr<const float>(a["R2"]);
    p.rank = rank;
    std::vector<float> drawn;  // the fixed random forms, when no learned matrix is given
    if (p.kind == SynthKind::Random && !p.R) {
      drawn.resize(static_cast<size_t>(S * S));
      synthesizer_random(S, S, seed(a["seed"]), drawn.data());
      p.R = drawn.data();
    } else if (p.kind == SynthKind::FactorizedRandom && !p.R1) {
      drawn.resize(static_cast<size_t>(2 * S * rank));
      synthesizer_random(2 * S, rank, seed(a["seed"]), drawn.data());
      p.R1 = drawn.data();
      p.R2 = drawn.data() + S * rank;
    }
    p.q = ptr<const float>(a["q"]);
    p.k = ptr<const float>(a["k"]);
    p.Dqk = num(a["Dqk"]);
    p.dot_weight = a["dotWeight"].as<float>();
    p.causal = a["causal"].as<bool>();
    synthesizer(ptr<const float>(a["x"]), ptr<const float>(a["v"]), num(a["batch"]), S,
                num(a["D"]), num(a["Dv"]), p, ptr<float>(a["out"]), ptr<float>(a["weights"]),
                thread_pool());
  });
}

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_variants) {
  emscripten::function("shawAttention", &shaw_attention_js);
  emscripten::function("multiHeadAttentionPositions", &multi_head_attention_positions_js);
  emscripten::function("t5BiasTable", &t5_bias_table_js);
  emscripten::function("lshAttention", &lsh_attention_js);
  emscripten::function("synthesizer", &synthesizer_js);
  emscripten::function("sparseAttention", &sparse_attention_js);
  emscripten::function("attentionPattern", &attention_pattern_js);
  emscripten::function("linearAttention", &linear_attention_js);
  emscripten::function("rope", &rope_js);
}
