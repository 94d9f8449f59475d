// Kernels against their scalar twins (the unqualified names are the SIMD128 ones in the
// WebAssembly test build, the scalar ones natively), std::exp and float64 products.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "kernels.hpp"
#include "reference.hpp"

namespace k = attnlab::kernels;

TEST(Kernels, ReportsItsIsa) {
#if defined(__wasm_simd128__)
  EXPECT_STREQ(k::active_isa(), "simd128");
#else
  EXPECT_STREQ(k::active_isa(), "scalar");
#endif
}

TEST(Kernels, ExpApproxRelativeErrorOnItsRange) {
  // Softmax exponentiates x - max <= 0, tanh 2x in [-30, 30]: sample [-87, 30] densely. The
  // bound grows with |x| (x log2 e rounded to float): 1e-7 + 7.3e-8 |x|.
  double worst = 0.0;
  for (int i = 0; i <= 2000000; ++i) {
    const float x = -87.0f + 117.0f * static_cast<float>(i) / 2000000.0f;
    const double exact = std::exp(static_cast<double>(x));
    const double rel = std::abs(k::exp_approx(x) - exact) / exact;
    worst = std::max(worst, rel - 7.3e-8 * std::abs(x));
  }
  EXPECT_LE(worst, 1e-7);
}

TEST(Kernels, ExpApproxLimits) {
  EXPECT_EQ(k::exp_approx(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(k::exp_approx(-1000.0f), 0.0f);
  EXPECT_EQ(k::exp_approx(0.0f), 1.0f);
  EXPECT_TRUE(std::isinf(k::exp_approx(1000.0f)));
  EXPECT_TRUE(std::isnan(k::exp_approx(std::numeric_limits<float>::quiet_NaN())));
}

TEST(Kernels, Exp2ApproxRelativeErrorOnSoftmaxRange) {
  // Attention's base-2 softmax takes 2^y for y = x - max <= 0; below -126 results are denormal
  // or 0. The float64 reference is std::exp2.
  double worst = 0.0;
  for (int i = 0; i <= 2000000; ++i) {
    const float y = -126.0f * static_cast<float>(i) / 2000000.0f;
    const double exact = std::exp2(static_cast<double>(y));
    worst = std::max(worst, std::abs(k::exp2_approx(y) - exact) / exact);
  }
  // And [-1, 0] in steps of 2^-22, where the reduced argument sweeps its whole range finely.
  for (int i = 0; i <= (1 << 22); ++i) {
    const float y = -static_cast<float>(i) / static_cast<float>(1 << 22);
    const double exact = std::exp2(static_cast<double>(y));
    worst = std::max(worst, std::abs(k::exp2_approx(y) - exact) / exact);
  }
  EXPECT_LE(worst, 1e-7);
}

TEST(Kernels, Exp2ApproxLimits) {
  const float ninf = -std::numeric_limits<float>::infinity();
  EXPECT_EQ(k::exp2_approx(ninf), 0.0f);
  EXPECT_EQ(k::exp2_approx(-1000.0f), 0.0f);
  EXPECT_EQ(k::exp2_approx(-127.0f), 0.0f);
  EXPECT_EQ(k::exp2_approx(0.0f), 1.0f);
  EXPECT_EQ(k::exp2_approx(-1.0f), 0.5f);
  EXPECT_EQ(k::exp2_approx(10.0f), 1024.0f);  // exp_approx passes y > 0 (tanh)
  EXPECT_EQ(k::exp2_approx(-126.0f), std::numeric_limits<float>::min());
  EXPECT_TRUE(std::isnan(k::exp2_approx(std::numeric_limits<float>::quiet_NaN())));
}

namespace {
using ShiftSum = float (*)(float*, float, int64_t);

// x - shift over [lo, 0] in 4099 steps (tails past the 16-wide SIMD steps), -inf at index 7 and
// `edge` at index 9, through a shift-sum kernel and its scalar twin (shift 0): the values and the
// sums must match bit for bit (the scalar twin sums in the SIMD order), also on prefixes that end
// in 4-wide steps and a tail. Returns the outputs (the kernel's) and the two sums.
struct ShiftSumTwins {
  std::vector<float> x, out;
  float sum, scalar_sum;
};
ShiftSumTwins run_shift_sum_twins(ShiftSum kernel, ShiftSum scalar, float lo, float edge) {
  std::vector<float> x(4099);
  for (size_t i = 0; i < x.size(); ++i) x[i] = lo * static_cast<float>(i) / 4096.0f;
  x[7] = -std::numeric_limits<float>::infinity();
  x[9] = edge;
  auto a = x, b = x;
  const float sa = kernel(a.data(), 0.0f, static_cast<int64_t>(a.size()));
  const float sb = scalar(b.data(), 0.0f, static_cast<int64_t>(b.size()));
  EXPECT_EQ(a, b);
  EXPECT_EQ(sa, sb);
  for (int64_t n : {4094, 45, 21, 3}) {
    auto c = x, d = x;
    EXPECT_EQ(kernel(c.data(), 0.0f, n), scalar(d.data(), 0.0f, n)) << "n " << n;
    EXPECT_EQ(c, d) << "n " << n;
  }
  return {x, a, sa, sb};
}
}  // namespace

TEST(Kernels, Exp2ShiftSumMatchesScalarBitForBit) {
  // Every x - shift in [-130, 0], through the denormal edge below -126 and -inf, and a NaN.
  const auto [x, a, sa, sb] = run_shift_sum_twins(k::exp2_shift_sum, k::scalar::exp2_shift_sum, -130.0f, -126.3f);
  double exact_sum = 0.0;
  for (float v : x) exact_sum += std::exp2(static_cast<double>(v));
  // Both sum in float (16 partial sums): within 1e-5 of float64.
  EXPECT_NEAR(sa, exact_sum, 1e-5 * exact_sum);
  EXPECT_NEAR(sb, exact_sum, 1e-5 * exact_sum);
  EXPECT_EQ(a[7], 0.0f);
  EXPECT_GT(a[9], 0.0f);  // 2^-126.3: a denormal, not flushed
  auto c = x;
  c[100] = std::numeric_limits<float>::quiet_NaN();
  auto d = c;
  k::exp2_shift_sum(c.data(), 0.0f, static_cast<int64_t>(c.size()));
  k::scalar::exp2_shift_sum(d.data(), 0.0f, static_cast<int64_t>(d.size()));
  EXPECT_TRUE(std::isnan(c[100]) && std::isnan(d[100]));
}

TEST(Kernels, ExpShiftSumMatchesScalarBitForBitOnSoftmaxRange) {
  // Every x - shift in [-90, 0], including the underflow edge and -inf.
  const auto [x, a, sa, sb] = run_shift_sum_twins(k::exp_shift_sum, k::scalar::exp_shift_sum, -90.0f, -87.3365f);
  // Within float rounding of the exact sum of the values.
  double exact_sum = 0.0;
  for (float v : a) exact_sum += v;
  EXPECT_NEAR(sa, exact_sum, 2e-6 * exact_sum);
  EXPECT_NEAR(sb, exact_sum, 2e-6 * exact_sum);
  for (size_t i = 0; i < x.size(); ++i) {
    const double exact = std::exp(static_cast<double>(x[i]));
    // exp_approx's bound, which grows with |x|.
    if (exact > 1e-37) EXPECT_NEAR(a[i], exact, (1e-7 + 7.3e-8 * std::abs(x[i])) * exact) << x[i];
  }
  EXPECT_EQ(a[7], 0.0f);
}

// exp_shift_total is exp_shift_sum's sum without the stores: the same float, on each ISA and its
// twin, and x untouched.
TEST(Kernels, ExpShiftTotalIsExpShiftSumsSumBitForBit) {
  std::vector<float> x(3001);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -30.0f * static_cast<float>((i * 7919) % 3001) / 3001.0f;
  x[5] = -std::numeric_limits<float>::infinity();
  x[11] = -87.5f;  // exp underflows to 0
  for (int64_t n : {3001, 3000, 47, 16, 5, 1, 0}) {
    const float shift = n > 2 ? 0.25f : 0.0f;
    auto a = x, b = x;
    const float total = k::exp_shift_total(x.data(), shift, n), scalar_total = k::scalar::exp_shift_total(x.data(), shift, n);
    EXPECT_EQ(total, k::exp_shift_sum(a.data(), shift, n)) << "n " << n;
    EXPECT_EQ(scalar_total, k::scalar::exp_shift_sum(b.data(), shift, n)) << "n " << n;
    EXPECT_EQ(total, scalar_total) << "n " << n;
  }
  auto y = x;
  k::exp_shift_total(y.data(), 0.0f, static_cast<int64_t>(y.size()));
  k::scalar::exp_shift_total(y.data(), 0.0f, static_cast<int64_t>(y.size()));
  EXPECT_EQ(y, x);
}

// max takes its twin's order: the same zero (+0 or -0) wins, NaN never does, on every length.
TEST(Kernels, MaxMatchesScalarOnZerosAndNaN) {
  std::vector<float> x(53);
  for (size_t i = 0; i < x.size(); ++i) x[i] = i % 3 == 0 ? -0.0f : i % 3 == 1 ? 0.0f : std::nanf("");
  x[0] = -1.0f;
  for (int64_t n = 1; n <= 53; ++n) {
    const float a = k::max(x.data(), n), b = k::scalar::max(x.data(), n);
    EXPECT_EQ(std::signbit(a), std::signbit(b)) << "n " << n;
    EXPECT_FALSE(std::isnan(a)) << "n " << n;
    EXPECT_EQ(a, n == 1 ? -1.0f : 0.0f) << "n " << n;
  }
}

TEST(Kernels, VectorKernelsMatchScalar) {
  for (int n : {0, 1, 3, 4, 15, 16, 17, 64, 100}) {
    auto a = ref::random(n, 1), b = ref::random(n, 2);
    EXPECT_NEAR(k::dot(a.data(), b.data(), n), k::scalar::dot(a.data(), b.data(), n), 1e-5);
    EXPECT_NEAR(k::dot(a.data(), b.data(), n), ref::dot(a.data(), b.data(), n), 1e-5);
    auto y1 = b, y2 = b;
    k::axpy(0.5f, a.data(), y1.data(), n);
    k::scalar::axpy(0.5f, a.data(), y2.data(), n);
    EXPECT_EQ(y1, y2);
    y1 = b, y2 = b;
    k::scale(y1.data(), 0.3f, n);
    k::scalar::scale(y2.data(), 0.3f, n);
    EXPECT_EQ(y1, y2);
    EXPECT_EQ(k::max(a.data(), n), k::scalar::max(a.data(), n));
    auto e1 = a, e2 = a;
    const float m = k::scalar::max(a.data(), n);
    const float s1 = k::exp_shift_sum(e1.data(), m, n);
    const float s2 = k::scalar::exp_shift_sum(e2.data(), m, n);
    EXPECT_NEAR(s1, s2, 1e-5f * std::max(1.0f, s2));
    EXPECT_EQ(e1, e2);
    e1 = a, e2 = a;
    const float t1 = k::exp2_shift_sum(e1.data(), m, n);
    const float t2 = k::scalar::exp2_shift_sum(e2.data(), m, n);
    EXPECT_NEAR(t1, t2, 1e-5f * std::max(1.0f, t2));
    EXPECT_EQ(e1, e2);
  }
}

TEST(Kernels, OnlineSoftmax4MatchesScalarAndFloat64) {
  // Two tiles of four rows, fed one after the other as the attention kernel does: row 0 ordinary,
  // row 1 with its max in the second tile (alpha < 1), row 2 fully masked in the first tile,
  // row 3 fully masked throughout. Widths include tails that are not a multiple of 4.
  const float ninf = -std::numeric_limits<float>::infinity();
  for (int w : {3, 8, 13, 64}) {
    const int ld = w + 5;
    std::vector<float> t1 = ref::random(4 * ld, 11), t2 = ref::random(4 * ld, 12);
    for (int j = 0; j < w; ++j) {
      t1[1 * ld + j] *= 4.0f, t2[1 * ld + j] = 6.0f + t2[1 * ld + j];
      t1[2 * ld + j] = ninf;
      t1[3 * ld + j] = ninf, t2[3 * ld + j] = ninf;
    }
    t2[1] = ninf;  // a masked key in a visible row
    float max1[4], sum1[4], alpha1[4], max2[4], sum2[4], alpha2[4];
    for (int r = 0; r < 4; ++r) max1[r] = max2[r] = ninf, sum1[r] = sum2[r] = 0.0f;
    std::vector<float> a1 = t1, a2 = t1, b1 = t2, b2 = t2;
    EXPECT_TRUE(k::online_softmax4(a1.data(), ld, w, max1, sum1, alpha1));
    EXPECT_TRUE(k::scalar::online_softmax4(a2.data(), ld, w, max2, sum2, alpha2));
    EXPECT_EQ(a1, a2);
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(max1[r], max2[r]);
      EXPECT_EQ(alpha1[r], alpha2[r]);
      EXPECT_NEAR(sum1[r], sum2[r], 1e-6f * sum2[r]);
    }
    EXPECT_EQ(alpha1[0], 0.0f);  // the first visible tile rescales nothing
    EXPECT_EQ(alpha1[2], 1.0f);  // nothing visible yet: rows stay empty, alpha neutral
    EXPECT_EQ(max1[2], ninf);
    EXPECT_EQ(sum1[2], 0.0f);
    for (int j = 0; j < w; ++j) EXPECT_EQ(a1[2 * ld + j], 0.0f);
    EXPECT_TRUE(k::online_softmax4(b1.data(), ld, w, max1, sum1, alpha1));
    EXPECT_TRUE(k::scalar::online_softmax4(b2.data(), ld, w, max2, sum2, alpha2));
    EXPECT_EQ(b1, b2);
    EXPECT_EQ(b1[1], 0.0f);
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(max1[r], max2[r]);
      EXPECT_EQ(alpha1[r], alpha2[r]);
      EXPECT_NEAR(sum1[r], sum2[r], 1e-6f * std::max(1.0f, sum2[r]));
    }
    // Against float64: after both tiles, each visible row's running max is its max over both
    // tiles and its running sum is sum_j 2^(x_j - max) over both (base 2).
    for (int r = 0; r < 3; ++r) {
      double m = -INFINITY;
      for (int j = 0; j < w; ++j) m = std::max({m, double(t1[r * ld + j]), double(t2[r * ld + j])});
      double sum = 0.0;
      for (int j = 0; j < w; ++j) sum += std::exp2(double(t1[r * ld + j]) - m) + std::exp2(double(t2[r * ld + j]) - m);
      EXPECT_EQ(max1[r], static_cast<float>(m)) << r;
      EXPECT_NEAR(sum1[r], sum, 1e-5 * sum) << r;
      // alpha1 rescales tile 1's sum from its own max to the new one.
      double m1 = -INFINITY;
      for (int j = 0; j < w; ++j) m1 = std::max(m1, double(t1[r * ld + j]));
      if (r != 2) EXPECT_NEAR(alpha1[r], std::exp2(m1 - m), 1e-6) << r;
    }
    EXPECT_EQ(max1[3], ninf);
    EXPECT_EQ(sum1[3], 0.0f);
    float m4[4] = {ninf, ninf, ninf, ninf}, s4[4] = {}, al[4];
    std::vector<float> all_masked(4 * ld, ninf);
    EXPECT_FALSE(k::online_softmax4(all_masked.data(), ld, w, m4, s4, al));
  }
}

