// nn::Mt19937 against std::mt19937, and dropout's mask against the draws it replaced.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "attnlab/nn/ops.hpp"

using namespace attnlab::nn;

TEST(NnRandom, Mt19937IsStdMt19937) {
  for (uint32_t seed : {0u, 1u, 5489u, 4294967295u}) {
    std::mt19937 ref(seed);
    Mt19937 g(seed);
    // Single draws and fills of every size around the state's 624 words, interleaved.
    int64_t drawn = 0;
    for (int64_t n : {1, 623, 1, 624, 625, 3, 1300, 0, 2000}) {
      std::vector<uint32_t> got(static_cast<size_t>(n) + 1);
      g.fill(got.data(), n);
      got[n] = g();
      for (int64_t i = 0; i <= n; ++i) ASSERT_EQ(got[i], static_cast<uint32_t>(ref())) << "seed " << seed << " draw " << drawn + i;
      drawn += n + 1;
    }
  }
  Mt19937 g;
  std::mt19937 ref;
  g.seed(77);
  ref.seed(77);
  EXPECT_EQ(g(), ref());
}

TEST(NnRandom, DistributionsAndShuffleSeeTheSameNumbers) {
  Mt19937 g(3);
  std::mt19937 ref(3);
  // One of each per generator: normal_distribution keeps the second number of each pair it makes.
  std::normal_distribution<float> n(0.f, 0.5f), n_ref(0.f, 0.5f);
  std::uniform_real_distribution<float> u(-2.f, 2.f), u_ref(-2.f, 2.f);
  std::uniform_int_distribution<int> k(0, 6), k_ref(0, 6);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(n(g), n_ref(ref));
    ASSERT_EQ(u(g), u_ref(ref));
    ASSERT_EQ(k(g), k_ref(ref));
  }
  std::vector<int> a(500), b(500);
  std::iota(a.begin(), a.end(), 0);
  b = a;
  std::shuffle(a.begin(), a.end(), g);
  std::shuffle(b.begin(), b.end(), ref);
  EXPECT_EQ(a, b);
}

// The mask as the op drew it before (a float mask from uniform_real_distribution: U < p drops),
// forward and backward, for sizes that end inside and on the generator's blocks.
TEST(NnRandom, DropoutDrawsUniformRealDistributionsMask) {
  for (float p : {0.1f, 0.4f, 0.5f, 1e-7f, 0.9999f}) {
    for (int64_t cols : {7, 48, 624}) {
      const int64_t rows = 5;
      Tensor x;
      x.r = rows;
      x.c = cols;
      x.requires_grad = true;
      for (int64_t i = 0; i < rows * cols; ++i) x.v.push_back(static_cast<float>(i % 13) - 6.5f);
      Tape tp;
      Mt19937 rng(11), after(11);
      T y = dropout(tp, &x, p, rng);
      std::fill(y->grad(), y->grad() + y->size(), 0.f);
      for (int64_t i = 0; i < y->size(); ++i) y->grad()[i] = 0.25f * static_cast<float>(i % 5);
      tp.backward(tp.make(1, 1));  // runs dropout's backward into x.g (the seed lands on the dummy)
      std::mt19937 ref(11);
      std::uniform_real_distribution<float> U(0.f, 1.f);
      const float keep = 1.f / (1.f - p);
      int64_t dropped = 0;
      for (int64_t i = 0; i < rows * cols; ++i) {
        const float mask = U(ref) < p ? 0.f : keep;
        dropped += mask == 0.f;
        ASSERT_EQ(y->v[i], x.v[i] * mask) << "p " << p << " element " << i;
        ASSERT_EQ(x.g[i], y->g[i] * mask) << "p " << p << " element " << i;
      }
      for (int64_t i = 0; i < rows * cols; ++i) after();
      EXPECT_EQ(rng(), after()) << "dropout draws one number per element";
      if (p == 0.5f && cols == 624) EXPECT_NEAR(static_cast<double>(dropped) / (rows * cols), 0.5, 0.05);
    }
  }
  // Listed rows of a larger tensor: each row's mask is the one it gets in the whole tensor, and
  // the generator ends where the whole tensor's dropout leaves it.
  for (const std::vector<int>& rows : {std::vector<int>{0, 2, 3}, std::vector<int>{1, 4}, std::vector<int>{}}) {
    const int64_t total = 5, C = 300;
    Tensor all;
    all.r = total;
    all.c = C;
    all.requires_grad = true;
    for (int64_t i = 0; i < total * C; ++i) all.v.push_back(0.01f * static_cast<float>(i % 97) - 0.4f);
    Tensor some;
    some.r = static_cast<int64_t>(rows.size());
    some.c = C;
    some.requires_grad = true;
    for (int r : rows) some.v.insert(some.v.end(), all.v.begin() + r * C, all.v.begin() + (r + 1) * C);
    Tape tp;
    Mt19937 g_all(4), g_some(4);
    T y_all = dropout(tp, &all, 0.3f, g_all);
    T y_some = dropout(tp, &some, 0.3f, g_some, rows, total);
    EXPECT_EQ(g_all(), g_some()) << "the generator after " << rows.size() << " listed rows";
    for (int64_t i = 0; i < y_all->size(); ++i) y_all->grad()[i] = 0.5f + static_cast<float>(i % 7);
    for (size_t k = 0; k < rows.size(); ++k)
      for (int64_t c = 0; c < C; ++c) {
        ASSERT_EQ(y_some->v[k * C + c], y_all->v[rows[k] * C + c]) << "row " << rows[k] << " column " << c;
        y_some->grad()[k * C + c] = y_all->grad()[rows[k] * C + c];
      }
    tp.backward(tp.make(1, 1));
    for (size_t k = 0; k < rows.size(); ++k)
      for (int64_t c = 0; c < C; ++c) ASSERT_EQ(some.g[k * C + c], all.g[rows[k] * C + c]) << "gradient, row " << rows[k];
  }
  // p >= 1 drops everything.
  Tensor x;
  x.r = 1;
  x.c = 700;
  x.v.assign(700, 3.f);
  Tape tp;
  Mt19937 rng(2);
  T y = dropout(tp, &x, 1.f, rng);
  EXPECT_TRUE(std::all_of(y->v.begin(), y->v.end(), [](float v) { return v == 0.f; }));
}
