// Scoring functions a(q, k) of attention.
#pragma once
#include <cstdint>
#include <string>

namespace attnlab {

enum class Score {
  Dot,        // q . k
  ScaledDot,  // q . k / sqrt(d)  (Vaswani et al.)
  General,    // q^T W k          (Luong et al.)
  Additive,   // w^T tanh(Wq q + Wk k)  (Bahdanau et al.)
};

Score parse_score(const std::string& name);  // "dot", "scaled_dot", "general", "additive"
const char* score_name(Score s);

// The multiplier of dot-product scores: `scale`, or when it is 0 the score's default,
// 1 / sqrt(d) for scaled_dot and 1 otherwise.
float resolve_scale(Score score, float scale, int64_t d);

// Parameters of the learned scores, row-major, PyTorch Linear layout ([out, in]).
struct ScoreParams {
  const float* W = nullptr;   // general: [Dq, Dk]
  const float* Wq = nullptr;  // additive: [hidden, Dq]
  const float* Wk = nullptr;  // additive: [hidden, Dk]
  const float* wv = nullptr;  // additive: [hidden]
  int64_t hidden = 0;
  float scale = 0.0f;  // dot-product scores are multiplied by this; 0 = the score's default
};

}  // namespace attnlab