// With rows < 4 (the attention kernel's groups of 6 end in two rows), the present rows come out
// exactly as in a call over four, and nothing past them is read into them or written.
TEST(Kernels, OnlineSoftmax4OnFewerRowsMatchesTheFourRowCall) {
  const float ninf = -std::numeric_limits<float>::infinity();
  const int ld = 24, w = 16;
  for (int rows : {1, 2, 3}) {
    std::vector<float> t1 = ref::random(4 * ld, 21), t2 = ref::random(4 * ld, 22);
    for (int j = 0; j < w; ++j) t2[j] += 5.0f;  // row 0's max moves in the second tile
    for (int j = 0; j < ld; ++j) t1[3 * ld + j] = 50.0f;  // a larger max in a row that may be absent
    float max4[4], sum4[4], al4[4], maxr[4], sumr[4], alr[4];
    float smax[4], ssum[4], sal[4];
    for (int r = 0; r < 4; ++r) max4[r] = maxr[r] = smax[r] = ninf, sum4[r] = sumr[r] = ssum[r] = 0.0f;
    for (int r = rows; r < 4; ++r) maxr[r] = smax[r] = 7.0f, sumr[r] = ssum[r] = 9.0f;  // must stay
    for (const auto* t : {&t1, &t2}) {
      std::vector<float> x4 = *t, xr = *t, xs = *t;
      EXPECT_TRUE(k::online_softmax4(x4.data(), ld, w, max4, sum4, al4));
      EXPECT_TRUE(k::online_softmax4(xr.data(), ld, w, maxr, sumr, alr, rows));
      EXPECT_TRUE(k::scalar::online_softmax4(xs.data(), ld, w, smax, ssum, sal, rows));
      for (int r = 0; r < rows; ++r) {
        EXPECT_EQ(maxr[r], max4[r]) << rows;
        EXPECT_EQ(sumr[r], sum4[r]) << rows;
        EXPECT_EQ(alr[r], al4[r]) << rows;
        EXPECT_EQ(smax[r], max4[r]) << rows;
        EXPECT_NEAR(ssum[r], sum4[r], 1e-6f * sum4[r]) << rows;
        for (int j = 0; j < w; ++j) EXPECT_EQ(xr[r * ld + j], x4[r * ld + j]);
      }
      for (int r = rows; r < 4; ++r) {
        EXPECT_EQ(maxr[r], 7.0f);
        EXPECT_EQ(sumr[r], 9.0f);
        EXPECT_EQ(smax[r], 7.0f);
        EXPECT_EQ(ssum[r], 9.0f);
        for (int j = 0; j < ld; ++j) EXPECT_EQ(xr[r * ld + j], (*t)[r * ld + j]);
      }
    }
  }
  float m[4] = {ninf, ninf, ninf, ninf}, sm[4] = {}, al[4];
  std::vector<float> masked(4 * ld, ninf);
  for (int j = 0; j < w; ++j) masked[2 * ld + j] = 1.0f;  // visible, but past the 2 rows asked for
  std::vector<float> masked2 = masked;  // each call turns the rows it takes into zeros
  EXPECT_FALSE(k::online_softmax4(masked.data(), ld, w, m, sm, al, 2));
  EXPECT_FALSE(k::scalar::online_softmax4(masked2.data(), ld, w, m, sm, al, 2));
}

