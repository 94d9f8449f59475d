// Nadaraya-Watson kernel regression against the float64 formula: every kernel, D = 1 and 3,
// Dv = 1 and 2, tiny bandwidths, queries outside a compact kernel's support, the boxcar boundary,
// bad bandwidths and kernel names.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/nadaraya_watson.hpp"
#include "attnlab/thread_pool.hpp"
#include "check.hpp"
#include "reference.hpp"

using attnlab::Kernel;

namespace attnlab {
void PrintTo(Kernel k, std::ostream* os) { *os << kernel_name(k); }
}  // namespace attnlab

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

ref::Kern RefKernel(Kernel k) {
  switch (k) {
    case Kernel::Gaussian: return ref::Kern::Gaussian;
    case Kernel::Boxcar: return ref::Kern::Boxcar;
    case Kernel::Epanechnikov: return ref::Kern::Epanechnikov;
    case Kernel::Triangular: return ref::Kern::Triangular;
  }
  return ref::Kern::Gaussian;
}

struct Nw {
  int64_t batch, Nq, Nk, D, Dv;
  std::vector<float> q, k, v;
  std::vector<float> out, weights;

  void run(Kernel kern, double h, attnlab::ThreadPool* pool = nullptr, bool with_weights = true) {
    out.assign(static_cast<size_t>(batch * Nq * Dv), kNaN);
    weights.assign(with_weights ? static_cast<size_t>(batch * Nq * Nk) : 0, kNaN);
    attnlab::nadaraya_watson(q.data(), k.data(), v.data(), batch, Nq, Nk, D, Dv, kern, h,
                             out.data(), with_weights ? weights.data() : nullptr, pool);
  }
  void expect_reference(Kernel kern, double h) const {
    std::vector<double> want_out, want_w;
    ref::nadaraya_watson(q, k, v, batch, Nq, Nk, D, Dv, RefKernel(kern), h, want_out, want_w);
    EXPECT_TRUE(check::AllClose(out, want_out));
    EXPECT_TRUE(check::AllClose(weights, want_w));
    // Weight rows sum to 1, or are exactly zero (with a zero output) when the reference's are.
    for (int64_t r = 0; r < batch * Nq; ++r) {
      double s = 0.0, want_s = 0.0;
      for (int64_t j = 0; j < Nk; ++j) {
        s += weights[r * Nk + j];
        want_s += want_w[r * Nk + j];
      }
      if (want_s == 0.0) {
        EXPECT_TRUE(check::AllZero(weights.data() + r * Nk, Nk)) << "row " << r;
        EXPECT_TRUE(check::AllZero(out.data() + r * Dv, Dv)) << "row " << r;
      } else {
        EXPECT_NEAR(s, 1.0, 1e-5) << "row " << r;
      }
    }
  }
};

Nw RandomNw(int64_t D, int64_t Dv, uint32_t seed, int64_t batch = 2, int64_t Nq = 6,
            int64_t Nk = 9) {
  Nw n{batch, Nq, Nk, D, Dv, {}, {}, {}, {}, {}};
  n.q = ref::random(static_cast<size_t>(batch * Nq * D), seed, -1, 1);
  n.k = ref::random(static_cast<size_t>(batch * Nk * D), seed + 1, -1, 1);
  n.v = ref::random(static_cast<size_t>(batch * Nk * Dv), seed + 2, -3, 3);
  return n;
}

class NadarayaWatsonByKernel
    : public ::testing::TestWithParam<std::tuple<Kernel, int64_t, int64_t>> {};

std::string ParamName(
    const ::testing::TestParamInfo<std::tuple<Kernel, int64_t, int64_t>>& info) {
  return std::string(attnlab::kernel_name(std::get<0>(info.param))) + "_D" +
         std::to_string(std::get<1>(info.param)) + "_Dv" + std::to_string(std::get<2>(info.param));
}

const Kernel kAllKernels[] = {Kernel::Gaussian, Kernel::Boxcar, Kernel::Epanechnikov,
                              Kernel::Triangular};

}  // namespace

