#include "attnlab/nn/tape.hpp"

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>

#include "attnlab/error.hpp"
#include "kernels.hpp"
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

namespace attnlab::nn {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapM = Eigen::Map<RowMat>;
using MapCM = Eigen::Map<const RowMat>;

#if defined(__EMSCRIPTEN__)
// Eigen 3.4 has no WebAssembly SIMD path, so the WASM builds use these loops instead: the hot
// one (gemm_nt: every Linear forward) with SIMD128 intrinsics over 4 output columns at a time,
// the other two as axpy loops that clang vectorises.
#if defined(__wasm_simd128__)
static inline float hsum(v128_t v) {
  return wasm_f32x4_extract_lane(v, 0) + wasm_f32x4_extract_lane(v, 1) + wasm_f32x4_extract_lane(v, 2) + wasm_f32x4_extract_lane(v, 3);
}
#endif

void gemm_nt(const float* A, const float* B, float* C, int64_t N, int64_t M, int64_t K, bool acc) {
  int64_t j = 0;
#if defined(__wasm_simd128__)
  // Four rows of B at a time against every row of A, two rows of A per pass (8 accumulators):
  // B streams through once and every load feeds at least two multiply-adds.
  for (; j + 4 <= M; j += 4) {
    const float* b0 = B + j * K;
    const float *b1 = b0 + K, *b2 = b1 + K, *b3 = b2 + K;
    int64_t i = 0;
    for (; i + 2 <= N; i += 2) {
      const float* a = A + i * K;
      const float* a2 = a + K;
      v128_t s0 = wasm_f32x4_splat(0.f), s1 = s0, s2 = s0, s3 = s0, u0 = s0, u1 = s0, u2 = s0, u3 = s0;
      int64_t k = 0;
      for (; k + 4 <= K; k += 4) {
        const v128_t av = wasm_v128_load(a + k), cv = wasm_v128_load(a2 + k);
        const v128_t x0 = wasm_v128_load(b0 + k), x1 = wasm_v128_load(b1 + k);
        const v128_t x2 = wasm_v128_load(b2 + k), x3 = wasm_v128_load(b3 + k);
        s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(av, x0));
        s1 = wasm_f32x4_add(s1, wasm_f32x4_mul(av, x1));
        s2 = wasm_f32x4_add(s2, wasm_f32x4_mul(av, x2));
        s3 = wasm_f32x4_add(s3, wasm_f32x4_mul(av, x3));
        u0 = wasm_f32x4_add(u0, wasm_f32x4_mul(cv, x0));
        u1 = wasm_f32x4_add(u1, wasm_f32x4_mul(cv, x1));
        u2 = wasm_f32x4_add(u2, wasm_f32x4_mul(cv, x2));
        u3 = wasm_f32x4_add(u3, wasm_f32x4_mul(cv, x3));
      }
      float r[8] = {hsum(s0), hsum(s1), hsum(s2), hsum(s3), hsum(u0), hsum(u1), hsum(u2), hsum(u3)};
      for (; k < K; ++k) {
        r[0] += a[k] * b0[k]; r[1] += a[k] * b1[k]; r[2] += a[k] * b2[k]; r[3] += a[k] * b3[k];
        r[4] += a2[k] * b0[k]; r[5] += a2[k] * b1[k]; r[6] += a2[k] * b2[k]; r[7] += a2[k] * b3[k];
      }
      float* c = C + i * M + j;
      float* c2 = c + M;
      for (int q = 0; q < 4; ++q) {
        c[q] = acc ? c[q] + r[q] : r[q];
        c2[q] = acc ? c2[q] + r[4 + q] : r[4 + q];
      }
    }
    for (; i < N; ++i) {
      const float* a = A + i * K;
      float* c = C + i * M;
      v128_t s0 = wasm_f32x4_splat(0.f), s1 = s0, s2 = s0, s3 = s0;
      int64_t k = 0;
      for (; k + 4 <= K; k += 4) {
        const v128_t av = wasm_v128_load(a + k);
        s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(av, wasm_v128_load(b0 + k)));
        s1 = wasm_f32x4_add(s1, wasm_f32x4_mul(av, wasm_v128_load(b1 + k)));
        s2 = wasm_f32x4_add(s2, wasm_f32x4_mul(av, wasm_v128_load(b2 + k)));
        s3 = wasm_f32x4_add(s3, wasm_f32x4_mul(av, wasm_v128_load(b3 + k)));
      }
      float r0 = hsum(s0), r1 = hsum(s1), r2 = hsum(s2), r3 = hsum(s3);
      for (; k < K; ++k) {
        r0 += a[k] * b0[k];
        r1 += a[k] * b1[k];
        r2 += a[k] * b2[k];
        r3 += a[k] * b3[k];
      }
      if (acc) {
        c[j] += r0; c[j + 1] += r1; c[j + 2] += r2; c[j + 3] += r3;
      } else {
        c[j] = r0; c[j + 1] = r1; c[j + 2] = r2; c[j + 3] = r3;
      }
    }
  }
