// sinusoidal_encoding against P[i, 2j] = sin(i / 10000^(2j/d)), P[i, 2j+1] = cos(...) in double.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/positional.hpp"
#include "check.hpp"
#include "reference.hpp"

namespace {

std::vector<float> Encode(int64_t length, int64_t dim) {
  std::vector<float> p(static_cast<size_t>(length * dim), std::numeric_limits<float>::quiet_NaN());
  attnlab::sinusoidal_encoding(length, dim, p.data());
  return p;
}

std::vector<double> Want(int64_t first, int64_t length, int64_t dim) {
  std::vector<double> w;
  for (int64_t i = first; i < first + length; ++i)
    for (int64_t c = 0; c < dim; ++c) w.push_back(ref::sinusoidal(i, c, dim));
  return w;
}

}  // namespace

TEST(Positional, MatchesFormula) {
  for (int64_t dim : {2, 4, 16, 32, 64}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    EXPECT_TRUE(check::AllClose(Encode(100, dim), Want(0, 100, dim)));
  }
}

TEST(Positional, OddDimensionEndsWithSine) {
  for (int64_t dim : {1, 3, 7, 33}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    const auto p = Encode(50, dim);
    EXPECT_TRUE(check::AllClose(p, Want(0, 50, dim)));
    // The last column is sin(i / 10000^((dim-1)/dim)).
    const double freq = std::pow(10000.0, -static_cast<double>(dim - 1) / dim);
    for (int64_t i = 0; i < 50; ++i)
      EXPECT_NEAR(p[i * dim + dim - 1], std::sin(i * freq), 1e-6) << "i=" << i;
  }
  // dim 1: a single column sin(i).
  const auto p = Encode(10, 1);
  for (int64_t i = 0; i < 10; ++i) EXPECT_NEAR(p[i], std::sin(static_cast<double>(i)), 1e-6);
}

TEST(Positional, FirstRowsAreExact) {
  // Position 0: sin 0 = 0 and cos 0 = 1 in every pair. Column 0 of row i is sin(i).
  const auto p = Encode(4, 6);
  for (int64_t c = 0; c < 6; ++c) EXPECT_EQ(p[c], c % 2 == 0 ? 0.0f : 1.0f) << c;
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_FLOAT_EQ(p[i * 6 + 0], static_cast<float>(std::sin(static_cast<double>(i))));
    EXPECT_FLOAT_EQ(p[i * 6 + 1], static_cast<float>(std::cos(static_cast<double>(i))));
  }
}

TEST(Positional, LengthZeroWritesNothing) {
  std::vector<float> guard{3.0f, 4.0f};
  attnlab::sinusoidal_encoding(0, 8, guard.data());
  EXPECT_EQ(guard, (std::vector<float>{3.0f, 4.0f}));
  attnlab::sinusoidal_encoding(0, 8, nullptr);
  SUCCEED();
}

TEST(Positional, LargePositionsStayAccurate) {
  // Angles up to 10000 rad: the float angle would be off by ~5e-4 there, so this needs double.
  const int64_t length = 10001, dim = 16;
  const auto p = Encode(length, dim);
  EXPECT_TRUE(check::AllClose(p, Want(0, length, dim)));
  const std::vector<float> last(p.end() - dim, p.end());
  EXPECT_TRUE(check::AllClose(last, Want(10000, 1, dim)));
  EXPECT_NEAR(last[0], std::sin(10000.0), 1e-6);
  EXPECT_NEAR(last[1], std::cos(10000.0), 1e-6);
}

TEST(Positional, InvalidArgumentsThrow) {
  std::vector<float> out(16);
  EXPECT_TRUE(check::ThrowsError([&] { attnlab::sinusoidal_encoding(2, 0, out.data()); }, "dim"));
  EXPECT_TRUE(check::ThrowsError([&] { attnlab::sinusoidal_encoding(2, -3, out.data()); }, "dim"));
  EXPECT_TRUE(check::ThrowsError([&] { attnlab::sinusoidal_encoding(-1, 4, out.data()); }, "length"));
}
