#include "attnlab/nn/ops.hpp"

#include <algorithm>

#include "kernels.hpp"
#include "op_util.hpp"

namespace attnlab::nn {

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
    // The gates through the exp kernel (kernels::sigmoid_sum, tanh_inplace): every build alike.
    kernels::sigmoid_sum(pi, ph, s, 2 * H);
    for (int64_t j = 0; j < H; ++j) s[2 * H + j] = pi[2 * H + j] + s[j] * ph[2 * H + j];
    kernels::tanh_inplace(s + 2 * H, H);
    for (int64_t j = 0; j < H; ++j) out[j] = (1.f - s[H + j]) * s[2 * H + j] + s[H + j] * hp[j];
  }
  if (y->requires_grad) {
    tp.record([=, rzn = std::move(rzn)] {
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
        const float* s = rzn.data() + b * 3 * H;
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

}  // namespace attnlab::nn