TEST(Kernels, MaskBytesMatchesScalar) {
  for (int n : {0, 1, 4, 5, 31, 64}) {
    std::vector<uint8_t> m(n);
    for (int i = 0; i < n; ++i) m[i] = static_cast<uint8_t>((i * 7) % 3 == 0 ? 0 : i % 5 + 1);
    for (bool nonzero_blocks : {false, true}) {
      auto x1 = ref::random(n, 3), x2 = x1;
      k::mask_bytes(x1.data(), m.data(), nonzero_blocks, n);
      k::scalar::mask_bytes(x2.data(), m.data(), nonzero_blocks, n);
      EXPECT_EQ(x1, x2);
      for (int i = 0; i < n; ++i) EXPECT_EQ(std::isinf(x1[i]), (m[i] != 0) == nonzero_blocks);
    }
  }
}

TEST(Kernels, FindNonfiniteMatchesScalar) {
  const float bad[] = {std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity(),
                       -std::numeric_limits<float>::infinity()};
  for (int n : {0, 1, 15, 16, 17, 100}) {
    auto x = ref::random(n, 4);
    EXPECT_EQ(k::find_nonfinite(x.data(), n, false), -1);
    for (int at : {0, n / 2, n - 1}) {
      if (at < 0 || at >= n) continue;
      for (float v : bad) {
        auto y = x;
        y[at] = v;
        if (at + 1 < n) y[n - 1] = v;  // the first one counts
        for (bool neg_inf_ok : {false, true}) {
          const int64_t want = neg_inf_ok && v < 0 ? -1 : at;
          EXPECT_EQ(k::find_nonfinite(y.data(), n, neg_inf_ok), want);
          EXPECT_EQ(k::scalar::find_nonfinite(y.data(), n, neg_inf_ok), want);
        }
      }
    }
  }
}

TEST(Kernels, FindAboveMatchesScalar) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (int n : {0, 1, 15, 16, 17, 33, 100}) {
    const auto x = ref::random(n, 5);  // in [-1, 1)
    EXPECT_EQ(k::find_above(x.data(), n, 2.f), n);
    EXPECT_EQ(k::find_above(x.data(), n, -inf), 0);  // n == 0: none, so n
    for (int at : {0, n / 2, n - 1}) {
      if (at < 0 || at >= n) continue;
      for (float bar : {1.5f, nan}) {
        auto y = x;
        y[n - 1] = 3.f;  // a later one does not count
        y[at] = 2.f;
        const int64_t want = bar == bar ? at : n;  // nothing is above NaN
        EXPECT_EQ(k::find_above(y.data(), n, bar), want);
        EXPECT_EQ(k::scalar::find_above(y.data(), n, bar), want);
        y[at] = nan;  // NaN is never above
        const int64_t next = at == n - 1 || bar != bar ? n : n - 1;
        EXPECT_EQ(k::find_above(y.data(), n, bar), next);
        EXPECT_EQ(k::scalar::find_above(y.data(), n, bar), next);
      }
    }
  }
}

// Block maxima against the plain maximum of each block, and the twins bit for bit: signed zeros
// (which one wins depends on the order of the compares) and NaN anywhere in a block.
TEST(Kernels, BlockMax16MatchesScalar) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int n : {1, 15, 16, 17, 32, 47, 100}) {
    auto x = ref::random(n, 9);
    const int64_t blocks = (n + 15) / 16;
    std::vector<float> a(blocks), b(blocks);
    k::block_max16(x.data(), n, a.data());
    k::scalar::block_max16(x.data(), n, b.data());
    for (int64_t i = 0; i < blocks; ++i) {
      EXPECT_EQ(a[i], *std::max_element(x.begin() + 16 * i, x.begin() + std::min<int64_t>(16 * i + 16, n)));
      EXPECT_EQ(b[i], a[i]);
    }
    for (int at : {0, 5, n - 1}) {
      if (at < 0 || at >= n) continue;
      for (float v : {nan, 0.f, -0.f}) {
        auto y = x;
        for (float& e : y) e = e < 0 ? -0.f : 0.f;  // zeros of both signs
        y[at] = v;
        k::block_max16(y.data(), n, a.data());
        k::scalar::block_max16(y.data(), n, b.data());
        EXPECT_EQ(std::memcmp(a.data(), b.data(), sizeof(float) * blocks), 0) << "n " << n << ", at " << at << ", " << v;
      }
    }
  }
}

