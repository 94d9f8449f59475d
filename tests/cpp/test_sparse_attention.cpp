// Longformer and BigBird attention against dense float64 attention masked by the same pattern,
// the patterns against their definitions, and the masks that compose with them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>
#include <vector>

#include "attnlab/alibi.hpp"
#include "attnlab/error.hpp"
#include "attnlab/sparse_attention.hpp"
#include "reference.hpp"

using namespace attnlab;

namespace {

constexpr double kTol = 1e-5;
using Allowed = std::function<bool(int64_t, int64_t, int64_t)>;
using Bias = std::function<double(int64_t, int64_t, int64_t)>;

const Bias kNoBias = [](int64_t, int64_t, int64_t) { return 0.0; };

PatternSpec longformer(int64_t window, std::vector<int64_t> global) {
  PatternSpec s;
  s.type = PatternType::Longformer;
  s.window = window;
  s.global = std::move(global);
  return s;
}

PatternSpec bigbird(int64_t block, int64_t window_blocks, std::vector<int64_t> global,
                    int64_t random_blocks, uint64_t seed) {
  PatternSpec s;
  s.type = PatternType::BigBird;
  s.block = block;
  s.window_blocks = window_blocks;
  s.global = std::move(global);
  s.random_blocks = random_blocks;
  s.seed = seed;
  return s;
}

bool has(const std::vector<int64_t>& xs, int64_t x) {
  return std::find(xs.begin(), xs.end(), x) != xs.end();
}

// The pattern's rule, written from the papers' definitions (BigBird's random blocks taken from
// the drawn pattern, which RandomBlocksFollowTheRules checks on its own).
Allowed rule(const SparsePattern& p) {
  const PatternSpec& s = p.spec;
  switch (s.type) {
    case PatternType::Local:
      return [=](int64_t, int64_t i, int64_t j) { return std::abs(i - j) <= s.window; };
    case PatternType::Longformer:
      return [=](int64_t, int64_t i, int64_t j) {
        return std::abs(i - j) <= s.window || has(s.global, i) || has(s.global, j);
      };
    case PatternType::BigBird:
      return [=](int64_t, int64_t i, int64_t j) {
        const int64_t r = i / s.block, c = j / s.block;
        bool random = false;
        for (int64_t t = 0; t < s.random_blocks; ++t) random |= p.random[r * s.random_blocks + t] == c;
        return std::abs(r - c) <= s.window_blocks || has(s.global, r) || has(s.global, c) || random;
      };
  }
  return nullptr;
}

// Sparse attention with `masks` against dense attention restricted to rule && extra, plus bias.
// `magnitude` scales q and k (1e20: scores past float32's range).
void expect_matches_dense(const SparsePattern& p, int64_t batch, int64_t D, int64_t Dv,
                          const MaskSet& masks, const Allowed& extra, const Bias& bias,
                          ThreadPool* pool = nullptr, float magnitude = 1.0f) {
  const int64_t Sq = p.Sq, Sk = p.Sk;
  auto q = ref::random(batch * Sq * D, 11), k = ref::random(batch * Sk * D, 12);
  const auto v = ref::random(batch * Sk * Dv, 13);
  for (float& x : q) x *= magnitude;
  for (float& x : k) x *= magnitude;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  std::vector<float> out(batch * Sq * Dv), weights(batch * Sq * Sk);
  sparse_attention(q.data(), k.data(), v.data(), batch, D, Dv, scale, p, masks, out.data(),
                   weights.data(), pool);
  const Allowed in_pattern = rule(p);
  std::vector<double> want_out, want_weights;
  ref::dot_attention(
      q, k, v, batch, Sq, Sk, D, Dv, scale,
      [&](int64_t b, int64_t i, int64_t j) { return in_pattern(b, i, j) && extra(b, i, j); },
      bias, want_out, want_weights);
  EXPECT_LE(ref::max_error(out, want_out), kTol);
  EXPECT_LE(ref::max_error(weights, want_weights), kTol);
  for (size_t t = 0; t < weights.size(); ++t) {
    if (want_weights[t] == 0.0) ASSERT_EQ(weights[t], 0.0f) << "outside the pattern at " << t;
  }
}

const Allowed kAll = [](int64_t, int64_t, int64_t) { return true; };

}  // namespace