#endif
  for (; j < M; ++j) {
    const float* b = B + j * K;
    for (int64_t i = 0; i < N; ++i) {
      const float* a = A + i * K;
      float r = 0.f;
      for (int64_t k = 0; k < K; ++k) r += a[k] * b[k];
      C[i * M + j] = acc ? C[i * M + j] + r : r;
    }
  }
}

void gemm_tn(const float* A, const float* B, float* C, int64_t N, int64_t K, int64_t M, bool acc) {
  if (!acc) std::fill(C, C + K * M, 0.f);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      const float a = A[n * K + k];
      if (a == 0.f) continue;
      const float* b = B + n * M;
      float* c = C + k * M;
      for (int64_t m = 0; m < M; ++m) c[m] += a * b[m];
    }
}

void gemm_nn(const float* A, const float* B, float* C, int64_t N, int64_t K, int64_t M, bool acc) {
  if (!acc) std::fill(C, C + N * M, 0.f);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      const float a = A[n * K + k];
      if (a == 0.f) continue;
      const float* b = B + k * M;
      float* c = C + n * M;
      for (int64_t m = 0; m < M; ++m) c[m] += a * b[m];
    }
}
#else
void gemm_nt(const float* A, const float* B, float* C, int64_t N, int64_t M, int64_t K, bool acc) {
  MapM c(C, N, M);
  if (N == 0 || M == 0) return;
  if (K == 0) {
    if (!acc) c.setZero();
    return;
  }
  MapCM a(A, N, K), b(B, M, K);
  if (acc) c.noalias() += a * b.transpose();
  else c.noalias() = a * b.transpose();
}

void gemm_tn(const float* A, const float* B, float* C, int64_t N, int64_t K, int64_t M, bool acc) {
  MapM c(C, K, M);
  if (K == 0 || M == 0) return;
  if (N == 0) {
    if (!acc) c.setZero();
    return;
  }
  MapCM a(A, N, K), b(B, N, M);
  if (acc) c.noalias() += a.transpose() * b;
  else c.noalias() = a.transpose() * b;
}

void gemm_nn(const float* A, const float* B, float* C, int64_t N, int64_t K, int64_t M, bool acc) {
  MapM c(C, N, M);
  if (N == 0 || M == 0) return;
  if (K == 0) {
    if (!acc) c.setZero();
    return;
  }
  MapCM a(A, N, K), b(B, K, M);
  if (acc) c.noalias() += a * b;
  else c.noalias() = a * b;
}
#endif  // __EMSCRIPTEN__

T Tape::make(int64_t r, int64_t c, bool rg) {
  nodes_.emplace_back();
  Tensor& t = nodes_.back();
  t.r = r;
  t.c = c;
  t.v.assign(static_cast<size_t>(r * c), 0.f);
  t.requires_grad = rg && grad_enabled;
  return &t;
}

T Tape::constant(int64_t r, int64_t c, std::vector<float> v) {
  require(static_cast<int64_t>(v.size()) == r * c, [] { return std::string("Tape::constant: size mismatch"); });
  nodes_.emplace_back();
  Tensor& t = nodes_.back();
  t.r = r;
  t.c = c;
  t.v = std::move(v);
  return &t;
}

void Tape::backward(T loss) {
  std::fill(loss->grad(), loss->grad() + loss->size(), 1.f);
  for (auto it = backs_.rbegin(); it != backs_.rend(); ++it) (*it)();
}

namespace {
bool any_rg(std::initializer_list<T> xs) {
  for (T x : xs)
    if (x && x->requires_grad) return true;
  return false;
}
void check(bool ok, const char* op, const char* what) {
  if (!ok) throw Error(std::string("nn::") + op + ": " + what);
}
}  // namespace

