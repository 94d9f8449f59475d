#include "attnlab/sparse_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/softmax.hpp"
#include "kernels.hpp"

namespace attnlab {
namespace {

constexpr int64_t kRowsPerTask = 16;  // query rows per parallel task, as dense attention

// Row i over the (already cut) spans in double precision, in base e, max-subtracted: the right
// weights and output for scores and masks of any float32 magnitude (|q.k| <= D * FLT_MAX^2 fits a
// double), for the rare rows whose float pass is not finite, as the fused kernel's exact_row
// (flash_attention.cpp). A row whose keys are all hidden gets zeros, as in the float pass.
[[gnu::noinline]] void sparse_exact_row(const float* qi, const float* k, const float* v, int64_t D,
                                        int64_t Dv, float scale, int64_t Sk, const MaskSet& masks,
                                        int64_t b, int64_t i, const std::vector<Span>& spans,
                                        int64_t n, float* out, float* wrow) {
  // Scores, then the output accumulator (plain arrays: no std::vector<double> code in the build).
  std::unique_ptr<double[]> buf(new double[n + Dv]());
  double *s = buf.get(), *o = s + n;
  int64_t at = 0;
  for (const Span& sp : spans) {
    for (int64_t j = sp.begin; j < sp.end; ++j) {
      double dot = 0.0;
      for (int64_t c = 0; c < D; ++c) dot += static_cast<double>(qi[c]) * k[j * D + c];
      s[at + j - sp.begin] = dot * scale;
    }
    apply_element_masks_span(masks, b, i, sp.begin, s + at, sp.end - sp.begin);
    at += sp.end - sp.begin;
  }
  const double sum = exp_shift_row(s, n);
  const double inv = sum > 0.0 ? 1.0 / sum : 0.0;
  at = 0;
  for (const Span& sp : spans) {
    for (int64_t j = sp.begin; j < sp.end; ++j, ++at)
      if (s[at] != 0.0)
        for (int64_t c = 0; c < Dv; ++c) o[c] += s[at] * v[j * Dv + c];
  }
  for (int64_t c = 0; c < Dv; ++c) out[c] = static_cast<float>(o[c] * inv);
  if (wrow) {
    std::memset(wrow, 0, sizeof(float) * static_cast<size_t>(Sk));
    at = 0;
    for (const Span& sp : spans)
      for (int64_t j = sp.begin; j < sp.end; ++j, ++at) wrow[j] = static_cast<float>(s[at] * inv);
  }
}

// Query row i of batch slice b: scores of the visible spans packed into s, then softmax and the
// weighted sum of the matching value rows. Kept out of line, away from the caller's vectors: with
// Emscripten's JavaScript exception handling, each call made while a destructor is pending goes
// through a JS trampoline (~50 ns), which on every dot and axpy would triple the cost.
[[gnu::noinline]] void sparse_row(const float* qi, const float* k, const float* v, int64_t D, int64_t Dv,
                float scale, const SparsePattern& p, const MaskSet& masks, int64_t b, int64_t i,
                std::vector<Span>& spans, float* s, float* out, float* wrow) {
  row_spans(p, i, spans);
  const int64_t hi = visible_keys(masks, b, i, p.Sk);  // causal and validLens cut every span here
  int64_t n = 0;
  for (Span& sp : spans) {
    sp.end = std::max(sp.begin, std::min(sp.end, hi));
    for (int64_t j = sp.begin; j < sp.end; ++j) s[n + j - sp.begin] = scale * kernels::dot(qi, k + j * D, D);
    apply_element_masks_span(masks, b, i, sp.begin, s + n, sp.end - sp.begin);
    n += sp.end - sp.begin;
  }
  // A score past float range (+inf, or inf - inf = NaN in the dot or with a mask), or every
  // visible score -inf (overflowed, or masked): the float softmax cannot weigh the row, so it
  // is recomputed in double. Other rows keep the float pass and its bits.
  bool exact = kernels::find_nonfinite(s, n, true) >= 0;
  if (!exact) exact = !softmax_row(s, n) && n > 0;
  std::memset(out, 0, sizeof(float) * static_cast<size_t>(Dv));
  if (wrow) std::memset(wrow, 0, sizeof(float) * static_cast<size_t>(p.Sk));
  if (!exact) {
    const float* w = s;
    for (const Span& sp : spans) {
      for (int64_t j = sp.begin; j < sp.end; ++j, ++w) {
        if (*w != 0.0f) kernels::axpy(*w, v + j * Dv, out, Dv);
        if (wrow) wrow[j] = *w;
      }
    }
    // The weighted mean of values near FLT_MAX can round past it.
    exact = kernels::find_nonfinite(out, Dv, false) >= 0;
  }
  if (exact) sparse_exact_row(qi, k, v, D, Dv, scale, p.Sk, masks, b, i, spans, n, out, wrow);
}

}  // namespace

void sparse_attention(const float* q, const float* k, const float* v, int64_t batch, int64_t D,
                      int64_t Dv, float scale, const SparsePattern& p, const MaskSet& masks,
                      float* out, float* weights, ThreadPool* pool) {
  require(batch >= 0 && D >= 1 && Dv >= 1, [&] {
    return "q, k, v: expected batch >= 0 and feature sizes >= 1, got batch=" +
           std::to_string(batch) + " D=" + std::to_string(D) + " Dv=" + std::to_string(Dv);
  });
  // Patterns place query i at key position i.
  require(masks.query_offset == 0, [&] {
    return "query_offset: expected 0 with a sparse pattern, got " + std::to_string(masks.query_offset);
  });
  const int64_t Sq = p.Sq, Sk = p.Sk;
  const int64_t blocks = (Sq + kRowsPerTask - 1) / kRowsPerTask;
  parallel_for(pool, batch * blocks, [&](int64_t t) {
    const int64_t b = t / blocks, i0 = (t % blocks) * kRowsPerTask;
    const int64_t i1 = std::min(Sq, i0 + kRowsPerTask);
    std::vector<Span> spans;
    std::vector<float> s(static_cast<size_t>(Sk));  // a global query may see every key
    for (int64_t i = i0; i < i1; ++i) {
      sparse_row(q + (b * Sq + i) * D, k + b * Sk * D, v + b * Sk * Dv, D, Dv, scale, p, masks, b,
                 i, spans, s.data(), out + (b * Sq + i) * Dv,
                 weights ? weights + (b * Sq + i) * Sk : nullptr);
    }
  });
}

}  // namespace attnlab