// A[i][k] = a[i * RS + k * CS] for both layouts the drivers use; G rows (gemm_4x8 or gemm_6x8).
template <int G, int64_t RS, int64_t CS>
void expect_gemm_matches(int64_t K) {
  for (int64_t n : {1, 5, 8}) {
    for (bool accumulate : {false, true}) {
      const int64_t ldb = 11, ldc = 13;
      const auto a = ref::random(G * RS + std::max<int64_t>(K, 1) * CS * G, 5);
      const auto b = ref::random(std::max<int64_t>(K, 1) * ldb, 6);
      const auto c0 = ref::random(G * ldc, 7);
      auto c1 = c0, c2 = c0;
      if constexpr (G == 6) {
        k::gemm_6x8<RS, CS>(K, a.data(), b.data(), ldb, c1.data(), ldc, n, accumulate);
        k::scalar::gemm_6x8<RS, CS>(K, a.data(), b.data(), ldb, c2.data(), ldc, n, accumulate);
      } else {
        k::gemm_4x8<RS, CS>(K, a.data(), b.data(), ldb, c1.data(), ldc, n, accumulate);
        k::scalar::gemm_4x8<RS, CS>(K, a.data(), b.data(), ldb, c2.data(), ldc, n, accumulate);
      }
      EXPECT_EQ(c1, c2) << "G=" << G << " K=" << K << " n=" << n;
      for (int i = 0; i < G; ++i)
        for (int64_t j = 0; j < ldc; ++j) {
          double want = j < n ? (accumulate ? c0[i * ldc + j] : 0.0) : c0[i * ldc + j];
          if (j < n)
            for (int64_t kk = 0; kk < K; ++kk)
              want += static_cast<double>(a[i * RS + kk * CS]) * b[kk * ldb + j];
          EXPECT_NEAR(c1[i * ldc + j], want, 1e-5 * std::max(1.0, std::abs(want)));
        }
    }
  }
}

TEST(Kernels, Gemm4x8MatchesScalarBitForBitAndFloat64) {
  for (int64_t K : {0, 1, 7, 64, 130}) {
    expect_gemm_matches<4, 1, 4>(K);    // interleaved rows (pack_rows<4>)
    expect_gemm_matches<4, 64, 1>(K);   // rows a fixed stride apart (the score tile)
  }
}

TEST(Kernels, Gemm6x8MatchesScalarBitForBitAndFloat64) {
  for (int64_t K : {0, 1, 7, 64, 130}) {
    expect_gemm_matches<6, 1, 6>(K);    // interleaved rows (pack_rows<6>)
    expect_gemm_matches<6, 64, 1>(K);
  }
  // Each of its rows is gemm_4x8's row, bit for bit: the attention kernel's row groups of 4 and 6
  // give the same results.
  const int64_t K = 70, ldc = 8;
  const auto a = ref::random(6 * K, 8), b = ref::random(K * 8, 9);
  std::vector<float> six(6 * ldc), four(8 * ldc);
  std::vector<float> a8(8 * K, 0.0f);
  for (int64_t i = 0; i < 6 * K; ++i) a8[i] = a[i];
  k::gemm_6x8<K, 1>(K, a.data(), b.data(), 8, six.data(), ldc, 8, false);
  k::gemm_4x8<K, 1>(K, a8.data(), b.data(), 8, four.data(), ldc, 8, false);
  k::gemm_4x8<K, 1>(K, a8.data() + 4 * K, b.data(), 8, four.data() + 4 * ldc, ldc, 8, false);
  for (int64_t i = 0; i < 6 * ldc; ++i) EXPECT_EQ(six[i], four[i]) << i;
}

// gemm_4x16 is two gemm_4x8 blocks in one pass: bit for bit those two calls (scalar), and the
// ISA's version bit for bit the scalar one, with and without accumulation.
// One row against n columns in 8-column blocks: the bits of row 0 of gemm_4x8 per block, on both
// operand layouts (key panels bstep = 8 K apart, a value row's columns bstep = 8 apart), with and
// without accumulating, for n across whole blocks, the 4-block groups and a partial last block.
TEST(Kernels, Gemm1xnMatchesRow0OfGemm4x8BitForBit) {
  for (int64_t K : {1, 7, 64}) {
    const std::vector<float> a = ref::random(4 * K, 5);  // 4 interleaved rows; row 0 alone is a[k * 4]
    std::vector<float> a0(K);
    for (int64_t k = 0; k < K; ++k) a0[k] = a[k * 4];
    for (int64_t n : {3, 8, 16, 24, 32, 40, 57, 64, 67}) {
      const int64_t blocks = (n + 7) / 8;
      const std::vector<float> panels = ref::random(blocks * 8 * K, 6), rows = ref::random(K * blocks * 8, 7);
      const std::vector<float> c0 = ref::random(blocks * 8, 8);
      for (const bool panel_layout : {true, false}) {
        const float* b = panel_layout ? panels.data() : rows.data();
        const int64_t bstep = panel_layout ? 8 * K : 8, ldb = panel_layout ? 8 : blocks * 8;
        for (const bool acc : {false, true}) {
          std::vector<float> want(4 * blocks * 8), got = c0, twin = c0;
          for (int64_t j = 0; j < blocks * 8; j += 8) {
            for (int r = 0; r < 4; ++r)
              for (int64_t i = 0; i < 8; ++i) want[r * blocks * 8 + j + i] = c0[j + i];
            k::gemm_4x8<1, 4>(K, a.data(), b + j / 8 * bstep, ldb, want.data() + j, blocks * 8, std::min<int64_t>(8, n - j), acc);
          }
          k::gemm_1xn<1>(K, a0.data(), b, bstep, ldb, got.data(), n, acc);
          k::scalar::gemm_1xn<1>(K, a0.data(), b, bstep, ldb, twin.data(), n, acc);
          for (int64_t j = 0; j < blocks * 8; ++j) {
            const float expect = j < n ? want[j] : c0[j];  // past n: untouched
            ASSERT_EQ(got[j], expect) << "K=" << K << " n=" << n << " j=" << j << " panels=" << panel_layout << " acc=" << acc;
            ASSERT_EQ(twin[j], expect) << "twin K=" << K << " n=" << n << " j=" << j;
          }
        }
      }
    }
  }
}

TEST(Kernels, Gemm4x16MatchesTwoGemm4x8BitForBit) {
  for (int64_t K : {0, 1, 7, 64, 130})
    for (bool acc : {false, true}) {
      const auto a = ref::random(4 * K + 4, 11), b = ref::random(K * 24 + 24, 12), c0 = ref::random(4 * 20, 13);
      std::vector<float> want = c0, got = c0, isa = c0;
      k::scalar::gemm_4x8<1, 4>(K, a.data(), b.data(), 24, want.data(), 20, 8, acc);
      k::scalar::gemm_4x8<1, 4>(K, a.data(), b.data() + 12, 24, want.data() + 8, 20, 8, acc);
      k::scalar::gemm_4x16<1, 4>(K, a.data(), b.data(), b.data() + 12, 24, got.data(), 20, acc);
      k::gemm_4x16<1, 4>(K, a.data(), b.data(), b.data() + 12, 24, isa.data(), 20, acc);
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i], want[i]) << "K " << K << " element " << i;
        EXPECT_EQ(isa[i], want[i]) << "K " << K << " element " << i;
      }
    }
}

// gemm_4x32 is four gemm_4x8 blocks over 32 contiguous columns: bit for bit those four calls
// (scalar), and the ISA's version bit for bit the scalar one, with and without accumulation.
TEST(Kernels, Gemm4x32MatchesFourGemm4x8BitForBit) {
  for (int64_t K : {0, 1, 7, 64, 130})
    for (bool acc : {false, true}) {
      const auto a = ref::random(4 * K + 4, 21), b = ref::random(K * 40 + 40, 22), c0 = ref::random(4 * 36, 23);
      std::vector<float> want = c0, got = c0, isa = c0;
      for (int64_t j = 0; j < 32; j += 8)
        k::scalar::gemm_4x8<1, 4>(K, a.data(), b.data() + j, 40, want.data() + j, 36, 8, acc);
      k::scalar::gemm_4x32<1, 4>(K, a.data(), b.data(), 40, got.data(), 36, acc);
      k::gemm_4x32<1, 4>(K, a.data(), b.data(), 40, isa.data(), 36, acc);
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(got[i], want[i]) << "K " << K << " element " << i;
        EXPECT_EQ(isa[i], want[i]) << "K " << K << " element " << i;
      }
    }
}

