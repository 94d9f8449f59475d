#include "attnlab/scoring.hpp"

#include <cmath>

#include "attnlab/error.hpp"

namespace attnlab {

Score parse_score(const std::string& name) {
  if (name == "dot") return Score::Dot;
  if (name == "scaled_dot") return Score::ScaledDot;
  if (name == "general") return Score::General;
  if (name == "additive") return Score::Additive;
  throw Error("score: expected one of 'scaled_dot', 'dot', 'general', 'additive', got '" + name +
              "'");
}

const char* score_name(Score s) {
  switch (s) {
    case Score::Dot: return "dot";
    case Score::ScaledDot: return "scaled_dot";
    case Score::General: return "general";
    case Score::Additive: return "additive";
  }
  return "?";
}

float resolve_scale(Score score, float scale, int64_t d) {
  if (scale != 0.0f) return scale;
  return score == Score::ScaledDot ? 1.0f / std::sqrt(static_cast<float>(d)) : 1.0f;
}

}  // namespace attnlab
