#include "attnlab/synthesizer.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/random.hpp"
#include "attnlab/softmax.hpp"
#include "kernels.hpp"

namespace attnlab {
namespace {

constexpr int64_t kRowsPerTask = 16;

void check(const SynthesizerParams& p, int64_t S, int64_t D) {
  const auto need = [](bool ok, const char* what) {
    require(ok, [&] { return std::string(what) + ": expected learned parameters, got none"; });
  };
  const auto check_mlp = [&](const SynthMlp& m, const char* name) {
    need(m.W1 && m.W2, name);
    require(m.hidden >= 1 && m.out >= 1 && D >= 1, [&] {
      return std::string(name) + ": expected hidden >= 1 and out >= 1, got hidden=" +
             std::to_string(m.hidden) + " out=" + std::to_string(m.out);
    });
  };
  switch (p.kind) {
    case SynthKind::Dense:
      check_mlp(p.mlp, "dense");
      require(p.mlp.out == S, [&] {
        return "dense.W2: expected " + std::to_string(S) + " rows (one score per key), got " +
               std::to_string(p.mlp.out);
      });
      break;
    case SynthKind::FactorizedDense:
      check_mlp(p.mlp, "factorA");
      check_mlp(p.mlp_b, "factorB");
      require(p.mlp.out * p.mlp_b.out == S, [&] {
        return "factorA, factorB: expected output sizes a, b with a * b = " + std::to_string(S) +
               ", got " + std::to_string(p.mlp.out) + " * " + std::to_string(p.mlp_b.out);
      });
      break;
    case SynthKind::Random:
      need(p.R, "R");
      break;
    case SynthKind::FactorizedRandom:
      need(p.R1 && p.R2, "R1, R2");
      require(p.rank >= 1, [&] { return "rank: expected an integer >= 1, got " + std::to_string(p.rank); });
      break;
  }
  require(p.dot_weight == 0.0f || (p.q && p.k && p.Dqk >= 1 && p.dot_weight <= 1.0f && p.dot_weight > 0.0f), [&] {
    return "dot: expected q, k and a weight in (0, 1], got weight " + std::to_string(p.dot_weight);
  });
}

// The arguments a kind's scores are made from, as JavaScript names them (for errors).
const char* score_source(const SynthesizerParams& p) {
  const bool dot = p.dot_weight > 0.0f;
  switch (p.kind) {
    case SynthKind::Dense: return dot ? "x, options.dense, options.dot" : "x, options.dense";
    case SynthKind::FactorizedDense: return dot ? "x, options.factorA, options.factorB, options.dot" : "x, options.factorA, options.factorB";
    case SynthKind::Random: return "options.R, options.dot";  // R alone is finite
    case SynthKind::FactorizedRandom: return dot ? "options.R1, options.R2, options.dot" : "options.R1, options.R2";
  }
  return "";
}

// y [m.out] = W2 relu(W1 x + b1) + b2; h [m.hidden] scratch.
void mlp(const SynthMlp& m, const float* x, int64_t D, float* h, float* y) {
  for (int64_t t = 0; t < m.hidden; ++t) {
    h[t] = std::max(0.0f, kernels::dot(m.W1 + t * D, x, D) + (m.b1 ? m.b1[t] : 0.0f));
  }
  for (int64_t o = 0; o < m.out; ++o) y[o] = kernels::dot(m.W2 + o * m.hidden, h, m.hidden) + (m.b2 ? m.b2[o] : 0.0f);
}

// Row i of slice b into s [S]; work: hidden + a + b floats. Out of line for the reason
// sparse_row gives (Emscripten's exception trampolines).
[[gnu::noinline]] void synth_row(const float* x, const float* v, int64_t b, int64_t i, int64_t S,
                                 int64_t D, int64_t Dv, const SynthesizerParams& p, float* s,
                                 float* work, float* out, float* wrow) {
  const int64_t hi = p.causal ? i + 1 : S;
  const float* xi = x ? x + (b * S + i) * D : nullptr;
  switch (p.kind) {
    case SynthKind::Dense:
      mlp(p.mlp, xi, D, work, s);
      break;
    case SynthKind::FactorizedDense: {
      const int64_t na = p.mlp.out;
      float *A = work + std::max(p.mlp.hidden, p.mlp_b.hidden), *B = A + na;
      mlp(p.mlp, xi, D, work, A);
      mlp(p.mlp_b, xi, D, work, B);
      for (int64_t j = 0; j < hi; ++j) s[j] = A[j % na] * B[j / na];
      break;
    }
    case SynthKind::Random:
      std::memcpy(s, p.R + i * S, sizeof(float) * static_cast<size_t>(hi));
      break;
    case SynthKind::FactorizedRandom:
      for (int64_t j = 0; j < hi; ++j) s[j] = kernels::dot(p.R1 + i * p.rank, p.R2 + j * p.rank, p.rank);
      break;
  }
  if (p.dot_weight > 0.0f) {
    const float ws = 1.0f - p.dot_weight, wd = p.dot_weight / std::sqrt(static_cast<float>(p.Dqk));
    const float* qi = p.q + (b * S + i) * p.Dqk;
    for (int64_t j = 0; j < hi; ++j) s[j] = ws * s[j] + wd * kernels::dot(qi, p.k + (b * S + j) * p.Dqk, p.Dqk);
  }
  for (int64_t j = 0; j < hi; ++j) {
    // Scores are the learned parameters' output: past float32 there is no right answer to give.
    require(std::isfinite(s[j]), [&] {
      return std::string(score_source(p)) + ": the scores overflow float32 (beyond ±3.4e38) at query " +
             std::to_string(i) + ", key " + std::to_string(j) + " of slice " + std::to_string(b) +
             "; scale the parameters or inputs down";
    });
  }
  softmax_row(s, hi);
  std::memset(out, 0, sizeof(float) * static_cast<size_t>(Dv));
  for (int64_t j = 0; j < hi; ++j) {
    if (s[j] != 0.0f) kernels::axpy(s[j], v + (b * S + j) * Dv, out, Dv);
  }
  if (wrow) {
    std::memcpy(wrow, s, sizeof(float) * static_cast<size_t>(hi));
    std::fill(wrow + hi, wrow + S, 0.0f);
  }
}

}  // namespace

void synthesizer(const float* x, const float* v, int64_t batch, int64_t S, int64_t D, int64_t Dv,
                 const SynthesizerParams& p, float* out, float* weights, ThreadPool* pool) {
  require(batch >= 0 && S >= 0 && Dv >= 1, [&] {
    return "x, v: expected batch >= 0, S >= 0 and Dv >= 1, got batch=" + std::to_string(batch) +
           " S=" + std::to_string(S) + " Dv=" + std::to_string(Dv);
  });
  check(p, S, D);
  const int64_t blocks = (S + kRowsPerTask - 1) / kRowsPerTask;
  const int64_t work_len = std::max(p.mlp.hidden, p.mlp_b.hidden) + p.mlp.out + p.mlp_b.out;
  parallel_for(pool, batch * blocks, [&](int64_t t) {
    const int64_t b = t / blocks, i0 = (t % blocks) * kRowsPerTask, i1 = std::min(S, i0 + kRowsPerTask);
    std::vector<float> s(static_cast<size_t>(std::max<int64_t>(S, p.mlp.out))), work(static_cast<size_t>(work_len));
    for (int64_t i = i0; i < i1; ++i) {
      synth_row(x, v, b, i, S, D, Dv, p, s.data(), work.data(), out + (b * S + i) * Dv,
                weights ? weights + (b * S + i) * S : nullptr);
    }
  });
}

void synthesizer_seeded(const float* x, const float* v, int64_t batch, int64_t S, int64_t D, int64_t Dv,
                        const SynthesizerParams& params, uint64_t seed, float* out, float* weights, ThreadPool* pool) {
  SynthesizerParams p = params;
  std::vector<float> drawn;
  if (p.kind == SynthKind::Random && !p.R && S >= 0) {
    drawn.resize(static_cast<size_t>(S * S));
    synthesizer_random(S, S, seed, drawn.data());
    p.R = drawn.data();
  } else if (p.kind == SynthKind::FactorizedRandom && !p.R1 && S >= 0 && p.rank >= 1) {
    drawn.resize(static_cast<size_t>(2 * S * p.rank));
    synthesizer_random(2 * S, p.rank, seed, drawn.data());
    p.R1 = drawn.data();
    p.R2 = drawn.data() + S * p.rank;
  }
  synthesizer(x, v, batch, S, D, Dv, p, out, weights, pool);
}

SynthKind parse_synth_kind(const std::string& name) {
  if (name == "dense") return SynthKind::Dense;
  if (name == "random") return SynthKind::Random;
  if (name == "factorized-dense") return SynthKind::FactorizedDense;
  if (name == "factorized-random") return SynthKind::FactorizedRandom;
  throw Error("kind: expected 'dense', 'random', 'factorized-dense' or 'factorized-random', got '" + name + "'");
}

void synthesizer_random(int64_t rows, int64_t cols, uint64_t seed, float* R) {
  Rng rng(seed);
  for (int64_t t = 0; t < rows * cols; ++t) R[t] = static_cast<float>(rng.normal());
}

}  // namespace attnlab