// gemm_8x32 is two gemm_4x32 row groups (the second gs floats after the first) sharing each load
// of b: bit for bit those two calls, with and without accumulation.
TEST(Kernels, Gemm8x32MatchesTwoGemm4x32BitForBit) {
  for (int64_t K : {0, 1, 7, 64, 130})
    for (bool acc : {false, true}) {
      const int64_t gs = 4 * K + 12;  // groups not adjacent: the stride is the caller's
      const auto a = ref::random(2 * gs, 24), b = ref::random(K * 40 + 40, 25), c0 = ref::random(8 * 36, 26);
      std::vector<float> want = c0, got = c0;
      k::scalar::gemm_4x32<1, 4>(K, a.data(), b.data(), 40, want.data(), 36, acc);
      k::scalar::gemm_4x32<1, 4>(K, a.data() + gs, b.data(), 40, want.data() + 4 * 36, 36, acc);
      k::gemm_8x32<1, 4>(K, a.data(), gs, b.data(), 40, got.data(), 36, acc);
      for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "K " << K << " element " << i;
    }
}

TEST(Kernels, PackRows4InterleavesAndZeroPads) {
  const int64_t cols = 5, stride = 7;
  const auto x = ref::random(3 * stride, 9);
  std::vector<float> out(4 * cols, -1.0f);
  k::pack_rows<4>(x.data(), stride, 3, cols, out.data());
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(out[c * 4 + r], r < 3 ? x[r * stride + c] : 0.0f);
}

// Whole 8 x 8 blocks, partial ones on either side, and both alone: every element where the
// element loop puts it, nothing outside out[c * ldo + r] for r < rows written.
TEST(Kernels, TransposeMatchesTheElementLoop) {
  for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{8, 8}, {16, 24}, {13, 21}, {5, 19}, {19, 5}, {3, 2}, {0, 8}, {8, 0}}) {
    const int64_t stride = cols + 3, ldo = rows + 5;
    const auto x = ref::random(std::max<int64_t>(rows * stride, 1), 31);
    std::vector<float> got(std::max<int64_t>(cols * ldo, 1), -7.0f), want = got;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) want[c * ldo + r] = x[r * stride + c];
    k::transpose(x.data(), stride, rows, cols, got.data(), ldo);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << rows << " x " << cols << " element " << i;
  }
}

TEST(Kernels, PackPanelsTransposesRowsIntoEightWidePanels) {
  const int64_t rows = 13, cols = 5, stride = 7;
  const auto x = ref::random(rows * stride, 8);
  std::vector<float> p(k::panels_size(rows, cols), -1.0f);
  ASSERT_EQ(p.size(), 16u * cols);
  k::pack_panels(x.data(), stride, rows, cols, p.data());
  for (int64_t r = 0; r < 16; ++r)
    for (int64_t c = 0; c < cols; ++c)
      EXPECT_EQ(p[(r / 8) * 8 * cols + c * 8 + r % 8], r < rows ? x[r * stride + c] : 0.0f);
}

// int8 inference linears: quantisation and integer dot products, SIMD against scalar bit for bit.
TEST(Kernels, QuantizeI16MatchesScalarAndBoundsTheError) {
  for (int64_t n : {0, 1, 7, 8, 33, 256}) {
    const int64_t np = (n + 15) / 16 * 16;
    auto x = ref::random(n, 40 + n);
    if (n > 2) x[1] = 0.5f / 8191.0f * x[0];  // an exact .5 step: both round half to even
    std::vector<int16_t> a(np + 1, 7), b(np + 1, 7);
    const float sa = k::quantize_i16(x.data(), n, np, a.data());
    const float sb = k::scalar::quantize_i16(x.data(), n, np, b.data());
    EXPECT_EQ(sa, sb);
    EXPECT_EQ(a, b) << "n=" << n;
    EXPECT_EQ(a[np], 7);  // nothing written past np
    float amax = 0.0f;
    for (float v : x) amax = std::max(amax, std::abs(v));
    for (int64_t i = 0; i < np; ++i) {
      EXPECT_LE(std::abs(a[i]), 8191);
      const double back = i < n ? x[i] : 0.0;
      EXPECT_NEAR(a[i] * static_cast<double>(sa), back, 0.5001 * sa + 1e-12);
    }
    if (n > 0) EXPECT_FLOAT_EQ(sa, amax / 8191.0f);
  }
  std::vector<int16_t> z(16, 3);
  const std::vector<float> zeros(10, 0.0f);
  EXPECT_EQ(k::quantize_i16(zeros.data(), 10, 16, z.data()), 0.0f);
  EXPECT_EQ(z, std::vector<int16_t>(16, 0));
  std::vector<float> bad(9, 1.0f);
  bad[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(k::quantize_i16(bad.data(), 9, 16, z.data())));
  EXPECT_TRUE(std::isnan(k::scalar::quantize_i16(bad.data(), 9, 16, z.data())));
  // The SIMD max runs four accumulators over blocks of 16, then single vectors, then a tail: the
  // largest magnitude, or a NaN, at every position of a 37-long row is found.
  std::vector<int16_t> qa(48), qb(48);
  for (int64_t at = 0; at < 37; ++at) {
    auto x = ref::random(37, 7);
    x[at] = at % 2 ? -3.0f : 3.0f;
    EXPECT_EQ(k::quantize_i16(x.data(), 37, 48, qa.data()), 3.0f / 8191.0f) << "at=" << at;
    x[at] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_TRUE(std::isnan(k::quantize_i16(x.data(), 37, 48, qa.data()))) << "at=" << at;
    EXPECT_TRUE(std::isnan(k::scalar::quantize_i16(x.data(), 37, 48, qb.data()))) << "at=" << at;
  }
  // A row so small that 8191 / max|x| overflows (found by fuzzing the model loader) counts as
  // zero, without converting an infinite float to int16.
  std::vector<float> tiny(9, 0.0f);
  tiny[2] = -1e-40f, tiny[6] = 3e-41f;
  z.assign(16, 3);
  EXPECT_EQ(k::quantize_i16(tiny.data(), 9, 16, z.data()), 0.0f);
  EXPECT_EQ(z, std::vector<int16_t>(16, 0));
  z.assign(16, 3);
  EXPECT_EQ(k::scalar::quantize_i16(tiny.data(), 9, 16, z.data()), 0.0f);
  EXPECT_EQ(z, std::vector<int16_t>(16, 0));
}

// quantize_split_i16 is quantize_i16 then split_i16, on each ISA and its twin: the same scale and
// bytes, padding and degenerate rows (zero, NaN, too small to scale) included, nothing past np.
TEST(Kernels, QuantizeSplitI16IsQuantizeThenSplit) {
  auto rows = std::vector<std::vector<float>>{};
  for (int64_t n : {0, 1, 7, 15, 16, 33, 256, 1000}) {
    auto x = ref::random(n, 90 + n);
    if (n > 2) x[1] = 0.5f / 8191.0f * x[0];  // an exact .5 step
    rows.push_back(x);
  }
  rows.push_back(std::vector<float>(10, 0.0f));
  rows.push_back({1.0f, std::numeric_limits<float>::quiet_NaN(), 2.0f});
  rows.push_back({-1e-40f, 3e-41f, 0.0f});
  for (const auto& x : rows) {
    const int64_t n = static_cast<int64_t>(x.size()), np = (n + 15) / 16 * 16;
    std::vector<int16_t> q(np);
    const float want = k::scalar::quantize_i16(x.data(), n, np, q.data());
    std::vector<uint8_t> hi(np + 1, 200), lo(np + 1, 200);
    k::scalar::split_i16(q.data(), np, hi.data(), lo.data());
    for (auto f : {k::quantize_split_i16, k::scalar::quantize_split_i16}) {
      std::vector<uint8_t> h(np + 1, 200), l(np + 1, 200);
      const float got = f(x.data(), n, np, h.data(), l.data());
      EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << "n=" << n;
      EXPECT_EQ(h, hi) << "n=" << n;
      EXPECT_EQ(l, lo) << "n=" << n;
    }
  }
}