namespace {

template <int R>
void q8_rows(const int16_t* xq, int64_t ldx, const float* sx, const Tensor& W, float* y, int64_t M) {
  int32_t acc[R];
  for (int64_t m = 0; m < M; ++m) {
    kernels::dot_i16_i8<R>(xq, ldx, W.q8.data() + m * W.q8_stride, W.q8_stride, acc);
    for (int r = 0; r < R; ++r) y[r * M + m] = static_cast<float>(acc[r]) * (sx[r] * W.q8_scale[m]);
  }
}

// y = x W^T for inference with int8 weights: each row of x quantised to int16 (scale max|x| /
// 8191), exact integer dot products against the int8 rows, then one float scale per pair. A
// quarter of fp32's weight traffic, and 8 multiply-adds per SIMD instruction; the activations'
// rounding (<= 6e-5 of the row's largest entry) is far below the weights' own int8 rounding.
void linear_q8(const float* x, int64_t N, int64_t K, const Tensor& W, float* y) {
  const int64_t M = W.r, Kp = W.q8_stride;
  std::vector<int16_t> xq(static_cast<size_t>(N * Kp));
  std::vector<float> sx(static_cast<size_t>(N));
  for (int64_t i = 0; i < N; ++i) sx[i] = kernels::quantize_i16(x + i * K, K, Kp, xq.data() + i * Kp);
  // Up to 8 rows share each pass over the weights (a beam of 5 reads them once per step).
  for (int64_t i0 = 0; i0 < N; i0 += 8) {
    const int64_t rows = std::min<int64_t>(8, N - i0);
    const int16_t* xr = xq.data() + i0 * Kp;
    float* yr = y + i0 * M;
    switch (rows) {
      case 1: q8_rows<1>(xr, Kp, sx.data() + i0, W, yr, M); break;
      case 2: q8_rows<2>(xr, Kp, sx.data() + i0, W, yr, M); break;
      case 3: q8_rows<3>(xr, Kp, sx.data() + i0, W, yr, M); break;
      case 4: q8_rows<4>(xr, Kp, sx.data() + i0, W, yr, M); break;
      case 5: q8_rows<5>(xr, Kp, sx.data() + i0, W, yr, M); break;
      case 6: q8_rows<6>(xr, Kp, sx.data() + i0, W, yr, M); break;
      case 7: q8_rows<7>(xr, Kp, sx.data() + i0, W, yr, M); break;
      default: q8_rows<8>(xr, Kp, sx.data() + i0, W, yr, M); break;
    }
  }
}

}  // namespace

T linear(Tape& tp, T x, T W, T b) {
  check(x->c == W->c, "linear", "x columns != W columns");
  check(!b || b->size() == W->r, "linear", "bias size != W rows");
  const int64_t N = x->r, K = x->c, M = W->r;
  T y = tp.make(N, M, any_rg({x, W, b}));
  // int32 sums are exact up to K = 2048 (8191 * 127 * 2048 < 2^31).
  if (!y->requires_grad && !W->q8.empty() && K <= 2048)
    linear_q8(x->v.data(), N, K, *W, y->v.data());
  else
    gemm_nt(x->v.data(), W->v.data(), y->v.data(), N, M, K, false);
  if (b)
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < M; ++j) y->v[i * M + j] += b->v[j];
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      if (x->requires_grad) gemm_nn(dy, W->v.data(), x->grad(), N, M, K, true);
      if (W->requires_grad) gemm_tn(dy, x->v.data(), W->grad(), N, M, K, true);
      if (b && b->requires_grad) {
        float* db = b->grad();
        for (int64_t i = 0; i < N; ++i)
          for (int64_t j = 0; j < M; ++j) db[j] += dy[i * M + j];
      }
    });
  return y;
}

T embedding(Tape& tp, T E, const std::vector<int>& ids) {
  const int64_t N = static_cast<int64_t>(ids.size()), D = E->c;
  T y = tp.make(N, D, E->requires_grad);
  for (int64_t i = 0; i < N; ++i) {
    const int id = ids[i];
    check(id < E->r, "embedding", "id out of range");
    if (id >= 0) std::copy_n(E->v.data() + id * D, D, y->v.data() + i * D);
  }
  if (y->requires_grad)
    tp.record([=] {
      float* dE = E->grad();
      const float* dy = y->grad();
      for (int64_t i = 0; i < N; ++i)
        if (ids[i] >= 0)
          for (int64_t d = 0; d < D; ++d) dE[ids[i] * D + d] += dy[i * D + d];
    });
  return y;
}

T add(Tape& tp, T a, T b) {
  check(a->r == b->r && a->c == b->c, "add", "shape mismatch");
  T y = tp.make(a->r, a->c, any_rg({a, b}));
  const int64_t n = a->size();
  for (int64_t i = 0; i < n; ++i) y->v[i] = a->v[i] + b->v[i];
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      for (T x : {a, b})
        if (x->requires_grad) {
          float* dx = x->grad();
          for (int64_t i = 0; i < n; ++i) dx[i] += dy[i];
        }
    });
  return y;
}

T mul(Tape& tp, T a, T b) {
  check(a->r == b->r && a->c == b->c, "mul", "shape mismatch");
  T y = tp.make(a->r, a->c, any_rg({a, b}));
  const int64_t n = a->size();
  for (int64_t i = 0; i < n; ++i) y->v[i] = a->v[i] * b->v[i];
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      if (a->requires_grad) {
        float* da = a->grad();
        for (int64_t i = 0; i < n; ++i) da[i] += dy[i] * b->v[i];
      }
      if (b->requires_grad) {
        float* db = b->grad();
        for (int64_t i = 0; i < n; ++i) db[i] += dy[i] * a->v[i];
      }
    });
  return y;
}

T scale(Tape& tp, T a, float s) {
  T y = tp.make(a->r, a->c, a->requires_grad);
  const int64_t n = a->size();
  for (int64_t i = 0; i < n; ++i) y->v[i] = a->v[i] * s;
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      float* da = a->grad();
      for (int64_t i = 0; i < n; ++i) da[i] += dy[i] * s;
    });
  return y;
}

