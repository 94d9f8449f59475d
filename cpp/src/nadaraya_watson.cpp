#include "attnlab/nadaraya_watson.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/softmax.hpp"
#include "kernels.hpp"

namespace attnlab {

Kernel parse_kernel(const std::string& name) {
  if (name == "gaussian") return Kernel::Gaussian;
  if (name == "boxcar") return Kernel::Boxcar;
  if (name == "epanechnikov") return Kernel::Epanechnikov;
  if (name == "triangular") return Kernel::Triangular;
  throw Error(
      "kernel: expected one of 'gaussian', 'boxcar', 'epanechnikov', 'triangular', got '" + name +
      "'");
}

const char* kernel_name(Kernel k) {
  switch (k) {
    case Kernel::Gaussian: return "gaussian";
    case Kernel::Boxcar: return "boxcar";
    case Kernel::Epanechnikov: return "epanechnikov";
    case Kernel::Triangular: return "triangular";
  }
  return "?";
}

double kernel_value(Kernel k, double u) {
  switch (k) {
    case Kernel::Gaussian: return std::exp(-0.5 * u * u);
    case Kernel::Boxcar: return u <= 1.0 ? 1.0 : 0.0;
    case Kernel::Epanechnikov: return u < 1.0 ? 1.0 - u * u : 0.0;
    case Kernel::Triangular: return u < 1.0 ? 1.0 - u : 0.0;
  }
  return 0.0;
}

void nadaraya_watson(const float* queries, const float* keys, const float* values, int64_t batch,
                     int64_t Nq, int64_t Nk, int64_t D, int64_t Dv, Kernel kernel, float bandwidth,
                     float* out, float* weights, ThreadPool* pool) {
  require(std::isfinite(bandwidth) && bandwidth > 0.0f, [&] {
    return "bandwidth: expected a finite number > 0, got " + std::to_string(bandwidth);
  });
  const float inv_h = 1.0f / bandwidth;
  parallel_for(pool, batch * Nq, [&](int64_t r) {
    const int64_t b = r / Nq;
    const float* q = queries + r * D;
    const float* kb = keys + b * Nk * D;
    const float* vb = values + b * Nk * Dv;
    std::vector<float> w(static_cast<size_t>(Nk));
    for (int64_t j = 0; j < Nk; ++j) {
      float d2 = 0.0f;
      for (int64_t c = 0; c < D; ++c) {
        const float diff = q[c] - kb[j * D + c];
        d2 += diff * diff;
      }
      const float u = std::sqrt(d2) * inv_h;
      // Gaussian weights as a softmax of -u^2/2: stays finite when every exp would underflow.
      w[j] = kernel == Kernel::Gaussian ? -0.5f * u * u
                                        : static_cast<float>(kernel_value(kernel, u));
    }
    if (kernel == Kernel::Gaussian) {
      softmax_row(w.data(), Nk);
    } else {
      double sum = 0.0;
      for (float x : w) sum += x;
      if (sum > 0.0) {
        kernels::scale(w.data(), static_cast<float>(1.0 / sum), Nk);
      }  // else: no key in the kernel's support; w is all zeros and so is the output.
    }
    float* o = out + r * Dv;
    std::memset(o, 0, sizeof(float) * static_cast<size_t>(Dv));
    for (int64_t j = 0; j < Nk; ++j) {
      if (w[j] != 0.0f) kernels::axpy(w[j], vb + j * Dv, o, Dv);
    }
    if (weights) std::memcpy(weights + r * Nk, w.data(), sizeof(float) * static_cast<size_t>(Nk));
  });
}

}  // namespace attnlab