TEST_P(NadarayaWatsonByKernel, MatchesFormula) {
  const auto [kern, D, Dv] = GetParam();
  // Wide bandwidth (every key in support) and narrow (some rows without support).
  for (float h : {1.7f, 0.6f, 0.25f}) {
    SCOPED_TRACE(::testing::Message() << "bandwidth " << h);
    Nw n = RandomNw(D, Dv, 10 + static_cast<uint32_t>(D * 10 + Dv));
    n.run(kern, h);
    n.expect_reference(kern, h);
    // Without weights, the same output.
    const std::vector<float> out = n.out;
    n.run(kern, h, nullptr, false);
    EXPECT_TRUE(check::BitwiseEqual(n.out, out));
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, NadarayaWatsonByKernel,
                         ::testing::Combine(::testing::ValuesIn(kAllKernels),
                                            ::testing::Values<int64_t>(1, 3),
                                            ::testing::Values<int64_t>(1, 2)),
                         ParamName);

TEST(NadarayaWatson, KernelValues) {
  EXPECT_DOUBLE_EQ(attnlab::kernel_value(Kernel::Gaussian, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(attnlab::kernel_value(Kernel::Gaussian, 2.0), std::exp(-2.0));
  EXPECT_DOUBLE_EQ(attnlab::kernel_value(Kernel::Boxcar, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(attnlab::kernel_value(Kernel::Boxcar, 1.0), 1.0);
  EXPECT_DOUBLE_EQ(attnlab::kernel_value(Kernel::Boxcar, std::nextafter(1.0, 2.0)), 0.0);
  EXPECT_DOUBLE_EQ(attnlab::kernel_value(Kernel::Epanechnikov, 0.5), 0.75);
  EXPECT_DOUBLE_EQ(attnlab::kernel_value(Kernel::Epanechnikov, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(attnlab::kernel_value(Kernel::Epanechnikov, 3.0), 0.0);
  EXPECT_DOUBLE_EQ(attnlab::kernel_value(Kernel::Triangular, 0.25), 0.75);
  EXPECT_DOUBLE_EQ(attnlab::kernel_value(Kernel::Triangular, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(attnlab::kernel_value(Kernel::Triangular, 1.5), 0.0);
  for (double u : {0.0, 0.1, 0.5, 0.99, 1.0, 1.3, 4.0})
    for (Kernel k : kAllKernels)
      EXPECT_DOUBLE_EQ(attnlab::kernel_value(k, u), ref::kernel(RefKernel(k), u))
          << attnlab::kernel_name(k) << " u=" << u;
}

TEST(NadarayaWatson, TinyBandwidthGaussianIsNearestNeighbour) {
  // Keys on a grid 0.1 apart, queries between them but clearly nearer one key. With h = 1e-3
  // every exp(-u^2/2) underflows; the weights must still be finite and pick the nearest key.
  for (int64_t D : {1, 3}) {
    SCOPED_TRACE("D=" + std::to_string(D));
    Nw n{2, 4, 7, D, 2, {}, {}, {}, {}, {}};
    n.k.resize(static_cast<size_t>(2 * 7 * D));
    n.q.resize(static_cast<size_t>(2 * 4 * D));
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t j = 0; j < 7; ++j)
        for (int64_t c = 0; c < D; ++c) n.k[(b * 7 + j) * D + c] = 0.1f * j * (c + 1) - 0.3f * b;
    const int64_t nearest[2][4] = {{0, 3, 6, 2}, {5, 1, 4, 0}};
    const float offset[4] = {0.02f, -0.03f, 0.04f, -0.01f};
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < 4; ++i)
        for (int64_t c = 0; c < D; ++c)
          n.q[(b * 4 + i) * D + c] = n.k[(b * 7 + nearest[b][i]) * D + c] + offset[i];
    n.v = ref::random(static_cast<size_t>(2 * 7 * 2), 5, -3, 3);
    n.run(Kernel::Gaussian, 1e-3f);
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < 4; ++i) {
        const int64_t r = b * 4 + i, jn = nearest[b][i];
        for (int64_t j = 0; j < 7; ++j)
          EXPECT_EQ(n.weights[r * 7 + j], j == jn ? 1.0f : 0.0f) << "b=" << b << " i=" << i << " j=" << j;
        for (int64_t c = 0; c < 2; ++c)
          EXPECT_NEAR(n.out[r * 2 + c], n.v[(b * 7 + jn) * 2 + c], 1e-6);
      }
    n.expect_reference(Kernel::Gaussian, 1e-3f);
  }
}

TEST(NadarayaWatson, ExtremelySmallBandwidthGaussianIsStillNearestNeighbour) {
  // Any finite bandwidth > 0 is accepted (a double, as JavaScript numbers are), so the promise
  // "finite even when every exp(-u^2/2) would underflow" must hold down to the smallest one:
  // u^2 / 2 overflows double for h below ~1e-154 times the distance, for every key at once.
  Nw n{1, 3, 4, 1, 1, {}, {}, {}, {}, {}};
  n.k = {0.0f, 0.25f, 0.5f, 0.75f};
  n.v = {1.0f, 2.0f, 3.0f, 4.0f};
  n.q = {0.3f, 0.7f, 0.5f};  // nearest: key 1, key 3, key 2 (an exact match)
  const std::vector<float> want_w{0, 1, 0, 0,  //
                                  0, 0, 0, 1,  //
                                  0, 0, 1, 0};
  const std::vector<float> want_out{2.0f, 4.0f, 3.0f};
  for (double h : {1e-30, 1e-40, 1e-150, 1e-200, std::numeric_limits<double>::denorm_min()}) {
    SCOPED_TRACE(::testing::Message() << "bandwidth " << h);
    n.run(Kernel::Gaussian, h);
    EXPECT_EQ(n.weights, want_w);
    EXPECT_EQ(n.out, want_out);
  }
}

TEST(NadarayaWatson, NoKeyInSupportGivesZeros) {
  // Keys in [0, 1]; query rows 1 and 3 lie far away. Compact kernels give zero weights there.
  for (Kernel kern : {Kernel::Boxcar, Kernel::Epanechnikov, Kernel::Triangular}) {
    for (int64_t D : {1, 3}) {
      SCOPED_TRACE(std::string(attnlab::kernel_name(kern)) + " D=" + std::to_string(D));
      Nw n = RandomNw(D, 2, 200, 2, 4, 5);
      for (float& x : n.k) x = 0.5f + 0.5f * x;
      for (float& x : n.q) x = 0.5f + 0.5f * x;
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t c = 0; c < D; ++c) {
          n.q[(b * 4 + 1) * D + c] = 5.0f;
          n.q[(b * 4 + 3) * D + c] = -4.0f;
        }
      n.run(kern, 0.8f);
      n.expect_reference(kern, 0.8f);
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t i : {1, 3}) {
          EXPECT_TRUE(check::AllZero(n.weights.data() + (b * 4 + i) * 5, 5));
          EXPECT_TRUE(check::AllZero(n.out.data() + (b * 4 + i) * 2, 2));
        }
    }
  }
}

TEST(NadarayaWatson, BoxcarBoundaryIsIncluded) {
  // D = 1: keys at distance exactly h (both sides), just beyond, and far.
  {
    Nw n{1, 1, 5, 1, 1, {}, {}, {}, {}, {}};
    n.q = {0.0f};
    n.k = {0.5f, -0.5f, std::nextafter(0.5f, 1.0f), 0.25f, 2.0f};
    n.v = {1.0f, 2.0f, 100.0f, 3.0f, 200.0f};
    n.run(Kernel::Boxcar, 0.5f);
    const float third = 1.0f / 3.0f;
    EXPECT_FLOAT_EQ(n.weights[0], third);
    EXPECT_FLOAT_EQ(n.weights[1], third);
    EXPECT_EQ(n.weights[2], 0.0f);
    EXPECT_FLOAT_EQ(n.weights[3], third);
    EXPECT_EQ(n.weights[4], 0.0f);
    EXPECT_NEAR(n.out[0], 2.0, 1e-5);
    n.expect_reference(Kernel::Boxcar, 0.5f);
  }
  // D = 3: distance |(0.375, 0.5, 0)| = 0.625 exactly, with h = 0.625 (1/h is inexact in float).
  {
    Nw n{1, 1, 3, 3, 2, {}, {}, {}, {}, {}};
    n.q = {0.0f, 0.0f, 0.0f};
    n.k = {0.375f, 0.5f, 0.0f, 0.0f, -0.5f, 0.375f, 0.375f, 0.5f, 0.01f};
    n.v = {1.0f, -1.0f, 3.0f, 5.0f, 50.0f, 50.0f};
    n.run(Kernel::Boxcar, 0.625f);
    EXPECT_FLOAT_EQ(n.weights[0], 0.5f);
    EXPECT_FLOAT_EQ(n.weights[1], 0.5f);
    EXPECT_EQ(n.weights[2], 0.0f);
    n.expect_reference(Kernel::Boxcar, 0.625f);
  }
  // Bandwidths whose reciprocal rounds: a key at distance exactly h is always inside.
  for (float h : {0.3f, 0.1f, 0.7f, 1.3f, 3.0f, 0.45f, 41.0f, 0.049f}) {
    Nw n{1, 1, 2, 1, 1, {}, {}, {}, {}, {}};
    n.q = {0.0f};
    n.k = {h, 10.0f * h};
    n.v = {7.0f, 9.0f};
    n.run(Kernel::Boxcar, h);
    EXPECT_EQ(n.weights[0], 1.0f) << "h=" << h;
    EXPECT_EQ(n.out[0], 7.0f) << "h=" << h;
  }
}

TEST(NadarayaWatson, BadBandwidthThrows) {
  Nw n = RandomNw(1, 1, 300);
  for (double h : {0.0, -0.0, -1.0, -std::numeric_limits<double>::denorm_min(),
                   std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                   -std::numeric_limits<double>::infinity()})
    for (Kernel kern : kAllKernels)
      EXPECT_TRUE(check::ThrowsError([&] { n.run(kern, h); }, "bandwidth"))
          << "h=" << h << " " << attnlab::kernel_name(kern);
}

TEST(NadarayaWatson, ParseKernel) {
  for (Kernel k : kAllKernels) EXPECT_EQ(attnlab::parse_kernel(attnlab::kernel_name(k)), k);
  EXPECT_EQ(attnlab::parse_kernel("gaussian"), Kernel::Gaussian);
  EXPECT_EQ(attnlab::parse_kernel("boxcar"), Kernel::Boxcar);
  EXPECT_EQ(attnlab::parse_kernel("epanechnikov"), Kernel::Epanechnikov);
  EXPECT_EQ(attnlab::parse_kernel("triangular"), Kernel::Triangular);
  for (const char* bad : {"Gaussian", "", "epanechikov", "box", "gaussian "})
    EXPECT_TRUE(check::ThrowsError([&] { attnlab::parse_kernel(bad); }, "kernel")) << bad;
}

TEST(NadarayaWatson, NoKeys) {
  for (Kernel kern : kAllKernels) {
    Nw n{2, 3, 0, 2, 2, ref::random(12, 1), {}, {}, {}, {}};
    n.run(kern, 1.0f);
    EXPECT_TRUE(check::AllZero(n.out.data(), n.out.size())) << attnlab::kernel_name(kern);
  }
}

TEST(NadarayaWatson, ThreadCountInvariance) {
  for (Kernel kern : kAllKernels) {
    SCOPED_TRACE(attnlab::kernel_name(kern));
    Nw n = RandomNw(3, 2, 400, 3, 21, 17);
    n.run(kern, 0.7f);
    const std::vector<float> out = n.out, w = n.weights;
    for (int threads : {1, 2, 3}) {
      attnlab::ThreadPool pool(threads);
      n.run(kern, 0.7f, &pool);
      EXPECT_TRUE(check::BitwiseEqual(n.out, out)) << threads;
      EXPECT_TRUE(check::BitwiseEqual(n.weights, w)) << threads;
    }
  }
}