TEST(SparseAttention, LongformerWindowAndGlobalTokens) {
  expect_matches_dense(make_pattern(longformer(2, {0, 20, 5, 5}), 41, 41), 2, 16, 8, {}, kAll, kNoBias);
  expect_matches_dense(make_pattern(longformer(0, {3}), 17, 17), 1, 8, 8, {}, kAll, kNoBias);
  expect_matches_dense(make_pattern(longformer(3, {}), 30, 30), 1, 8, 8, {}, kAll, kNoBias);
}

TEST(SparseAttention, LongformerCrossLengths) {
  // A global index past Sq marks only a key, past Sk only a query.
  expect_matches_dense(make_pattern(longformer(2, {1, 25}), 30, 12), 1, 8, 4, {}, kAll, kNoBias);
  expect_matches_dense(make_pattern(longformer(2, {1, 25}), 12, 30), 1, 8, 4, {}, kAll, kNoBias);
}

TEST(SparseAttention, BigBirdBlocks) {
  // 50 = 6 blocks of 8 and a partial one of 2.
  expect_matches_dense(make_pattern(bigbird(8, 1, {0}, 2, 7), 50, 50), 2, 16, 8, {}, kAll, kNoBias);
  expect_matches_dense(make_pattern(bigbird(4, 0, {0, 9}, 3, 1), 40, 40), 1, 8, 8, {}, kAll, kNoBias);
  expect_matches_dense(make_pattern(bigbird(5, 1, {}, 1, 3), 23, 31), 1, 8, 3, {}, kAll, kNoBias);
}

// The kernel walks row_spans: their lengths summed over the rows are the keys it visits. They are
// exactly the pattern's ones (nothing outside it is computed), and they grow linearly with S.
int64_t visited_keys(const SparsePattern& p) {
  std::vector<Span> spans;
  int64_t n = 0;
  for (int64_t i = 0; i < p.Sq; ++i) {
    row_spans(p, i, spans);
    for (const Span& s : spans) n += s.end - s.begin;
  }
  return n;
}

TEST(SparseAttention, VisitsOnlyThePatternsKeys) {
  for (const PatternSpec& spec : {longformer(16, {0, 7, 300}), bigbird(32, 1, {0}, 2, 5)}) {
    int64_t last = 0;
    for (int64_t S : {512, 1024, 2048}) {
      const SparsePattern p = make_pattern(spec, S, S);
      std::vector<uint8_t> mask(static_cast<size_t>(S * S));
      pattern_mask(p, false, mask.data());
      int64_t ones = 0;
      for (uint8_t m : mask) ones += m;
      EXPECT_EQ(visited_keys(p), ones) << "S=" << S;
      // Doubling S at most a little over doubles the work (global rows and columns are O(S) each).
      if (last > 0) {
        EXPECT_LE(visited_keys(p), 2.2 * last) << "S=" << S;
      }
      if (S == 2048) EXPECT_LT(visited_keys(p), S * S / 5);
      last = visited_keys(p);
    }
  }
}

TEST(SparseAttention, RandomBlocksFollowTheRules) {
  const int64_t S = 200, B = 8, R = 3;
  const SparsePattern p = make_pattern(bigbird(B, 1, {0, 24}, R, 42), S, S);
  const int64_t blocks = S / B;
  ASSERT_EQ(p.random.size(), static_cast<size_t>(blocks * R));
  for (int64_t r = 0; r < blocks; ++r) {
    std::set<int64_t> seen;
    for (int64_t t = 0; t < R; ++t) {
      const int64_t c = p.random[r * R + t];
      if (r == 0 || r == 24) {
        EXPECT_EQ(c, -1);  // global rows see everything already
        continue;
      }
      EXPECT_TRUE(c >= 0 && c < blocks);
      EXPECT_GT(std::abs(c - r), 1) << "random block inside the window";
      EXPECT_TRUE(c != 0 && c != 24) << "random block on a global block";
      EXPECT_TRUE(seen.insert(c).second) << "repeated random block";
    }
  }
  // Seeded: the same seed draws the same blocks, another seed others.
  EXPECT_EQ(make_pattern(bigbird(B, 1, {0, 24}, R, 42), S, S).random, p.random);
  EXPECT_NE(make_pattern(bigbird(B, 1, {0, 24}, R, 43), S, S).random, p.random);
}