// The product's scaling of a tile: the twin's bits, and float(acc) * (sx * w) [+ b] [ReLU] as
// written, over int32's whole range (|acc| past 2^24 rounds in the conversion) and scales of any
// exponent; a full tile and partial ones (the last of a layer whose width is not a multiple of 8).
// Natively GCC may fuse the bias's add into the multiply (it contracts by context); the WebAssembly
// builds, which have no fused multiply-add here, must give the separate roundings.
template <int R>
void expect_scale_q8_8() {
  std::mt19937 g(R);
  std::uniform_int_distribution<int32_t> acc_d(std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
  std::uniform_real_distribution<float> e(-30.f, 10.f), u(-1.f, 1.f);
  int32_t acc[R * 8];
  float sx[R], w[8], b[8];
  for (int& a : acc) a = acc_d(g);
  acc[0] = std::numeric_limits<int32_t>::min(), acc[1] = 0, acc[2] = (1 << 24) + 1;
  for (float& v : sx) v = std::exp2(e(g));
  for (float& v : w) v = std::exp2(e(g));
  for (int j = 0; j < 8; ++j) {
    const volatile float p = static_cast<float>(acc[j]) * (sx[0] * w[j]);  // row 0's products
    b[j] = j == 1 ? std::numeric_limits<float>::quiet_NaN() : j == 3 ? -p : p * u(g);  // NaN, an exact 0
  }
  const int64_t ldy = 11;
  for (const float* bias : {static_cast<const float*>(nullptr), static_cast<const float*>(b)})
    for (bool relu : {false, true})
      for (int64_t n : {8, 5, 1}) {
        std::vector<float> y(R * ldy, -1.f), z(R * ldy, -1.f);
        k::scale_q8_8<R>(acc, sx, w, bias, relu, y.data(), ldy, n);
        k::scalar::scale_q8_8<R>(acc, sx, w, bias, relu, z.data(), ldy, n);
        for (int r = 0; r < R; ++r)
          for (int j = 0; j < ldy; ++j) {
            const std::string at = "R=" + std::to_string(R) + " n=" + std::to_string(n) + " r=" + std::to_string(r) +
                                   " j=" + std::to_string(j) + (bias ? " bias" : "") + (relu ? " relu" : "");
            if (j >= n) {  // past n: untouched
              EXPECT_EQ(y[r * ldy + j], -1.f) << at;
              EXPECT_EQ(z[r * ldy + j], -1.f) << at;
              continue;
            }
            const volatile float p = static_cast<float>(acc[r * 8 + j]) * (sx[r] * w[j]);
            float want = bias ? p + bias[j] : p;
            if (relu && !(want > 0.f)) want = 0.f;
            const bool both_nan = std::isnan(y[r * ldy + j]) && std::isnan(z[r * ldy + j]);
            EXPECT_TRUE(std::memcmp(&y[r * ldy + j], &z[r * ldy + j], 4) == 0 || both_nan) << at << ": the twins differ";
#if defined(__wasm__)
            EXPECT_TRUE(std::memcmp(&y[r * ldy + j], &want, 4) == 0 || (std::isnan(want) && std::isnan(y[r * ldy + j]))) << at;
#else
            const float fused = bias ? std::fma(static_cast<float>(acc[r * 8 + j]), sx[r] * w[j], bias[j]) : want;
            const float got = y[r * ldy + j];
            EXPECT_TRUE(got == want || got == (relu && !(fused > 0.f) ? 0.f : fused) || (std::isnan(want) && std::isnan(got))) << at;
#endif
          }
      }
}

TEST(Kernels, ScaleQ8MatchesScalarBitForBit) {
  expect_scale_q8_8<1>();
  expect_scale_q8_8<3>();
  expect_scale_q8_8<5>();
}

// One int8 tile times R int16 rows, in both layouts: exact on every ISA (the int64 sum of the
// unpacked weights), with the extremes (2 kp = 2048) that come nearest int32's range.
template <int R>
void expect_gemm_q8_8(int64_t ldw, int extremes) {
  const int64_t ldx = ldw + 16;
  std::vector<int16_t> x(R * ldx);
  std::vector<int8_t> w(8 * ldw);
  uint32_t s = 12345;
  auto next = [&] { return s = s * 1664525u + 1013904223u, static_cast<int32_t>(s >> 8); };
  // extremes: 8191 * 127 at every k; then each sign flipped at every other k and row (the quads'
  // offset bytes at both ends: 0 and 127).
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i)
    x[i] = extremes ? static_cast<int16_t>(extremes > 1 && (i + i / ldx) % 2 ? -8191 : 8191) : static_cast<int16_t>(next() % 16383 - 8191);
  for (int64_t i = 0; i < static_cast<int64_t>(w.size()); ++i)
    w[i] = extremes ? static_cast<int8_t>(extremes > 1 && i % 3 == 0 ? -127 : 127) : static_cast<int8_t>(next() % 255 - 127);
  const k::Q8Layout pairs{8, ldw, false}, quads{8, ldw, true};
  std::vector<int8_t> wt(static_cast<size_t>(pairs.size())), wq(static_cast<size_t>(quads.size()));
  pairs.pack(w.data(), wt.data());
  quads.pack(w.data(), wq.data());
  std::vector<uint8_t> xb(2 * R * ldx);
  for (int r = 0; r < R; ++r) k::split_i16(x.data() + r * ldx, ldx, xb.data() + 2 * r * ldx, xb.data() + (2 * r + 1) * ldx);
  int32_t a[R * 8], b[R * 8], c[R * 8], d[R * 8];
  k::gemm_q8_8<R>(x.data(), ldx, wt.data(), ldw / 2, a);
  k::scalar::gemm_q8_8<R>(x.data(), ldx, wt.data(), ldw / 2, b);
  const int8_t* sums = ldw ? quads.sums(wq.data(), 0, 0) : nullptr;
  const int8_t zero[32] = {};
  k::gemm_q8_quad<R>(xb.data(), xb.data() + ldx, 2 * ldx, wq.data(), ldw / 4, ldw ? sums : zero, c);
  k::scalar::gemm_q8_quad<R>(xb.data(), xb.data() + ldx, 2 * ldx, wq.data(), ldw / 4, ldw ? sums : zero, d);
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < 8; ++j) {
      int64_t want = 0;
      for (int64_t i = 0; i < ldw; ++i) want += static_cast<int64_t>(x[r * ldx + i]) * w[j * ldw + i];
      EXPECT_EQ(a[r * 8 + j], want) << "R=" << R << " ldw=" << ldw << " r=" << r << " j=" << j;
      EXPECT_EQ(b[r * 8 + j], want);
      EXPECT_EQ(c[r * 8 + j], want) << "quads R=" << R << " ldw=" << ldw << " r=" << r << " j=" << j;
      EXPECT_EQ(d[r * 8 + j], want);
    }
  if (ldw > 0) {  // an odd number of k-pairs: the one-row kernel takes two a step
    k::gemm_q8_8<R>(x.data(), ldx, wt.data(), ldw / 2 - 1, a);
    k::scalar::gemm_q8_8<R>(x.data(), ldx, wt.data(), ldw / 2 - 1, b);
    EXPECT_TRUE(std::equal(a, a + R * 8, b)) << "R=" << R << " odd pairs, ldw=" << ldw;
  }
}

// Both layouts' kernels, gemm_q8_quad where this build has relaxed SIMD (else its scalar twin).
TEST(Kernels, GemmQ8IsExactOnEveryIsa) {
  for (int64_t ldw : {0, 16, 48, 512, 2048}) {
    expect_gemm_q8_8<1>(ldw, 0);
    expect_gemm_q8_8<2>(ldw, 0);
    expect_gemm_q8_8<3>(ldw, 0);
    expect_gemm_q8_8<4>(ldw, 0);
    expect_gemm_q8_8<5>(ldw, 0);
  }
  expect_gemm_q8_8<5>(2048, 1);
  expect_gemm_q8_8<4>(2048, 1);
  expect_gemm_q8_8<3>(2048, 2);
}

