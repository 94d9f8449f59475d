#include "attnlab/nn/ops.hpp"

#include <algorithm>
#include <cmath>

#include "attnlab/attention.hpp"
#include "attnlab/softmax.hpp"
#include "attnlab/thread_pool.hpp"
#include "kernels.hpp"
#include "op_util.hpp"

namespace attnlab::nn {

T additive_attention(Tape& tp, T qp, T kp, T v, T values, int64_t S, const std::vector<int>& lens, float* weights) {
  const int64_t B = qp->r, H = qp->c, Dv = values->c;
  check(S > 0 && kp->r % S == 0 && kp->c == H && v->size() == H && values->r == kp->r, "additive_attention", "shape mismatch");
  const int64_t Bk = kp->r / S;
  check(Bk == B || Bk == 1, "additive_attention", "keys must have B or 1 batches");
  check(lens.empty() || static_cast<int64_t>(lens.size()) == Bk, "additive_attention", "lens size != key batches");
  T y = tp.make(B, Dv, any_rg({qp, kp, v, values}));
  const bool rg = y->requires_grad;
  std::vector<float> tanhs(rg ? static_cast<size_t>(B * S * H) : 0);
  std::vector<float> a(static_cast<size_t>(B * S));
  // Row b: scores, softmax and outputs of its own (its tanhs kept for the backward when
  // recording), so inference (a beam's rows) can take the rows on the tape's pool, same bits.
  auto row = [&](int64_t b) {
    const int64_t kb = Bk == 1 ? 0 : b;
    const int64_t n = lens.empty() ? S : std::min<int64_t>(S, lens[kb]);
    float* ab = a.data() + b * S;
    kernels::tanh_dot_rows(qp->v.data() + b * H, kp->v.data() + kb * S * H, H, v->v.data(), H, n, ab,
                           rg ? tanhs.data() + b * S * H : nullptr);
    softmax_row(ab, n);
    float* out = y->v.data() + b * Dv;
    for (int64_t j = 0; j < n; ++j) kernels::axpy(ab[j], values->v.data() + (kb * S + j) * Dv, out, Dv);
  };
  if (rg) {
    for (int64_t b = 0; b < B; ++b) row(b);
  } else {
    parallel_for(B > 1 ? tp.pool : nullptr, B, row);
  }
  if (weights) std::copy(a.begin(), a.end(), weights);
  if (rg)
    tp.record([=, tanhs = std::move(tanhs), a = std::move(a)] {
      const float* dy = y->grad();
      float* dqp = qp->requires_grad ? qp->grad() : nullptr;
      float* dkp = kp->requires_grad ? kp->grad() : nullptr;
      float* dv = v->requires_grad ? v->grad() : nullptr;
      float* dval = values->requires_grad ? values->grad() : nullptr;
      std::vector<float> da(static_cast<size_t>(S));
      for (int64_t b = 0; b < B; ++b) {
        const int64_t kb = Bk == 1 ? 0 : b;
        const int64_t n = lens.empty() ? S : std::min<int64_t>(S, lens[kb]);
        const float* ab = a.data() + b * S;
        const float* d = dy + b * Dv;
        float dot = 0.f;
        for (int64_t j = 0; j < n; ++j) {
          const float* val = values->v.data() + (kb * S + j) * Dv;
          const float s = kernels::dot(d, val, Dv);
          da[j] = s;
          dot += ab[j] * s;
          if (dval) kernels::axpy(ab[j], d, dval + (kb * S + j) * Dv, Dv);
        }
        for (int64_t j = 0; j < n; ++j) {
          const float de = ab[j] * (da[j] - dot);
          const float* t = tanhs.data() + (b * S + j) * H;
          for (int64_t h = 0; h < H; ++h) {
            if (dv) dv[h] += de * t[h];
            const float dpre = de * v->v[h] * (1.f - t[h] * t[h]);
            if (dqp) dqp[b * H + h] += dpre;
            if (dkp) dkp[(kb * S + j) * H + h] += dpre;
          }
        }
      }
    });
  return y;
}

namespace {
// The forward of attention() over rows read in place: q's B * Lq rows, k's and v's Bk * Lk rows,
// all at row stride ld, each D = heads * dh columns wide (columns of a wider stacked product when
// ld > D), into y [B * Lq, D]; W: null, or [B, heads, Lq, Lk].
void attend_heads(const float* q, const float* k, const float* v, int64_t ld, float* y, int64_t D, int64_t B,
                  int64_t Bk, int64_t Lq, int64_t Lk, int64_t heads, const std::vector<int>& klens, bool causal,
                  float scale, float* W) {
  const int64_t dh = D / heads;
  // The core's masks: causal (top-left aligned) and one valid length per batch row.
  MaskSet masks;
  masks.causal = causal;
  if (!klens.empty()) {
    masks.valid_lens.data = klens.data();
    for (int64_t b = 0; b < B; ++b) masks.valid_lens.batch_offset.push_back(Bk == 1 ? 0 : b);
  }
  attend_slices(B * heads, [&](int64_t bh) {
    const int64_t b = bh / heads, h = bh % heads, kb = Bk == 1 ? 0 : b;
    return AttentionSlice{q + b * Lq * ld + h * dh, ld,
                          k + kb * Lk * ld + h * dh, ld,
                          v + kb * Lk * ld + h * dh, ld,
                          y + b * Lq * D + h * dh, D,
                          W ? W + bh * Lq * Lk : nullptr, b};
  }, Lq, Lk, dh, dh, scale, masks, nullptr);
}
}  // namespace

T attention(Tape& tp, T q, T k, T v, int64_t B, int64_t Lq, int64_t Lk, int64_t heads,
            const std::vector<int>& klens, bool causal, float scale, float* weights) {
  const int64_t D = q->c;
  check(heads > 0 && D % heads == 0, "attention", "D not divisible by heads");
  check(q->r == B * Lq && k->c == D && v->c == D && k->r == v->r && Lk > 0 && k->r % Lk == 0, "attention", "shape mismatch");
  const int64_t Bk = k->r / Lk;
  check(Bk == B || Bk == 1, "attention", "keys must have B or 1 batches");
  check(klens.empty() || static_cast<int64_t>(klens.size()) == Bk, "attention", "klens size != key batches");
  const int64_t dh = D / heads;
  if (scale <= 0.f) scale = 1.f / std::sqrt(static_cast<float>(dh));
  T y = tp.make(B * Lq, D, any_rg({q, k, v}));
  // Backward needs the weights [B, heads, Lq, Lk]: the caller's buffer if it asked for them.
  std::vector<float> P(y->requires_grad && !weights ? static_cast<size_t>(B * heads * Lq * Lk) : 0);
  float* W = weights ? weights : (P.empty() ? nullptr : P.data());
  attend_heads(q->v.data(), k->v.data(), v->v.data(), D, y->v.data(), D, B, Bk, Lq, Lk, heads, klens, causal, scale, W);
  if (y->requires_grad) {
    if (weights) P.assign(weights, weights + B * heads * Lq * Lk);
    auto visible = [=](int64_t b, int64_t i) {
      int64_t n = klens.empty() ? Lk : std::min<int64_t>(Lk, klens[Bk == 1 ? 0 : b]);
      if (causal) n = std::min<int64_t>(n, i + 1);
      return std::max<int64_t>(n, 0);
    };
    tp.record([=, P = std::move(P)] {
      const float* dy = y->grad();
      float* dq = q->requires_grad ? q->grad() : nullptr;
      float* dk = k->requires_grad ? k->grad() : nullptr;
      float* dv = v->requires_grad ? v->grad() : nullptr;
      std::vector<float> dp(static_cast<size_t>(Lk));
      for (int64_t b = 0; b < B; ++b) {
        const int64_t kb = Bk == 1 ? 0 : b;
        for (int64_t h = 0; h < heads; ++h)
          for (int64_t i = 0; i < Lq; ++i) {
            const int64_t n = visible(b, i);
            const float* p = P.data() + ((b * heads + h) * Lq + i) * Lk;
            const float* d = dy + (b * Lq + i) * D + h * dh;
            float dot = 0.f;
            for (int64_t j = 0; j < n; ++j) {
              const float* vj = v->v.data() + (kb * Lk + j) * D + h * dh;
              dp[j] = kernels::dot(d, vj, dh);
              dot += p[j] * dp[j];
              if (dv) kernels::axpy(p[j], d, dv + (kb * Lk + j) * D + h * dh, dh);
            }
            const float* qi = q->v.data() + (b * Lq + i) * D + h * dh;
            for (int64_t j = 0; j < n; ++j) {
              const float ds = p[j] * (dp[j] - dot) * scale;
              if (ds == 0.f) continue;
              if (dq) kernels::axpy(ds, k->v.data() + (kb * Lk + j) * D + h * dh, dq + (b * Lq + i) * D + h * dh, dh);
              if (dk) kernels::axpy(ds, qi, dk + (kb * Lk + j) * D + h * dh, dh);
            }
          }
      }
    });
  }
  return y;
}

T self_attention_stacked(Tape& tp, T qkv, int64_t B, int64_t L, int64_t heads, const std::vector<int>& lens,
                         float* weights) {
  const int64_t D = qkv->c / 3;
  check(!qkv->requires_grad, "self_attention_stacked", "inference only (no gradient)");
  check(heads > 0 && qkv->c == 3 * D && D % heads == 0, "self_attention_stacked", "3 * D columns, D divisible by heads");
  check(L > 0 && qkv->r == B * L, "self_attention_stacked", "shape mismatch");
  check(lens.empty() || static_cast<int64_t>(lens.size()) == B, "self_attention_stacked", "lens size != batches");
  T y = tp.make_uninit(B * L, D);
  const float* p = qkv->v.data();
  attend_heads(p, p + D, p + 2 * D, 3 * D, y->v.data(), D, B, B, L, L, heads, lens, false,
               resolve_scale(Score::ScaledDot, 0.f, D / heads), weights);
  return y;
}

}  // namespace attnlab::nn