TEST(SparseAttention, RandomBlocksRunOutGracefully) {
  // 3 blocks, a window of 2 blocks each side: no block is left to draw.
  const SparsePattern p = make_pattern(bigbird(4, 2, {}, 2, 0), 12, 12);
  for (int64_t c : p.random) EXPECT_EQ(c, -1);
  // Far more random blocks than key blocks: the same draws as asking for all of them, without
  // q_blocks x randomBlocks slots (2^53 - 1 ran out of memory).
  const SparsePattern all = make_pattern(bigbird(1, 0, {}, 5, 3), 5, 5);
  const SparsePattern huge = make_pattern(bigbird(1, 0, {}, (int64_t{1} << 53) - 1, 3), 5, 5);
  EXPECT_EQ(huge.random, all.random);
  EXPECT_EQ(huge.spec.random_blocks, 5);
}

TEST(SparseAttention, PatternMaskIsTheRule) {
  const SparsePattern patterns[] = {
      make_pattern(longformer(3, {2, 17}), 29, 23),
      make_pattern(bigbird(4, 1, {1}, 2, 5), 37, 37),
  };
  for (const SparsePattern& p : patterns) {
    const Allowed in_pattern = rule(p);
    for (bool causal : {false, true}) {
      std::vector<uint8_t> mask(p.Sq * p.Sk);
      pattern_mask(p, causal, mask.data());
      for (int64_t i = 0; i < p.Sq; ++i)
        for (int64_t j = 0; j < p.Sk; ++j)
          ASSERT_EQ(mask[i * p.Sk + j], in_pattern(0, i, j) && (!causal || j <= i)) << i << ", " << j;
    }
  }
}

TEST(SparseAttention, ComposesWithEveryMask) {
  // causal, per-row validLens, a boolean mask broadcast over rows, an additive mask and ALiBi.
  const int64_t batch = 2, S = 24;
  const SparsePattern p = make_pattern(bigbird(4, 1, {0}, 1, 9), S, S);
  MaskSet masks;
  masks.causal = true;
  std::vector<int32_t> lens(batch * S);
  for (int64_t t = 0; t < batch * S; ++t) lens[t] = static_cast<int32_t>((t * 7) % (S + 1));
  masks.valid_lens = make_valid_lens(lens.data(), batch * S, {batch}, S, S, "validLens");
  std::vector<uint8_t> keep(S);
  for (int64_t j = 0; j < S; ++j) keep[j] = j % 5 != 3;
  masks.bools.push_back({keep.data(), broadcast_to({S}, {batch, S, S}, "mask"), false});
  const auto add = ref::random(S * S, 21);
  masks.additive.push_back({add.data(), broadcast_to({S, S}, {batch, S, S}, "add")});
  const std::vector<float> slopes = {0.5f, 0.25f};
  std::vector<float> table(2 * (2 * S - 1));
  masks.additive.push_back(alibi_bias(slopes.data(), 2, batch, S, S, table.data()));
  expect_matches_dense(
      p, batch, 8, 6, masks,
      [&](int64_t b, int64_t i, int64_t j) { return j <= i && j < lens[b * S + i] && keep[j]; },
      [&](int64_t b, int64_t i, int64_t j) {
        return double(add[i * S + j]) - double(slopes[b % 2]) * std::abs(i - j);
      });
}

// Scores past float32 (+inf, inf - inf = NaN, or every visible score -inf) give the float64
// softmax, as dense attention does (flash_attention.cpp's exact_row), with and without masks.
TEST(SparseAttention, ScoresBeyondFloatRangeGiveTheFloat64Softmax) {
  PatternSpec local;
  local.type = PatternType::Local;
  local.window = 2;
  for (const float magnitude : {3e19f, 1e20f, 1e30f}) {
    SCOPED_TRACE(magnitude);
    expect_matches_dense(make_pattern(local, 9, 9), 1, 4, 2, {}, kAll, kNoBias, nullptr, magnitude);
    expect_matches_dense(make_pattern(longformer(2, {0, 5}), 30, 30), 2, 8, 3, {}, kAll, kNoBias, nullptr, magnitude);
    expect_matches_dense(make_pattern(bigbird(4, 1, {0}, 1, 9), 23, 31), 1, 8, 3, {}, kAll, kNoBias, nullptr, magnitude);
    MaskSet masks;
    masks.causal = true;
    const int64_t S = 24;
    const auto add = ref::random(S * S, 21);
    masks.additive.push_back({add.data(), broadcast_to({S, S}, {2, S, S}, "add")});
    expect_matches_dense(
        make_pattern(bigbird(4, 1, {0}, 1, 9), S, S), 2, 8, 6, masks,
        [](int64_t, int64_t i, int64_t j) { return j <= i; },
        [&](int64_t, int64_t i, int64_t j) { return double(add[i * S + j]); }, nullptr, magnitude);
  }
}

