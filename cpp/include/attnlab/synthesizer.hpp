// Synthesizer attention (Tay et al. 2021): the attention weights are not computed from query-key
// dot products but synthesised, per token or outright:
//   dense:             row i of the scores = W2 relu(W1 x_i + b1) + b2 (a 2-layer MLP, l = S out)
//   random:            scores = R [S, S], learned or fixed
//   factorized dense:  A = MLP_A(x_i) [a], B = MLP_B(x_i) [b], a b = S, score_ij = A[j mod a] *
//                      B[j div a] (A tiled b times, B's entries repeated a times)
//   factorized random: scores = R1 R2^T, R1 and R2 [S, rank]
// and, as the paper's mixtures, (1 - w) synthesised + w q.k / sqrt(D) for dot-product inputs.
// Then the (causal) softmax and the weighted sum of the values: out = softmax(scores) v.
// Rows are made one at a time: O(S) memory per thread (plus R or the MLPs' weights).
#pragma once
#include <cstdint>
#include <string>

#include "attnlab/thread_pool.hpp"

namespace attnlab {

// A 2-layer MLP on one token: W1 [hidden, D], b1 [hidden] or null, W2 [out, hidden], b2 [out] or
// null (PyTorch Linear layout).
struct SynthMlp {
  const float* W1 = nullptr;
  const float* b1 = nullptr;
  const float* W2 = nullptr;
  const float* b2 = nullptr;
  int64_t hidden = 0, out = 0;
};

enum class SynthKind { Dense, Random, FactorizedDense, FactorizedRandom };
// "dense" | "random" | "factorized-dense" | "factorized-random"
SynthKind parse_synth_kind(const std::string& name);

struct SynthesizerParams {
  SynthKind kind = SynthKind::Dense;
  SynthMlp mlp;    // Dense (out = S); FactorizedDense: A (out = a)
  SynthMlp mlp_b;  // FactorizedDense: B (out = b), a * b = S
  const float* R = nullptr;   // Random [S, S]
  const float* R1 = nullptr;  // FactorizedRandom [S, rank]
  const float* R2 = nullptr;  // FactorizedRandom [S, rank]
  int64_t rank = 0;
  const float* q = nullptr;   // mixture: q, k [batch, S, Dqk], or null
  const float* k = nullptr;
  int64_t Dqk = 0;
  float dot_weight = 0.0f;    // w in [0, 1]
  bool causal = false;
};

// x [batch, S, D] (the tokens the dense forms read; unused by the random ones), v [batch, S, Dv]
// -> out [batch, S, Dv]; weights [batch, S, S] when not null.
void synthesizer(const float* x, const float* v, int64_t batch, int64_t S, int64_t D, int64_t Dv,
                 const SynthesizerParams& p, float* out, float* weights, ThreadPool* pool);

// synthesizer() whose fixed random forms, when p.R (p.R1) is null, are drawn here from `seed`:
// R = synthesizer_random(S, S, seed); R1 and R2 the two halves of synthesizer_random(2 S, rank,
// seed). What synthesizer() in JavaScript runs.
void synthesizer_seeded(const float* x, const float* v, int64_t batch, int64_t S, int64_t D, int64_t Dv,
                        const SynthesizerParams& p, uint64_t seed, float* out, float* weights, ThreadPool* pool);

// A fixed random matrix [rows, cols] with N(0, 1) entries from `seed`: the paper's "fixed"
// random synthesizer, or an initialisation of a learned one.
void synthesizer_random(int64_t rows, int64_t cols, uint64_t seed, float* R);

}  // namespace attnlab