// The sparse kernels on rows whose other k-groups (pairs, or quads) are zero, in every other group
// and runs of them, as a ReLU leaves its outputs: the kernel on the nonzero groups only, the rows
// compacted to them, gives the exact sums of the whole rows, on every ISA. The quads' rows have no
// negative entry and go in without split_i16's offset (x = 128 hi + lo), as the product gives them.
template <int R>
void expect_gemm_q8_sparse(int64_t ldw, bool quads) {
  const int64_t g = quads ? 4 : 2, groups = ldw / g;
  std::vector<int16_t> x(R * ldw, 0);
  std::vector<int8_t> w(8 * ldw);
  uint32_t s = quads ? 4242 : 777;
  auto next = [&] { return s = s * 1664525u + 1013904223u, static_cast<int32_t>(s >> 8); };
  for (int64_t q = 0; q < groups; ++q)
    if (q % 3 == 1 || q % 7 == 0)
      for (int r = 0; r < R; ++r)
        for (int e = 0; e < g; ++e)
          if ((r + e + q) % 3 != 0)
            x[r * ldw + g * q + e] = static_cast<int16_t>(e == 1 && q % 2 ? 8191 : quads ? next() % 8192 : next() % 16383 - 8191);
  // Weights: -127 and 127 one time in eight each, else anything in between.
  for (auto& v : w) {
    const int32_t d = next();
    v = static_cast<int8_t>(d % 8 == 0 ? 127 : d % 8 == 1 ? -127 : d % 255 - 127);
  }
  const k::Q8Layout L{8, ldw, quads};
  std::vector<int8_t> wt(static_cast<size_t>(L.size()));
  L.pack(w.data(), wt.data());
  std::vector<int32_t> list;
  for (int64_t q = 0; q < groups; ++q) {
    bool any = false;
    for (int r = 0; r < R; ++r)
      for (int e = 0; e < g; ++e) any |= x[r * ldw + g * q + e] != 0;
    if (any) list.push_back(static_cast<int32_t>(q));
  }
  ASSERT_LT(static_cast<int64_t>(list.size()), groups);  // some groups skipped
  // Compacted rows a stride apart, the gaps filled with garbage the kernels must not read.
  const int64_t n = static_cast<int64_t>(list.size()), ldc = g * n + 12;
  std::vector<int16_t> xc(R * ldc, 9999);
  std::vector<uint8_t> xb(2 * R * ldc, 77);  // quads: row r's hi at 2 r ldc, its lo ldc further
  for (int r = 0; r < R; ++r)
    for (int64_t q = 0; q < n; ++q)
      for (int e = 0; e < g; ++e) {
        const int v = x[r * ldw + g * list[q] + e];
        xc[r * ldc + g * q + e] = static_cast<int16_t>(v);
        xb[2 * r * ldc + g * q + e] = static_cast<uint8_t>(v >> 7);
        xb[(2 * r + 1) * ldc + g * q + e] = static_cast<uint8_t>(v & 127);
      }
  int32_t a[R * 8], b[R * 8];
  if (quads) {
    k::gemm_q8_quad_sparse<R>(xb.data(), xb.data() + ldc, 2 * ldc, wt.data(), list.data(), n, a);
    k::scalar::gemm_q8_quad_sparse<R>(xb.data(), xb.data() + ldc, 2 * ldc, wt.data(), list.data(), n, b);
  } else {
    k::gemm_q8_8_sparse<R>(xc.data(), ldc, wt.data(), list.data(), n, a);
    k::scalar::gemm_q8_8_sparse<R>(xc.data(), ldc, wt.data(), list.data(), n, b);
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < 8; ++j) {
      int64_t want = 0;
      for (int64_t i = 0; i < ldw; ++i) want += static_cast<int64_t>(x[r * ldw + i]) * w[j * ldw + i];
      const std::string at = std::string(quads ? "quads" : "pairs") + " R=" + std::to_string(R) + " ldw=" +
                             std::to_string(ldw) + " r=" + std::to_string(r) + " j=" + std::to_string(j);
      EXPECT_EQ(a[r * 8 + j], want) << at;
      EXPECT_EQ(b[r * 8 + j], want) << at << " (scalar)";
    }
}

TEST(Kernels, GemmQ8SparseSkipsOnlyZeroGroups) {
  for (int64_t ldw : {16, 96, 1024, 2048})
    for (bool quads : {false, true}) {
      expect_gemm_q8_sparse<1>(ldw, quads);
      expect_gemm_q8_sparse<2>(ldw, quads);
      expect_gemm_q8_sparse<3>(ldw, quads);
      if (!quads) expect_gemm_q8_sparse<5>(ldw, quads);  // the quads take at most 3 rows
    }
}

// Both layouts: rows past M are zero, each byte is where its kernel reads it, and the quads'
// row sums follow the tiles, a chunk of 2048 k's at a time.
TEST(Kernels, PackQ8TilesLayout) {
  const int64_t M = 11, ldw = 16;
  std::vector<int8_t> w(M * ldw);
  for (int64_t i = 0; i < M * ldw; ++i) w[i] = static_cast<int8_t>(i % 251 - 125);
  const k::Q8Layout pairs{M, ldw, false}, quads{M, ldw, true};
  std::vector<int8_t> t(static_cast<size_t>(pairs.size()), 99), q(static_cast<size_t>(quads.size()), 99);
  pairs.pack(w.data(), t.data());
  quads.pack(w.data(), q.data());
  ASSERT_EQ(t.size(), 16u * ldw);
  ASSERT_EQ(q.size(), 16u * ldw + 16 * 4);
  for (int64_t m = 0; m < 16; ++m) {
    int32_t sum = 0;
    for (int64_t c = 0; c < ldw; ++c) {
      const int8_t want = m < M ? w[m * ldw + c] : 0;
      sum += want;
      EXPECT_EQ(t[((m / 8) * (ldw / 2) + c / 2) * 16 + 2 * (m % 8) + c % 2], want) << m << "," << c;
      EXPECT_EQ(q[((m / 8) * (ldw / 4) + c / 4) * 32 + 16 * (m % 8 / 4) + 4 * (m % 4) + c % 4], want) << m << "," << c;
      EXPECT_EQ(pairs.at(t.data(), m, c), want);
      EXPECT_EQ(quads.at(q.data(), m, c), want);
    }
    int32_t got;
    std::memcpy(&got, quads.sums(q.data(), 0, m / 8) + 4 * (m % 8), sizeof got);
    EXPECT_EQ(got, sum) << m;
  }
  const k::Q8Layout deep{3, 4096 + 16, true};
  EXPECT_EQ(deep.chunks(), 3);
  std::vector<int8_t> dw(3 * deep.ldw, 1), dq(static_cast<size_t>(deep.size()));
  deep.pack(dw.data(), dq.data());
  for (int64_t c = 0; c < 3; ++c) {
    int32_t got;
    std::memcpy(&got, deep.sums(dq.data(), c, 0) + 4, sizeof got);
    EXPECT_EQ(got, c < 2 ? 2048 : 16) << c;
  }
}

// The recurrent layers' activations through the exp kernel, on every ISA: tanh within 2e-7
// absolute and 1 at the clamp, sigmoid within 2e-7 relative, across [-20, 20] (odd lengths, so
// the SIMD loop's scalar tail is exercised too).
namespace {
// Bits, with every NaN as one value: WebAssembly leaves a NaN's sign and payload unspecified.
std::vector<uint32_t> bits_of(const std::vector<float>& x) {
  std::vector<uint32_t> b(x.size());
  std::memcpy(b.data(), x.data(), x.size() * sizeof(float));
  for (size_t i = 0; i < x.size(); ++i)
    if (x[i] != x[i]) b[i] = 0x7fc00000u;
  return b;
}
// The activations' twin inputs: [-25, 25] and, at 3-10, NaN, both infinities, both zeros, a tiny,
// a large negative and a huge value.
std::vector<float> activation_inputs() {
  std::vector<float> x(1003);
  for (size_t i = 0; i < x.size(); ++i) x[i] = -25.0f + 50.0f * static_cast<float>(i) / 1002.0f;
  x[3] = std::numeric_limits<float>::quiet_NaN();
  x[4] = std::numeric_limits<float>::infinity();
  x[5] = -std::numeric_limits<float>::infinity();
  x[6] = 0.0f, x[7] = -0.0f, x[8] = 1e-30f, x[9] = -90.0f, x[10] = 3e38f;
  return x;
}
}  // namespace

