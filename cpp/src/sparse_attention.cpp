#include "attnlab/sparse_attention.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/softmax.hpp"
#include "kernels.hpp"

namespace attnlab {
namespace {

constexpr int64_t kRowsPerTask = 16;  // query rows per parallel task, as dense attention

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
  softmax_row(s, n);
  std::memset(out, 0, sizeof(float) * static_cast<size_t>(Dv));
  if (wrow) std::memset(wrow, 0, sizeof(float) * static_cast<size_t>(p.Sk));
  const float* w = s;
  for (const Span& sp : spans) {
    for (int64_t j = sp.begin; j < sp.end; ++j, ++w) {
      if (*w != 0.0f) kernels::axpy(*w, v + j * Dv, out, Dv);
      if (wrow) wrow[j] = *w;
    }
  }
}

}  // namespace

void sparse_attention(const float* q, const float* k, const float* v, int64_t batch, int64_t D,
                      int64_t Dv, float scale, const SparsePattern& p, const MaskSet& masks,
                      float* out, float* weights, ThreadPool* pool) {
  require(batch >= 0 && D >= 1 && Dv >= 1, [&] {
    return "q, k, v: expected batch >= 0 and feature sizes >= 1, got batch=" +
           std::to_string(batch) + " D=" + std::to_string(D) + " Dv=" + std::to_string(Dv);
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
