#include "attnlab/nadaraya_watson.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attnlab/error.hpp"

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
                     int64_t Nq, int64_t Nk, int64_t D, int64_t Dv, Kernel kernel, double bandwidth,
                     float* out, float* weights, ThreadPool* pool) {
  require(std::isfinite(bandwidth) && bandwidth > 0.0, [&] {
    return "bandwidth: expected a finite number > 0, got " + std::to_string(bandwidth);
  });
  require(batch >= 0 && Nq >= 0 && Nk >= 0 && D >= 1 && Dv >= 1, [&] {
    return "nadarayaWatson: expected non-negative counts and positive feature sizes, got batch=" +
           std::to_string(batch) + " Nq=" + std::to_string(Nq) + " Nk=" + std::to_string(Nk) +
           " D=" + std::to_string(D) + " Dv=" + std::to_string(Dv);
  });
  // Double precision throughout: with a small bandwidth the Gaussian's exponents reach the
  // thousands, where float rounding of u would visibly move the weights, and compact kernels'
  // support boundary (u == 1) should not depend on rounding.
  parallel_for(pool, batch * Nq, [&](int64_t r) {
    const int64_t b = r / Nq;
    const float* q = queries + r * D;
    const float* kb = keys + b * Nk * D;
    const float* vb = values + b * Nk * Dv;
    std::vector<double> w(static_cast<size_t>(Nk));
    double d2min = std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < Nk; ++j) {
      double d2 = 0.0;
      for (int64_t c = 0; c < D; ++c) {
        const double diff = static_cast<double>(q[c]) - kb[j * D + c];
        d2 += diff * diff;
      }
      w[j] = d2;
      d2min = std::min(d2min, d2);
    }
    for (int64_t j = 0; j < Nk; ++j) {
      if (kernel == Kernel::Gaussian) {
        // exp(-(u^2 - u_min^2) / 2): a softmax of -u^2/2 shifted by its max, so the nearest key
        // keeps weight exp(0) however small h is. Dividing by h twice avoids h*h underflowing.
        w[j] = std::exp(-0.5 * ((w[j] - d2min) / bandwidth) / bandwidth);
      } else {
        w[j] = kernel_value(kernel, std::sqrt(w[j]) / bandwidth);
      }
    }
    double sum = 0.0;
    for (double x : w) sum += x;
    // sum == 0: no key in a compact kernel's support; the weights and the output stay zero.
    const double inv = sum > 0.0 ? 1.0 / sum : 0.0;
    std::vector<double> acc(static_cast<size_t>(Dv), 0.0);
    for (int64_t j = 0; j < Nk; ++j) {
      w[j] *= inv;
      if (w[j] != 0.0)
        for (int64_t c = 0; c < Dv; ++c) acc[c] += w[j] * vb[j * Dv + c];
    }
    for (int64_t c = 0; c < Dv; ++c) out[r * Dv + c] = static_cast<float>(acc[c]);
    if (weights)
      for (int64_t j = 0; j < Nk; ++j) weights[r * Nk + j] = static_cast<float>(w[j]);
  });
}

}  // namespace attnlab
