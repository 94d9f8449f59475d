// Kernels against the scalar reference and std::exp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "kernels.hpp"
#include "reference.hpp"

namespace k = attnlab::kernels;

TEST(Kernels, ExpApproxRelativeErrorOnSoftmaxRange) {
  // Softmax exponentiates x - max <= 0; sample [-87, 0] densely plus a few positives.
  double worst = 0.0;
  for (int i = 0; i <= 2000000; ++i) {
    const float x = -87.0f + 88.0f * static_cast<float>(i) / 2000000.0f;
    const double exact = std::exp(static_cast<double>(x));
    const double rel = std::abs(k::exp_approx(x) - exact) / exact;
    worst = std::max(worst, rel);
  }
  EXPECT_LE(worst, 2e-7);
}

TEST(Kernels, ExpApproxLimits) {
  EXPECT_EQ(k::exp_approx(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(k::exp_approx(-1000.0f), 0.0f);
  EXPECT_EQ(k::exp_approx(0.0f), 1.0f);
  EXPECT_TRUE(std::isinf(k::exp_approx(1000.0f)));
}

TEST(Kernels, DispatchedMatchScalar) {
  for (int n : {0, 1, 3, 4, 15, 16, 17, 64, 100}) {
    auto a = ref::random(n, 1), b = ref::random(n, 2);
    EXPECT_NEAR(k::dot(a.data(), b.data(), n), k::scalar::dot(a.data(), b.data(), n), 1e-5);
    EXPECT_NEAR(k::dot(a.data(), b.data(), n), ref::dot(a.data(), b.data(), n), 1e-5);
    auto y1 = b, y2 = b;
    k::axpy(0.5f, a.data(), y1.data(), n);
    k::scalar::axpy(0.5f, a.data(), y2.data(), n);
    EXPECT_EQ(y1, y2);
    EXPECT_EQ(k::max(a.data(), n), k::scalar::max(a.data(), n));
    auto e1 = a, e2 = a;
    const float s1 = k::exp_shift_sum(e1.data(), 0.25f, n);
    const float s2 = k::scalar::exp_shift_sum(e2.data(), 0.25f, n);
    EXPECT_NEAR(s1, s2, 1e-5f * std::max(1.0f, s2));
    for (int i = 0; i < n; ++i) EXPECT_EQ(e1[i], e2[i]);
  }
}
