#include "attnlab/attention.hpp"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/linear.hpp"
#include "attnlab/softmax.hpp"
#include "kernels.hpp"

namespace attnlab {
namespace {

constexpr int64_t kRowsPerTask = 16;  // additive score: query rows per parallel task
constexpr const char* kQWq = "q, params.Wq: q Wq^T overflows";
constexpr const char* kKWk = "k, params.Wk: k Wk^T overflows";

void check_dims(const AttentionDims& d, Score score, const ScoreParams& p) {
  for (int64_t n : d.lead) {
    require(n >= 0, [&] {
      return "attention: expected non-negative leading dimensions, got " + to_string(d.lead);
    });
  }
  // Scores past float range would leave the online softmax with inf - inf: bound the scale.
  require(std::isfinite(p.scale) && p.scale >= 0.0f && p.scale <= 1e4f, [&] {
    return "params.scale: expected a number in (0, 1e4] (or 0 for the default), got " +
           std::to_string(p.scale);
  });
  require(d.Sq >= 0 && d.Sk >= 0 && d.Dq >= 1 && d.Dk >= 1 && d.Dv >= 1, [&] {
    return "attention: expected non-negative lengths and positive feature sizes, got Sq=" +
           std::to_string(d.Sq) + " Sk=" + std::to_string(d.Sk) + " Dq=" + std::to_string(d.Dq) +
           " Dk=" + std::to_string(d.Dk) + " Dv=" + std::to_string(d.Dv);
  });
  if (score == Score::Dot || score == Score::ScaledDot) {
    require(d.Dq == d.Dk, [&] {
      return std::string("k: expected the last dimension to equal q's (") +
             std::to_string(d.Dq) + ") for score '" + score_name(score) + "', got " +
             std::to_string(d.Dk);
    });
  }
  if (score == Score::General) require(p.W != nullptr, [] { return "params.W: required for score 'general'"; });
  if (score == Score::Additive) {
    require(p.Wq && p.Wk && p.wv && p.hidden >= 1,
            [] { return "params: score 'additive' requires Wq, Wk and wv"; });
  }
}

float dot_scale(Score score, const ScoreParams& p, int64_t d) {
  if (p.scale != 0.0f) return p.scale;
  return score == Score::ScaledDot ? 1.0f / std::sqrt(static_cast<float>(d)) : 1.0f;
}

// Masks, softmax and the weighted sum of values for one row whose raw scores s[0..hi) are set.
void finish_row(const MaskSet& m, int64_t b, int64_t i, float* s, int64_t hi, int64_t Sk,
                const float* v, int64_t v_stride, int64_t Dv, float* out, float* wrow) {
  apply_element_masks(m, b, i, s, hi);
  softmax_row(s, hi);
  std::memset(out, 0, sizeof(float) * static_cast<size_t>(Dv));
  for (int64_t j = 0; j < hi; ++j) {
    if (s[j] != 0.0f) kernels::axpy(s[j], v + j * v_stride, out, Dv);
  }
  if (wrow) {
    if (hi > 0) std::memcpy(wrow, s, sizeof(float) * static_cast<size_t>(hi));  // s null if Sk == 0
    std::memset(wrow + hi, 0, sizeof(float) * static_cast<size_t>(Sk - hi));
  }
}

// x W^T (W [out, in], transpose_w) or x W (W [in, out], the 'general' score's q W): [rows, out],
// on the core's dense layer.
std::vector<float> project(const float* x, int64_t rows, int64_t in, const float* W, int64_t out,
                           bool transpose_w, const char* what, ThreadPool* pool) {
  std::vector<float> y(static_cast<size_t>(rows * out));
  std::vector<float> wt;
  if (!transpose_w) {  // to [out, in], the layer's layout (O(in * out), as its packing is)
    wt.resize(static_cast<size_t>(in * out));
    for (int64_t i = 0; i < in; ++i)
      for (int64_t o = 0; o < out; ++o) wt[o * in + i] = W[i * out + o];
    W = wt.data();
  }
  linear(x, in, rows, in, W, nullptr, out, y.data(), out, pool);
  require_finite(y.data(), rows * out, what);
  return y;
}

// The queries and keys a score compares: 'additive' projects both into its hidden space,
// 'general' projects the queries by W; the dot-product scores use them as they are.
struct Projected {
  std::vector<float> q, k;  // empty: the input itself
  int64_t D = 0;            // feature size of the dot product (dot-product family)
};
Projected project_inputs(const float* q, const float* k, const AttentionDims& d, Score score,
                         const ScoreParams& p, ThreadPool* pool) {
  const int64_t batch = d.batch();
  Projected r;
  r.D = d.Dq;
  if (score == Score::Additive) {
    r.q = project(q, batch * d.Sq, d.Dq, p.Wq, p.hidden, true, kQWq, pool);
    r.k = project(k, batch * d.Sk, d.Dk, p.Wk, p.hidden, true, kKWk, pool);
  } else if (score == Score::General) {
    r.q = project(q, batch * d.Sq, d.Dq, p.W, d.Dk, false, "q, params.W: q W overflows", pool);
    r.D = d.Dk;
  }
  return r;
}

// Additive scores of row i against keys [0, hi): sum_h wv[h] tanh(qp[i,h] + kp[j,h]).
void additive_row(const float* qp_row, const float* kp, const float* wv, int64_t H, float* s,
                  int64_t hi) {
  for (int64_t j = 0; j < hi; ++j) {
    const float* kr = kp + j * H;
    float acc = 0.0f;
    for (int64_t h = 0; h < H; ++h) acc += wv[h] * std::tanh(qp_row[h] + kr[h]);
    s[j] = acc;
  }
}

}  // namespace

void require_finite(const float* x, int64_t n, const char* what) {
  for (int64_t i = 0; i < n; ++i) {
    require(std::isfinite(x[i]), [&] {
      return std::string(what) + " float32 (beyond ±3.4e38) at index " + std::to_string(i) +
             "; scale the inputs down";
    });
  }
}

void attention(const float* q, const float* k, const float* v, const AttentionDims& d,
               Score score, const ScoreParams& p, const MaskSet& masks, float* out,
               float* weights, ThreadPool* pool) {
  check_dims(d, score, p);
  check_query_offset(masks.query_offset);  // here too: not every score goes through attend_slices
  const int64_t batch = d.batch();

  const Projected pr = project_inputs(q, k, d, score, p, pool);
  if (score == Score::Additive) {  // row by row: tanh per (query, key) pair dominates anyway
    const int64_t blocks = (d.Sq + kRowsPerTask - 1) / kRowsPerTask;
    const int64_t H = p.hidden;
    parallel_for(pool, batch * blocks, [&](int64_t t) {
      const int64_t b = t / blocks, i0 = (t % blocks) * kRowsPerTask;
      const int64_t i1 = std::min(d.Sq, i0 + kRowsPerTask);
      std::vector<float> s(static_cast<size_t>(d.Sk));
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t hi = visible_keys(masks, b, i, d.Sk);
        additive_row(pr.q.data() + (b * d.Sq + i) * H, pr.k.data() + b * d.Sk * H, p.wv, H, s.data(),
                     hi);
        finish_row(masks, b, i, s.data(), hi, d.Sk, v + b * d.Sk * d.Dv, d.Dv, d.Dv,
                   out + (b * d.Sq + i) * d.Dv,
                   weights ? weights + (b * d.Sq + i) * d.Sk : nullptr);
      }
    });
    return;
  }

