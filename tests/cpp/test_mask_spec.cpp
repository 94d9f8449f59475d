// make_masks: a caller's description of the masks (the bindings' MaskArgs) resolved into the
// MaskSet the ops read, checked by applying it to a row of zero scores.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "attnlab/alibi.hpp"
#include "attnlab/error.hpp"
#include "attnlab/mask_spec.hpp"

using namespace attnlab;

namespace {

// Row i of slice b after every mask, with -inf where a key is hidden.
std::vector<float> masked_row(const MaskSet& m, int64_t b, int64_t i, int64_t Sk) {
  std::vector<float> s(Sk, 0.0f);
  const int64_t hi = visible_keys(m, b, i, Sk);
  apply_element_masks(m, b, i, s.data(), hi);
  for (int64_t j = hi; j < Sk; ++j) s[j] = -std::numeric_limits<float>::infinity();
  return s;
}

std::string message_of(const MaskSpec& spec, const Shape& scores) {
  try {
    make_masks(spec, scores);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(MaskSpec, BroadcastsEachMaskOverTheScores) {
  // Scores [2, 3, 4]: a key mask [4] for every row, and a per-slice bias [2, 1, 1].
  const std::vector<uint8_t> keys = {1, 1, 0, 1};
  const std::vector<float> bias = {0.5f, -2.0f};
  MaskSpec spec;
  spec.bools.push_back({keys.data(), {4}, false});
  spec.additive.push_back({bias.data(), {2, 1, 1}});
  const MaskSet m = make_masks(spec, {2, 3, 4});
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(masked_row(m, 0, 2, 4), (std::vector<float>{0.5f, 0.5f, -inf, 0.5f}));
  EXPECT_EQ(masked_row(m, 1, 0, 4), (std::vector<float>{-2.0f, -2.0f, -inf, -2.0f}));
}

TEST(MaskSpec, CausalAndValidLensWithAQueryOffset) {
  // A decoder's last 2 of 5 positions: query i sits at key position i + 3; slice 1 sees 4 keys.
  const std::vector<int32_t> lens = {5, 4};
  MaskSpec spec;
  spec.causal = true;
  spec.query_offset = 3;
  spec.valid_lens = {lens.data(), 2};
  const MaskSet m = make_masks(spec, {2, 2, 5});
  EXPECT_EQ(visible_keys(m, 0, 0, 5), 4);
  EXPECT_EQ(visible_keys(m, 0, 1, 5), 5);
  EXPECT_EQ(visible_keys(m, 1, 1, 5), 4);
}

TEST(MaskSpec, FillsTheAlibiAndT5Tables) {
  // Scores [2 heads, 3, 4] at query offset 1: ALiBi's -slope * |i + 1 - j| plus T5's weight of
  // the bucket of j - (i + 1), each from the table make_masks fills.
  const int64_t H = 2, Sq = 3, Sk = 4;
  const std::vector<float> slopes = {0.5f, 0.25f};
  const T5Params t5{8, 16, true};
  std::vector<float> weights(H * t5.num_buckets);
  for (size_t w = 0; w < weights.size(); ++w) weights[w] = 0.1f * static_cast<float>(w + 1);
  std::vector<float> alibi_table(H * (Sq + Sk - 1)), t5_table(H * (Sq + Sk - 1));
  MaskSpec spec;
  spec.query_offset = 1;
  spec.alibi = {slopes.data(), H, alibi_table.data()};
  spec.t5 = {weights.data(), H, t5, t5_table.data()};
  const MaskSet m = make_masks(spec, {H, Sq, Sk});
  ASSERT_EQ(m.additive.size(), 2u);
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < Sq; ++i) {
      const std::vector<float> row = masked_row(m, h, i, Sk);
      for (int64_t j = 0; j < Sk; ++j) {
        const float expect = -slopes[h] * static_cast<float>(std::abs(i + 1 - j)) +
                             weights[h * t5.num_buckets + t5_bucket(j - (i + 1), t5)];
        EXPECT_FLOAT_EQ(row[j], expect) << h << " " << i << " " << j;
      }
    }
}

TEST(MaskSpec, DefaultSlopesWhenNoneAreGiven) {
  std::vector<float> table(3 * 3);
  MaskSpec spec;
  spec.alibi = {nullptr, 3, table.data()};
  const MaskSet m = make_masks(spec, {3, 2, 2});
  const std::vector<float> slopes = alibi_slopes(3);
  EXPECT_FLOAT_EQ(masked_row(m, 2, 1, 2)[0], -slopes[2]);
}

TEST(MaskSpec, EmptyScoresFillNoTable) {
  std::vector<float> table = {7.0f};
  MaskSpec spec;
  spec.alibi = {nullptr, 1, table.data()};
  EXPECT_TRUE(make_masks(spec, {1, 0, 3}).additive.empty());
  EXPECT_TRUE(make_masks(spec, {1, 3, 0}).additive.empty());
  EXPECT_EQ(table[0], 7.0f);
}

TEST(MaskSpec, NamesWhatDoesNotFit) {
  const std::vector<uint8_t> keys(5, 1);
  const std::vector<int32_t> lens = {9};
  MaskSpec bad_shape;
  bad_shape.bools.push_back({keys.data(), {5}, false});
  EXPECT_NE(message_of(bad_shape, {2, 3, 4}).find("mask"), std::string::npos) << message_of(bad_shape, {2, 3, 4});
  MaskSpec bad_lens;
  bad_lens.valid_lens = {lens.data(), 1};
  EXPECT_NE(message_of(bad_lens, {1, 3, 4}).find("valid_lens"), std::string::npos) << message_of(bad_lens, {1, 3, 4});
  EXPECT_NE(message_of(MaskSpec{}, {4}), "");
}
