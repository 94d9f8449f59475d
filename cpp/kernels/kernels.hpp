// The hot loops behind one small interface (ggml-style): a scalar reference in namespace
// `scalar`, a WebAssembly SIMD128 version in `simd128` (only when compiled with -msimd128), and
// the unqualified names pick the best one this build has. Every kernel is tested against its
// scalar twin.
#pragma once
#include <cstdint>

namespace attnlab::kernels {

#define ATTNLAB_KERNEL_DECLS                                                        \
  /* sum_i a[i] * b[i] */                                                           \
  float dot(const float* a, const float* b, int64_t n);                             \
  /* y[i] += alpha * x[i] */                                                        \
  void axpy(float alpha, const float* x, float* y, int64_t n);                      \
  /* x[i] *= alpha */                                                               \
  void scale(float* x, float alpha, int64_t n);                                     \
  /* largest x[i]; -inf for n == 0 */                                               \
  float max(const float* x, int64_t n);                                             \
  /* x[i] = exp(x[i] - shift); returns the sum. exp(-inf) is 0. */                  \
  float exp_shift_sum(float* x, float shift, int64_t n);                            \
  /* exp(x) by range reduction and a degree-6 polynomial; rel. error < 2e-7 */      \
  float exp_approx(float x);

namespace scalar {
ATTNLAB_KERNEL_DECLS
}
#if defined(__wasm_simd128__)
namespace simd128 {
ATTNLAB_KERNEL_DECLS
}
#endif
ATTNLAB_KERNEL_DECLS

#undef ATTNLAB_KERNEL_DECLS

// Which implementation the unqualified kernels use in this build: "simd128" or "scalar".
const char* active_isa();

}  // namespace attnlab::kernels