// Only a row whose float pass is not finite is recomputed: the others keep their bits.
TEST(SparseAttention, OnlyOverflowingRowsAreRecomputed) {
  const SparsePattern p = make_pattern(longformer(3, {0}), 20, 20);
  const int64_t D = 8, Dv = 4;
  auto q = ref::random(20 * D, 1);
  const auto k = ref::random(20 * D, 2), v = ref::random(20 * Dv, 3);
  std::vector<float> a(20 * Dv), wa(20 * 20), b(20 * Dv), wb(20 * 20);
  sparse_attention(q.data(), k.data(), v.data(), 1, D, Dv, 0.25f, p, {}, a.data(), wa.data(), nullptr);
  for (int64_t c = 0; c < D; ++c) q[7 * D + c] = 3e38f;  // row 7's scores overflow
  sparse_attention(q.data(), k.data(), v.data(), 1, D, Dv, 0.25f, p, {}, b.data(), wb.data(), nullptr);
  for (int64_t i = 0; i < 20; ++i) {
    const bool same_out = std::equal(a.begin() + i * Dv, a.begin() + (i + 1) * Dv, b.begin() + i * Dv);
    const bool same_w = std::equal(wa.begin() + i * 20, wa.begin() + (i + 1) * 20, wb.begin() + i * 20);
    if (i == 7) {
      EXPECT_FALSE(same_w);
      for (int64_t t = i * Dv; t < (i + 1) * Dv; ++t) EXPECT_TRUE(std::isfinite(b[t]));
    } else {
      EXPECT_TRUE(same_out && same_w) << "row " << i;
    }
  }
}

TEST(SparseAttention, ThreadCountDoesNotChangeTheResult) {
  const SparsePattern p = make_pattern(longformer(4, {0, 33}), 70, 70);
  const int64_t batch = 3, D = 16;
  const auto q = ref::random(batch * 70 * D, 1), k = ref::random(batch * 70 * D, 2),
             v = ref::random(batch * 70 * D, 3);
  std::vector<float> a(batch * 70 * D), b(batch * 70 * D);
  ThreadPool pool(3);
  sparse_attention(q.data(), k.data(), v.data(), batch, D, D, 0.25f, p, {}, a.data(), nullptr, nullptr);
  sparse_attention(q.data(), k.data(), v.data(), batch, D, D, 0.25f, p, {}, b.data(), nullptr, &pool);
  EXPECT_EQ(a, b);
}

TEST(SparseAttention, RejectsBadSpecs) {
  EXPECT_THROW(make_pattern(longformer(-1, {}), 4, 4), Error);
  EXPECT_THROW(make_pattern(longformer(1, {4}), 4, 4), Error);
  EXPECT_THROW(make_pattern(longformer(1, {-1}), 4, 4), Error);
  EXPECT_THROW(make_pattern(bigbird(0, 1, {}, 1, 0), 4, 4), Error);
  EXPECT_THROW(make_pattern(bigbird(2, -1, {}, 1, 0), 4, 4), Error);
  EXPECT_THROW(make_pattern(bigbird(2, 1, {2}, 1, 0), 4, 4), Error);
}

TEST(SparseAttention, PatternTypesByName) {
  EXPECT_EQ(parse_pattern_type("local"), PatternType::Local);
  EXPECT_EQ(parse_pattern_type("longformer"), PatternType::Longformer);
  EXPECT_EQ(parse_pattern_type("bigbird"), PatternType::BigBird);
  try {
    parse_pattern_type("block");
    FAIL() << "no Error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "pattern.type: expected one of 'local', 'longformer', 'bigbird', got 'block'");
  }
}