// The one-pass SIMD activations against their scalar twins, bit for bit: both clamps, NaN,
// infinities, zeros of both signs, and tails past the 4-wide steps.
TEST(Kernels, TanhAndSigmoidMatchTheirScalarTwinsBitForBit) {
  const std::vector<float> x = activation_inputs();
  std::vector<float> b(x.size());
  for (size_t i = 0; i < x.size(); ++i) b[i] = 0.25f - 0.5f * static_cast<float>(i % 7);
  for (int64_t n : {1003, 1000, 7, 1}) {
    auto t = x, ts = x;
    k::tanh_inplace(t.data(), n);
    k::scalar::tanh_inplace(ts.data(), n);
    EXPECT_EQ(bits_of(t), bits_of(ts)) << "n " << n;
    std::vector<float> s(x.size()), ss(x.size());
    k::sigmoid_sum(x.data(), b.data(), s.data(), n);
    k::scalar::sigmoid_sum(x.data(), b.data(), ss.data(), n);
    EXPECT_EQ(bits_of(s), bits_of(ss)) << "n " << n;
  }
  auto t = x;
  k::tanh_inplace(t.data(), static_cast<int64_t>(t.size()));
  EXPECT_TRUE(std::isnan(t[3]));
  EXPECT_EQ(t[4], 1.0f);
  EXPECT_EQ(t[5], -1.0f);
  EXPECT_EQ(t[6], 0.0f);
}

// Additive attention's scores in one pass: the bits of tanh_inplace over q + k_j and then dot()
// on the same ISA (tanhs and sums), and within float rounding of float64 on every ISA.
TEST(Kernels, TanhDotRowsIsTanhThenDot) {
  for (int64_t H : {192, 37, 16, 4, 3}) {
    const int64_t n = 5, ldk = H + 3;
    std::vector<float> q(H), kk(n * ldk), v(H);
    for (int64_t h = 0; h < H; ++h) {
      q[h] = std::sin(0.7f * static_cast<float>(h)) * 2.0f;
      v[h] = std::cos(0.3f * static_cast<float>(h)) * 0.5f;
    }
    for (int64_t i = 0; i < n * ldk; ++i) kk[i] = std::sin(1.3f * static_cast<float>(i) + 0.1f) * 3.0f;
    std::vector<float> out(n), t(n * H), out_scalar(n), t_scalar(n * H), out_only(n);
    k::tanh_dot_rows(q.data(), kk.data(), ldk, v.data(), H, n, out.data(), t.data());
    k::tanh_dot_rows(q.data(), kk.data(), ldk, v.data(), H, n, out_only.data(), nullptr);
    k::scalar::tanh_dot_rows(q.data(), kk.data(), ldk, v.data(), H, n, out_scalar.data(), t_scalar.data());
    EXPECT_EQ(out, out_only) << "H " << H;
    EXPECT_EQ(bits_of(t), bits_of(t_scalar)) << "H " << H;
    for (int64_t j = 0; j < n; ++j) {
      std::vector<float> u(H);
      double exact = 0.0, mag = 0.0;
      for (int64_t h = 0; h < H; ++h) {
        u[h] = q[h] + kk[j * ldk + h];
        const double th = std::tanh(static_cast<double>(u[h]));
        exact += static_cast<double>(v[h]) * th;
        mag += std::abs(static_cast<double>(v[h]) * th);
      }
      k::tanh_inplace(u.data(), H);
      EXPECT_EQ(bits_of(u), bits_of(std::vector<float>(t.begin() + j * H, t.begin() + (j + 1) * H))) << "H " << H;
      EXPECT_EQ(out[j], k::dot(v.data(), u.data(), H)) << "H " << H << " row " << j;
      EXPECT_NEAR(out[j], exact, 1e-6 * mag) << "H " << H << " row " << j;
      EXPECT_NEAR(out_scalar[j], exact, 1e-6 * mag) << "H " << H << " row " << j;
    }
  }
}

TEST(Kernels, TanhAndSigmoidThroughTheExpKernelMatchFloat64) {
  const int64_t n = 4001;
  std::vector<float> x(n), t(n), zero(n, 0.0f), s(n);
  for (int64_t i = 0; i < n; ++i) x[i] = -20.0f + 40.0f * static_cast<float>(i) / static_cast<float>(n - 1);
  t = x;
  k::tanh_inplace(t.data(), n);
  k::sigmoid_sum(x.data(), zero.data(), s.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(t[i], std::tanh(static_cast<double>(x[i])), 2e-7) << x[i];
    const double sg = 1.0 / (1.0 + std::exp(-static_cast<double>(x[i])));
    // exp_approx's bound at -|x| and the division's rounding.
    EXPECT_NEAR(s[i], sg, (1.6e-7 + 7.3e-8 * std::abs(x[i])) * sg) << x[i];
  }
}

// The GELUs against their scalar twins, bit for bit, on the same inputs.
TEST(Kernels, GelusMatchTheirScalarTwinsBitForBit) {
  const std::vector<float> x = activation_inputs();
  for (int64_t n : {1003, 1000, 7, 1}) {
    auto e = x, es = x, t = x, ts = x;
    k::gelu_erf_inplace(e.data(), n);
    k::scalar::gelu_erf_inplace(es.data(), n);
    EXPECT_EQ(bits_of(e), bits_of(es)) << "n " << n;
    k::gelu_tanh_inplace(t.data(), n);
    k::scalar::gelu_tanh_inplace(ts.data(), n);
    EXPECT_EQ(bits_of(t), bits_of(ts)) << "n " << n;
  }
  auto e = x;
  k::gelu_erf_inplace(e.data(), static_cast<int64_t>(e.size()));
  EXPECT_TRUE(std::isnan(e[3]));
  EXPECT_EQ(e[4], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(e[5]));  // -inf * Phi(-inf) = -inf * 0, as float's 0.5 x (1 + erf(x / sqrt 2))
  EXPECT_EQ(e[6], 0.0f);
  EXPECT_EQ(e[9], 0.0f);  // -90 Phi(-90): below float
  EXPECT_EQ(e[10], 3e38f);
}

// Against float64 from -14 to 14 (beyond, x Phi(x) is below 1e-43 or x itself): the erf GELU
// within 1.3e-7 max(1, |x|) (float's 0.5 x (1 + erf(x / sqrt 2)) with libm's erf: 1.05e-7), and
// for x < 0, where it is a normal float, within 5e-7 (1 + x^2) of its value (measured 4.4e-7; the
// x^2 is z^2's rounding in the exponent), where 1 + erf cancels: ~10% off at x = -5.
TEST(Kernels, GelusMatchFloat64) {
  const int64_t n = 400001;
  std::vector<float> x(n), e(n), t(n);
  for (int64_t i = 0; i < n; ++i) x[i] = -14.0f + 28.0f * static_cast<float>(i) / static_cast<float>(n - 1);
  e = x, t = x;
  k::gelu_erf_inplace(e.data(), n);
  k::gelu_tanh_inplace(t.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const double xd = x[i], scale = std::max(1.0, std::abs(xd));
    const double exact = 0.5 * xd * std::erfc(-xd / std::sqrt(2.0));
    EXPECT_NEAR(e[i], exact, 1.3e-7 * scale) << x[i];
    if (xd < 0.0 && std::abs(exact) > 1e-37) EXPECT_NEAR(e[i], exact, 5e-7 * (1.0 + xd * xd) * std::abs(exact)) << x[i];
    const double tanh_gelu = 0.5 * xd * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (xd + 0.044715 * xd * xd * xd)));
    EXPECT_NEAR(t[i], tanh_gelu, 1.5e-7 * scale) << x[i];
  }
}
