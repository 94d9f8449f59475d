// Binds the unqualified kernels to the best implementation compiled into this build.
#include "kernels.hpp"

namespace attnlab::kernels {

#if defined(__wasm_simd128__)
namespace isa = simd128;
const char* active_isa() { return "simd128"; }
#else
namespace isa = scalar;
const char* active_isa() { return "scalar"; }
#endif

float dot(const float* a, const float* b, int64_t n) { return isa::dot(a, b, n); }
void axpy(float alpha, const float* x, float* y, int64_t n) { isa::axpy(alpha, x, y, n); }
void scale(float* x, float alpha, int64_t n) { isa::scale(x, alpha, n); }
float max(const float* x, int64_t n) { return isa::max(x, n); }
float exp_shift_sum(float* x, float shift, int64_t n) { return isa::exp_shift_sum(x, shift, n); }
float exp_approx(float x) { return isa::exp_approx(x); }

}  // namespace attnlab::kernels
