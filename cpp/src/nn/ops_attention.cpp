#include "attnlab/nn/ops.hpp"

#include <algorithm>
#include <cmath>

#include "attnlab/attention.hpp"
#include "attnlab/nn/gemm.hpp"
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
    tp.record([=, s = &tp.gemm, P = std::move(P)] {
      const float* dy = y->grad();
      float* dq = q->requires_grad ? q->grad() : nullptr;
      float* dk = k->requires_grad ? k->grad() : nullptr;
      float* dv = v->requires_grad ? v->grad() : nullptr;
      // Per head, as products of its rows (gemm_nn_strided): dP = dY V^T, dV += P^T dY, then
      // dS = P (dP - rowsum(P dP)) scale, dQ += dS K, dK += dS^T Q. Each element sums in the order
      // the row-by-row loops of dots and axpys it replaces did (keys j ascending for dQ, queries i
      // ascending, batch by batch, for dK and dV; dP over the head's columns); the entries of keys
      // a query does not see are zeros, which add nothing. Row by row, the dots' one chain of
      // dependent adds and an axpy's load and store of its row for every pair were 3.5% of the
      // shipped Transformer recipe's step (perf, Intel Xeon).
      // dP's columns padded to whole 8-column blocks (zeros in V^T's padding): a partial block
      // goes through the kernel's element-by-element path.
      const int64_t Lk8 = (Lk + 7) / 8 * 8;
      std::vector<float> vt(static_cast<size_t>(dh * Lk8)), dp(static_cast<size_t>(Lq * Lk8)),
          ds(static_cast<size_t>(Lq * Lk)), pt(static_cast<size_t>(Lk * Lq)), dst(static_cast<size_t>(Lk * Lq));
      std::vector<int64_t> seen(static_cast<size_t>(Lq));
      for (int64_t b = 0; b < B; ++b) {
        const int64_t kb = Bk == 1 ? 0 : b;
        for (int64_t i = 0; i < Lq; ++i) seen[i] = visible(b, i);
        for (int64_t h = 0; h < heads; ++h) {
          const float* ph = P.data() + (b * heads + h) * Lq * Lk;
          const float* dyh = dy + b * Lq * D + h * dh;
          const int64_t qo = b * Lq * D + h * dh, ko = kb * Lk * D + h * dh;
          if (dq || dk) {
            kernels::transpose(v->v.data() + ko, D, Lk, dh, vt.data(), Lk8);
            gemm_nn_strided(dyh, D, vt.data(), Lk8, dp.data(), Lk8, Lq, dh, Lk8, false, s);
          }
          for (int64_t i = 0; i < Lq; ++i) {
            const int64_t n = seen[i];
            const float* p = ph + i * Lk;
            const float* dpi = dp.data() + i * Lk8;
            float dot = 0.f;
            if (dq || dk)
              for (int64_t j = 0; j < n; ++j) dot += p[j] * dpi[j];
            for (int64_t j = 0; j < Lk; ++j) {
              const float dsij = j < n && (dq || dk) ? p[j] * (dpi[j] - dot) * scale : 0.f;
              ds[i * Lk + j] = dsij;
              dst[j * Lq + i] = dsij;
              pt[j * Lq + i] = j < n ? p[j] : 0.f;
            }
          }
          if (dv) gemm_nn_strided(pt.data(), Lq, dyh, D, dv + ko, D, Lk, Lq, dh, true, s);
          if (dq) gemm_nn_strided(ds.data(), Lk, k->v.data() + ko, D, dq + qo, D, Lq, Lk, dh, true, s);
          if (dk) gemm_nn_strided(dst.data(), Lq, q->v.data() + qo, D, dk + ko, D, Lk, Lq, dh, true, s);
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