  // Dot-product family; 'general' is a dot product after projecting the queries by W.
  const float* qs = pr.q.empty() ? q : pr.q.data();
  const int64_t D = pr.D;
  const float scale = dot_scale(score, p, D);
  attend_slices(batch, [&](int64_t b) {
    return AttentionSlice{qs + b * d.Sq * D, D,
                          k + b * d.Sk * D, D,
                          v + b * d.Sk * d.Dv, d.Dv,
                          out + b * d.Sq * d.Dv, d.Dv,
                          weights ? weights + b * d.Sq * d.Sk : nullptr, b};
  }, d.Sq, d.Sk, D, d.Dv, scale, masks, pool);
}

void attention_scores(const float* q, const float* k, const AttentionDims& d, Score score,
                      const ScoreParams& p, float* scores, ThreadPool* pool) {
  check_dims(d, score, p);
  const int64_t batch = d.batch();
  const Projected pr = project_inputs(q, k, d, score, p, pool);
  if (score == Score::Additive) {
    parallel_for(pool, batch * d.Sq, [&](int64_t r) {
      const int64_t b = r / d.Sq;
      additive_row(pr.q.data() + r * p.hidden, pr.k.data() + b * d.Sk * p.hidden, p.wv, p.hidden,
                   scores + r * d.Sk, d.Sk);
    });
    require_finite(scores, batch * d.Sq * d.Sk, "q, k, params.wv: the scores overflow");
    return;
  }
  const float* qs = pr.q.empty() ? q : pr.q.data();
  const int64_t D = pr.D;
  const float scale = dot_scale(score, p, D);
  parallel_for(pool, batch * d.Sq, [&](int64_t r) {
    const int64_t b = r / d.Sq;
    for (int64_t j = 0; j < d.Sk; ++j)
      scores[r * d.Sk + j] = scale * kernels::dot(qs + r * D, k + (b * d.Sk + j) * D, D);
  });
  // (attention() itself handles such scores: flash_attention.cpp recomputes their rows exactly.)
  require_finite(scores, batch * d.Sq * d.Sk, "q, k: the scores overflow");
}

}  // namespace attnlab