template <class F, class DF>
static T unary(Tape& tp, T a, F f, DF df_from_y) {
  T y = tp.make(a->r, a->c, a->requires_grad);
  const int64_t n = a->size();
  for (int64_t i = 0; i < n; ++i) y->v[i] = f(a->v[i]);
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      float* da = a->grad();
      for (int64_t i = 0; i < n; ++i) da[i] += dy[i] * df_from_y(y->v[i], a->v[i]);
    });
  return y;
}

static inline float sigm(float x) { return 1.f / (1.f + std::exp(-x)); }

// tanh over an array through the SIMD exp kernel: tanh(x) = 1 - 2 / (1 + exp(2x)).
static void tanh_inplace(float* x, int64_t n) {
#if !defined(__EMSCRIPTEN__)
  for (int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i]);
  return;
#endif
  for (int64_t i = 0; i < n; ++i) x[i] = 2.f * std::min(std::max(x[i], -15.f), 15.f);
  kernels::exp_shift_sum(x, 0.f, n);
  for (int64_t i = 0; i < n; ++i) x[i] = 1.f - 2.f / (1.f + x[i]);
}

#if defined(__EMSCRIPTEN__)
// s[i] = sigmoid(a[i] + b[i]) through the SIMD exp kernel: with e = exp(-|x|) <= 1 (no overflow),
// sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) below.
static void sigmoid_inplace_sum(const float* a, const float* b, float* s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) s[i] = -std::fabs(a[i] + b[i]);
  kernels::exp_shift_sum(s, 0.f, n);
  for (int64_t i = 0; i < n; ++i) s[i] = (a[i] + b[i] >= 0.f ? 1.f : s[i]) / (1.f + s[i]);
}
#endif

T tanh_(Tape& tp, T a) {
  return unary(tp, a, [](float x) { return std::tanh(x); }, [](float y, float) { return 1.f - y * y; });
}
T sigmoid_(Tape& tp, T a) {
  return unary(tp, a, sigm, [](float y, float) { return y * (1.f - y); });
}
T relu_(Tape& tp, T a) {
  return unary(tp, a, [](float x) { return x > 0.f ? x : 0.f; }, [](float, float x) { return x > 0.f ? 1.f : 0.f; });
}

T concat_cols(Tape& tp, T a, T b) {
  check(a->r == b->r, "concat_cols", "row mismatch");
  const int64_t N = a->r, A = a->c, B = b->c, C = A + B;
  T y = tp.make(N, C, any_rg({a, b}));
  for (int64_t i = 0; i < N; ++i) {
    std::copy_n(a->v.data() + i * A, A, y->v.data() + i * C);
    std::copy_n(b->v.data() + i * B, B, y->v.data() + i * C + A);
  }
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      if (a->requires_grad) {
        float* da = a->grad();
        for (int64_t i = 0; i < N; ++i)
          for (int64_t j = 0; j < A; ++j) da[i * A + j] += dy[i * C + j];
      }
      if (b->requires_grad) {
        float* db = b->grad();
        for (int64_t i = 0; i < N; ++i)
          for (int64_t j = 0; j < B; ++j) db[i * B + j] += dy[i * C + A + j];
      }
    });
  return y;
}

T slice_rows(Tape& tp, T x, int64_t start, int64_t n) {
  check(start >= 0 && n >= 0 && start + n <= x->r, "slice_rows", "range out of bounds");
  const int64_t C = x->c;
  T y = tp.make(n, C, x->requires_grad);
  std::copy_n(x->v.data() + start * C, n * C, y->v.data());
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      float* dx = x->grad() + start * C;
      for (int64_t i = 0; i < n * C; ++i) dx[i] += dy[i];
    });
  return y;
}

T concat_rows(Tape& tp, const std::vector<T>& xs) {
  check(!xs.empty(), "concat_rows", "no inputs");
  const int64_t C = xs[0]->c;
  int64_t R = 0;
  bool rg = false;
  for (T x : xs) {
    check(x->c == C, "concat_rows", "column mismatch");
    R += x->r;
    rg = rg || x->requires_grad;
  }
  T y = tp.make(R, C, rg);
  int64_t off = 0;
  for (T x : xs) {
    std::copy_n(x->v.data(), x->size(), y->v.data() + off);
    off += x->size();
  }
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      int64_t o = 0;
      for (T x : xs) {
        if (x->requires_grad) {
          float* dx = x->grad();
          for (int64_t i = 0; i < x->size(); ++i) dx[i] += dy[o + i];
        }
        o += x->size();
      }
    });
  return y;
}

