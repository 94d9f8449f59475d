// Local (sliding-window) attention against dense float64 attention masked to the same window.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/sparse_attention.hpp"
#include "reference.hpp"

using namespace attnlab;

namespace {

constexpr double kTol = 1e-5;

struct Case {
  int64_t batch, Sq, Sk, D, Dv, window;
  bool causal;
};

void check(const Case& c) {
  const auto q = ref::random(c.batch * c.Sq * c.D, 1), k = ref::random(c.batch * c.Sk * c.D, 2),
             v = ref::random(c.batch * c.Sk * c.Dv, 3);
  PatternSpec spec;
  spec.type = PatternType::Local;
  spec.window = c.window;
  const SparsePattern p = make_pattern(spec, c.Sq, c.Sk);
  MaskSet masks;
  masks.causal = c.causal;
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.D));
  std::vector<float> out(c.batch * c.Sq * c.Dv), weights(c.batch * c.Sq * c.Sk);
  sparse_attention(q.data(), k.data(), v.data(), c.batch, c.D, c.Dv, scale, p, masks, out.data(),
                   weights.data(), nullptr);

  std::vector<double> want_out, want_weights;
  ref::dot_attention(
      q, k, v, c.batch, c.Sq, c.Sk, c.D, c.Dv, scale,
      [&](int64_t, int64_t i, int64_t j) {
        return std::abs(i - j) <= c.window && (!c.causal || j <= i);
      },
      [](int64_t, int64_t, int64_t) { return 0.0; }, want_out, want_weights);
  EXPECT_LE(ref::max_error(out, want_out), kTol);
  EXPECT_LE(ref::max_error(weights, want_weights), kTol);
  for (size_t t = 0; t < weights.size(); ++t) {
    if (want_weights[t] == 0.0) EXPECT_EQ(weights[t], 0.0f) << "outside the window at " << t;
  }
}

}  // namespace

TEST(LocalAttention, TwoSidedWindows) {
  for (int64_t w : {0, 1, 3, 8, 100}) check({2, 37, 37, 16, 8, w, false});
}

TEST(LocalAttention, CausalWindows) {
  for (int64_t w : {0, 2, 5, 100}) check({2, 33, 33, 8, 5, w, true});
}

TEST(LocalAttention, FewerQueriesThanKeysAndMore) {
  check({1, 12, 40, 16, 4, 4, false});
  check({1, 40, 12, 16, 4, 4, false});
  check({1, 40, 12, 16, 4, 6, true});
}

TEST(LocalAttention, LongRowsExerciseSimdTails) { check({1, 131, 131, 67, 33, 19, false}); }

TEST(LocalAttention, VisitsOnlyTheWindow) {
  // The spans of every row hold exactly the 2w + 1 keys around it (fewer at the edges): the
  // kernel's work is O(S w), never O(S^2).
  PatternSpec spec;
  spec.window = 5;
  const int64_t S = 1000;
  const SparsePattern p = make_pattern(spec, S, S);
  std::vector<Span> spans;
  int64_t visited = 0;
  for (int64_t i = 0; i < S; ++i) {
    row_spans(p, i, spans);
    ASSERT_EQ(spans.size(), 1u);
    visited += spans[0].end - spans[0].begin;
  }
  EXPECT_EQ(visited, S * 11 - 2 * (5 + 4 + 3 + 2 + 1));
}

TEST(LocalAttention, RejectsANegativeWindow) {
  PatternSpec spec;
  spec.window = -1;
  EXPECT_THROW(make_pattern(spec, 4, 4), Error);
}