T stack_batch_major(Tape& tp, const std::vector<T>& xs) {
  check(!xs.empty(), "stack_batch_major", "no inputs");
  const int64_t S = static_cast<int64_t>(xs.size()), B = xs[0]->r, C = xs[0]->c;
  bool rg = false;
  for (T x : xs) {
    check(x->r == B && x->c == C, "stack_batch_major", "shape mismatch");
    rg = rg || x->requires_grad;
  }
  T y = tp.make(B * S, C, rg);
  for (int64_t t = 0; t < S; ++t)
    for (int64_t b = 0; b < B; ++b) std::copy_n(xs[t]->v.data() + b * C, C, y->v.data() + (b * S + t) * C);
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      for (int64_t t = 0; t < S; ++t) {
        if (!xs[t]->requires_grad) continue;
        float* dx = xs[t]->grad();
        for (int64_t b = 0; b < B; ++b)
          for (int64_t c = 0; c < C; ++c) dx[b * C + c] += dy[(b * S + t) * C + c];
      }
    });
  return y;
}

T add_rows_periodic(Tape& tp, T x, const std::vector<float>& pe, int64_t L) {
  const int64_t C = x->c;
  check(L > 0 && x->r % L == 0 && static_cast<int64_t>(pe.size()) >= L * C, "add_rows_periodic", "shape mismatch");
  T y = tp.make(x->r, C, x->requires_grad);
  for (int64_t i = 0; i < x->r; ++i)
    for (int64_t c = 0; c < C; ++c) y->v[i * C + c] = x->v[i * C + c] + pe[(i % L) * C + c];
  if (y->requires_grad)
    tp.record([=] {
      const float* dy = y->grad();
      float* dx = x->grad();
      for (int64_t i = 0; i < x->size(); ++i) dx[i] += dy[i];
    });
  return y;
}

T gru_cell(Tape& tp, T gi, T gh, T h, const std::vector<uint8_t>& active) {
  const int64_t B = h->r, H = h->c;
  check(gi->r == B && gh->r == B && gi->c == 3 * H && gh->c == 3 * H, "gru_cell", "shape mismatch");
  check(active.empty() || static_cast<int64_t>(active.size()) == B, "gru_cell", "active size != B");
  T y = tp.make(B, H, any_rg({gi, gh, h}));
  std::vector<float> rzn(static_cast<size_t>(B * 3 * H));  // saved r, z, n
  for (int64_t b = 0; b < B; ++b) {
    const float* pi = gi->v.data() + b * 3 * H;
    const float* ph = gh->v.data() + b * 3 * H;
    const float* hp = h->v.data() + b * H;
    float* out = y->v.data() + b * H;
    float* s = rzn.data() + b * 3 * H;
    if (!active.empty() && !active[b]) {
      std::copy_n(hp, H, out);
      continue;
    }
#if defined(__EMSCRIPTEN__)
    // WebAssembly: the gates through the SIMD exp kernel (libm's exp and tanh are slow there).
    sigmoid_inplace_sum(pi, ph, s, 2 * H);
    for (int64_t j = 0; j < H; ++j) s[2 * H + j] = pi[2 * H + j] + s[j] * ph[2 * H + j];
    tanh_inplace(s + 2 * H, H);
    for (int64_t j = 0; j < H; ++j) out[j] = (1.f - s[H + j]) * s[2 * H + j] + s[H + j] * hp[j];
#else
    for (int64_t j = 0; j < H; ++j) {
      const float r = sigm(pi[j] + ph[j]);
      const float z = sigm(pi[H + j] + ph[H + j]);
      const float n = std::tanh(pi[2 * H + j] + r * ph[2 * H + j]);
      s[j] = r;
      s[H + j] = z;
      s[2 * H + j] = n;
      out[j] = (1.f - z) * n + z * hp[j];
    }
#endif
  }
  if (y->requires_grad) {
    y->aux = std::move(rzn);
    tp.record([=] {
      const float* dy = y->grad();
      float* dgi = gi->requires_grad ? gi->grad() : nullptr;
      float* dgh = gh->requires_grad ? gh->grad() : nullptr;
      float* dh = h->requires_grad ? h->grad() : nullptr;
      for (int64_t b = 0; b < B; ++b) {
        const float* d = dy + b * H;
        if (!active.empty() && !active[b]) {
          if (dh)
            for (int64_t j = 0; j < H; ++j) dh[b * H + j] += d[j];
          continue;
        }
        const float* s = y->aux.data() + b * 3 * H;
        const float* ph = gh->v.data() + b * 3 * H;
        const float* hp = h->v.data() + b * H;
        for (int64_t j = 0; j < H; ++j) {
          const float r = s[j], z = s[H + j], n = s[2 * H + j];
          const float dn = d[j] * (1.f - z) * (1.f - n * n);
          const float dz = d[j] * (hp[j] - n) * z * (1.f - z);
          const float dr = dn * ph[2 * H + j] * r * (1.f - r);
          if (dgi) {
            dgi[b * 3 * H + j] += dr;
            dgi[b * 3 * H + H + j] += dz;
            dgi[b * 3 * H + 2 * H + j] += dn;
          }
          if (dgh) {
            dgh[b * 3 * H + j] += dr;
            dgh[b * 3 * H + H + j] += dz;
            dgh[b * 3 * H + 2 * H + j] += dn * r;
          }
          if (dh) dh[b * H + j] += d[j] * z;
        }
      }
    });
  }
  return y;
}

// softmax in place over the first n entries of x[0..len), zero beyond; all-masked -> zeros.
static void masked_softmax_row(float* x, int64_t len, int64_t n) {
  for (int64_t j = n; j < len; ++j) x[j] = 0.f;
  if (n <= 0) return;
  float m = -std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < n; ++j) m = std::max(m, x[j]);
  float s = 0.f;
  for (int64_t j = 0; j < n; ++j) {
    x[j] = std::exp(x[j] - m);
    s += x[j];
  }
  const float inv = 1.f / s;
  for (int64_t j = 0; j < n; ++j) x[j] *= inv;
}

T additive_attention(Tape& tp, T qp, T kp, T v, T values, int64_t S, const std::vector<int>& lens) {
  const int64_t B = qp->r, H = qp->c, Dv = values->c;
  check(S > 0 && kp->r % S == 0 && kp->c == H && v->size() == H && values->r == kp->r, "additive_attention", "shape mismatch");
  const int64_t Bk = kp->r / S;
  check(Bk == B || Bk == 1, "additive_attention", "keys must have B or 1 batches");
  check(lens.empty() || static_cast<int64_t>(lens.size()) == Bk, "additive_attention", "lens size != key batches");
  T y = tp.make(B, Dv, any_rg({qp, kp, v, values}));
  const bool rg = y->requires_grad;
  std::vector<float> tanhs(rg ? static_cast<size_t>(B * S * H) : 0);
  std::vector<float> a(static_cast<size_t>(B * S));
  std::vector<float> tmp(static_cast<size_t>(H));
  for (int64_t b = 0; b < B; ++b) {
    const int64_t kb = Bk == 1 ? 0 : b;
    const int64_t n = lens.empty() ? S : std::min<int64_t>(S, lens[kb]);
    float* ab = a.data() + b * S;
    for (int64_t j = 0; j < n; ++j) {
      const float* k = kp->v.data() + (kb * S + j) * H;
      const float* q = qp->v.data() + b * H;
      float* t = rg ? tanhs.data() + (b * S + j) * H : tmp.data();
      for (int64_t h = 0; h < H; ++h) t[h] = q[h] + k[h];
      tanh_inplace(t, H);
#if defined(__EMSCRIPTEN__)
      ab[j] = kernels::dot(v->v.data(), t, H);
#else
      float e = 0.f;
      for (int64_t h = 0; h < H; ++h) e += v->v[h] * t[h];
      ab[j] = e;
#endif
    }
    masked_softmax_row(ab, S, n);
    float* out = y->v.data() + b * Dv;
    for (int64_t j = 0; j < n; ++j) {
      const float w = ab[j];
      const float* val = values->v.data() + (kb * S + j) * Dv;
      for (int64_t d = 0; d < Dv; ++d) out[d] += w * val[d];
    }
  }
  y->aux = std::move(a);
  if (rg)
    tp.record([=, tanhs = std::move(tanhs)] {
      const float* dy = y->grad();
      float* dqp = qp->requires_grad ? qp->grad() : nullptr;
      float* dkp = kp->requires_grad ? kp->grad() : nullptr;
      float* dv = v->requires_grad ? v->grad() : nullptr;
      float* dval = values->requires_grad ? values->grad() : nullptr;
      std::vector<float> da(static_cast<size_t>(S));
      for (int64_t b = 0; b < B; ++b) {
        const int64_t kb = Bk == 1 ? 0 : b;
        const int64_t n = lens.empty() ? S : std::min<int64_t>(S, lens[kb]);
        const float* ab = y->aux.data() + b * S;
        const float* d = dy + b * Dv;
        float dot = 0.f;
        for (int64_t j = 0; j < n; ++j) {
          const float* val = values->v.data() + (kb * S + j) * Dv;
          float s = 0.f;
          for (int64_t k = 0; k < Dv; ++k) s += d[k] * val[k];
          da[j] = s;
          dot += ab[j] * s;
          if (dval)
            for (int64_t k = 0; k < Dv; ++k) dval[(kb * S + j) * Dv + k] += ab[j] * d[k];
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

T attention(Tape& tp, T q, T k, T v, int64_t B, int64_t Lq, int64_t Lk, int64_t heads,
            const std::vector<int>& klens, bool causal, float scale, int64_t causal_offset) {
  const int64_t D = q->c;
  check(heads > 0 && D % heads == 0, "attention", "D not divisible by heads");
  check(q->r == B * Lq && k->c == D && v->c == D && k->r == v->r && Lk > 0 && k->r % Lk == 0, "attention", "shape mismatch");
  const int64_t Bk = k->r / Lk;
  check(Bk == B || Bk == 1, "attention", "keys must have B or 1 batches");
  check(klens.empty() || static_cast<int64_t>(klens.size()) == Bk, "attention", "klens size != key batches");
  const int64_t dh = D / heads;
  if (scale <= 0.f) scale = 1.f / std::sqrt(static_cast<float>(dh));
  T y = tp.make(B * Lq, D, any_rg({q, k, v}));
  std::vector<float> P(static_cast<size_t>(B * heads * Lq * Lk), 0.f);
  auto visible = [=](int64_t b, int64_t i) {
    int64_t n = klens.empty() ? Lk : std::min<int64_t>(Lk, klens[Bk == 1 ? 0 : b]);
    if (causal) n = std::min<int64_t>(n, i + causal_offset + 1);
    return std::max<int64_t>(n, 0);
  };
  for (int64_t b = 0; b < B; ++b) {
    const int64_t kb = Bk == 1 ? 0 : b;
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < Lq; ++i) {
        const int64_t n = visible(b, i);
        float* p = P.data() + ((b * heads + h) * Lq + i) * Lk;
        const float* qi = q->v.data() + (b * Lq + i) * D + h * dh;
        for (int64_t j = 0; j < n; ++j) {
          const float* kj = k->v.data() + (kb * Lk + j) * D + h * dh;
          float s = 0.f;
          for (int64_t d = 0; d < dh; ++d) s += qi[d] * kj[d];
          p[j] = s * scale;
        }
        masked_softmax_row(p, Lk, n);
        float* out = y->v.data() + (b * Lq + i) * D + h * dh;
        for (int64_t j = 0; j < n; ++j) {
          const float w = p[j];
          const float* vj = v->v.data() + (kb * Lk + j) * D + h * dh;
          for (int64_t d = 0; d < dh; ++d) out[d] += w * vj[d];
        }
      }
  }
  y->aux = std::move(P);
  if (y->requires_grad)
    tp.record([=] {
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
            const float* p = y->aux.data() + ((b * heads + h) * Lq + i) * Lk;
            const float* d = dy + (b * Lq + i) * D + h * dh;
            float dot = 0.f;
            for (int64_t j = 0; j < n; ++j) {
              const float* vj = v->v.data() + (kb * Lk + j) * D + h * dh;
              float s = 0.f;
              for (int64_t e = 0; e < dh; ++e) s += d[e] * vj[e];
              dp[j] = s;
              dot += p[j] * s;
              if (dv) {
                float* dvj = dv + (kb * Lk + j) * D + h * dh;
                for (int64_t e = 0; e < dh; ++e) dvj[e] += p[j] * d[e];
              }
            }
            const float* qi = q->v.data() + (b * Lq + i) * D + h * dh;
            for (int64_t j = 0; j < n; ++j) {
              const float ds = p[j] * (dp[j] - dot) * scale;
              if (ds == 0.f) continue;
              const float* kj = k->v.data() + (kb * Lk + j) * D + h * dh;
              if (dq) {
                float* dqi = dq + (b * Lq + i) * D + h * dh;
                for (int64_t e = 0; e < dh; ++e) dqi[e] += ds * kj[e];
              }
              if (dk) {
                float* dkj = dk + (kb * Lk + j) * D + h * dh;
                for (int64_t e = 0; e < dh; ++e) dkj[e] += ds * qi[e];
              }
            }
          }
      }
    });
  return y;
}

T layer_norm(Tape& tp, T x, T g, T b) {
  const int64_t N = x->r, C = x->c;
  check(g->size() == C && b->size() == C, "layer_norm", "gain/bias size != columns");
  T y = tp.make(N, C, any_rg({x, g, b}));
  std::vector<float> stats(static_cast<size_t>(2 * N));  // mean, rstd
  for (int64_t i = 0; i < N; ++i) {
    const float* xi = x->v.data() + i * C;
    float m = 0.f;
    for (int64_t c = 0; c < C; ++c) m += xi[c];
    m /= static_cast<float>(C);
    float var = 0.f;
    for (int64_t c = 0; c < C; ++c) var += (xi[c] - m) * (xi[c] - m);
    var /= static_cast<float>(C);
    const float rs = 1.f / std::sqrt(var + 1e-5f);
    stats[2 * i] = m;
    stats[2 * i + 1] = rs;
    for (int64_t c = 0; c < C; ++c) y->v[i * C + c] = (xi[c] - m) * rs * g->v[c] + b->v[c];
  }
  if (y->requires_grad) {
    y->aux = std::move(stats);
    tp.record([=] {
      const float* dy = y->grad();
      float* dx = x->requires_grad ? x->grad() : nullptr;
      float* dg = g->requires_grad ? g->grad() : nullptr;
      float* db = b->requires_grad ? b->grad() : nullptr;
      for (int64_t i = 0; i < N; ++i) {
        const float m = y->aux[2 * i], rs = y->aux[2 * i + 1];
        const float* xi = x->v.data() + i * C;
        const float* d = dy + i * C;
        float s1 = 0.f, s2 = 0.f;  // mean of dxhat, mean of dxhat * xhat
        for (int64_t c = 0; c < C; ++c) {
          const float xh = (xi[c] - m) * rs;
          const float dxh = d[c] * g->v[c];
          s1 += dxh;
          s2 += dxh * xh;
          if (dg) dg[c] += d[c] * xh;
          if (db) db[c] += d[c];
        }
        s1 /= static_cast<float>(C);
        s2 /= static_cast<float>(C);
        if (dx)
          for (int64_t c = 0; c < C; ++c) {
            const float xh = (xi[c] - m) * rs;
            dx[i * C + c] += rs * (d[c] * g->v[c] - s1 - xh * s2);
          }
      }
    });
  }
  return y;
}

T dropout(Tape& tp, T x, float p, std::mt19937& rng) {
  if (p <= 0.f || !tp.grad_enabled) return x;
  T y = tp.make(x->r, x->c, x->requires_grad);
  const int64_t n = x->size();
  std::vector<float> mask(static_cast<size_t>(n));
  std::uniform_real_distribution<float> U(0.f, 1.f);
  const float keep = 1.f / (1.f - p);
  for (int64_t i = 0; i < n; ++i) {
    mask[i] = U(rng) < p ? 0.f : keep;
    y->v[i] = x->v[i] * mask[i];
  }
  if (y->requires_grad)
    tp.record([=, mask = std::move(mask)] {
      const float* dy = y->grad();
      float* dx = x->grad();
      for (int64_t i = 0; i < n; ++i) dx[i] += dy[i] * mask[i];
    });
  return y;
}

void log_softmax_rows(float* x, int64_t N, int64_t V) {
#if !defined(__EMSCRIPTEN__)
  // Native: libm's exp (what the shipped models were trained with).
  for (int64_t i = 0; i < N; ++i) {
    float* r = x + i * V;
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t j = 0; j < V; ++j) m = std::max(m, r[j]);
    float s = 0.f;
    for (int64_t j = 0; j < V; ++j) s += std::exp(r[j] - m);
    const float lse = m + std::log(s);
    for (int64_t j = 0; j < V; ++j) r[j] -= lse;
  }
  return;
#endif
  // WebAssembly: the SIMD exp kernel (libm's exp is slow there).
  std::vector<float> tmp(static_cast<size_t>(V));
  for (int64_t i = 0; i < N; ++i) {
    float* r = x + i * V;
    const float m = kernels::max(r, V);
    std::copy_n(r, V, tmp.data());
    const float lse = m + std::log(kernels::exp_shift_sum(tmp.data(), m, V));
    for (int64_t j = 0; j < V; ++j) r[j] -= lse;
  }
}

T cross_entropy(Tape& tp, T logits, const std::vector<int>& targets, float eps) {
  const int64_t N = logits->r, V = logits->c;
  check(static_cast<int64_t>(targets.size()) == N, "cross_entropy", "targets size != rows");
  T y = tp.make(1, 1, logits->requires_grad);
  int64_t count = 0;
  for (int t : targets) count += t >= 0;
  const float inv = count ? 1.f / static_cast<float>(count) : 0.f;
  std::vector<float> dlogits(logits->requires_grad ? static_cast<size_t>(N * V) : 0);
  std::vector<float> row(static_cast<size_t>(V));
  double loss = 0.0;
  for (int64_t i = 0; i < N; ++i) {
    const int t = targets[i];
    if (t < 0) continue;
    check(t < V, "cross_entropy", "target out of range");
    std::copy_n(logits->v.data() + i * V, V, row.data());
    log_softmax_rows(row.data(), 1, V);
    double l = -(1.0 - eps) * row[t];
    if (eps > 0.f) {
      double s = 0.0;
      for (int64_t j = 0; j < V; ++j) s += row[j];
      l -= eps * s / static_cast<double>(V);
    }
    loss += l;
    if (!dlogits.empty()) {
      float* d = dlogits.data() + i * V;
      for (int64_t j = 0; j < V; ++j) d[j] = (std::exp(row[j]) - eps / static_cast<float>(V)) * inv;
      d[t] -= (1.f - eps) * inv;
    }
  }
  y->v[0] = static_cast<float>(loss * inv);
  y->aux = {static_cast<float>(count)};
  if (y->requires_grad)
    tp.record([=, dlogits = std::move(dlogits)] {
      const float s = y->grad()[0];
      float* dl = logits->grad();
      for (int64_t i = 0; i < N * V; ++i) dl[i] += s * dlogits[i];
    });
  return y;
}

T weighted_sum(Tape& tp, T x, const std::vector<float>& w) {
  check(static_cast<int64_t>(w.size()) == x->size(), "weighted_sum", "size mismatch");
  T y = tp.make(1, 1, x->requires_grad);
  double s = 0;
  for (int64_t i = 0; i < x->size(); ++i) s += static_cast<double>(x->v[i]) * w[i];
  y->v[0] = static_cast<float>(s);
  if (y->requires_grad)
    tp.record([=] {
      const float d = y->grad()[0];
      float* dx = x->grad();
      for (int64_t i = 0; i < x->size(); ++i) dx[i] += d * w[i];
    });
  return y;
}

}  // namespace attnlab::nn
