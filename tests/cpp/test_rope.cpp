// Rotary position embedding against its float64 formula, its defining property (scores depend on
// relative position only), and inside multi-head attention.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/multihead.hpp"
#include "attnlab/rope.hpp"
#include "reference.hpp"

using namespace attnlab;

namespace {
constexpr double kTol = 1e-5;
}

TEST(Rope, MatchesItsFormula) {
  const int64_t outer = 2, S = 7, inner = 3, D = 8;
  const auto x = ref::random(outer * S * inner * D, 1);
  for (bool interleaved : {true, false}) {
    for (int64_t offset : {0, 5, 100000}) {
      for (double base : {10000.0, 500.0}) {
        RopeParams p;
        p.base = base;
        p.offset = offset;
        p.interleaved = interleaved;
        std::vector<float> out(x.size());
        rope(x.data(), out.data(), outer, S, inner, D, p);
        std::vector<double> want(x.begin(), x.end());
        ref::rope(want, outer, S, inner, D, base, offset, interleaved);
        EXPECT_LE(ref::max_error(out, want), kTol) << interleaved << " " << offset << " " << base;
      }
    }
  }
}

TEST(Rope, InPlaceAndPositionZeroIsIdentity) {
  const auto x = ref::random(5 * 6, 2);
  std::vector<float> out(x.size()), in_place = x;
  rope(x.data(), out.data(), 1, 5, 1, 6, {});
  rope(in_place.data(), in_place.data(), 1, 5, 1, 6, {});
  EXPECT_EQ(out, in_place);
  for (int c = 0; c < 6; ++c) EXPECT_EQ(out[c], x[c]);  // position 0 turns by 0
}

TEST(Rope, ScoresDependOnRelativePositionOnly) {
  const int64_t D = 16;
  const auto q = ref::random(D, 3), k = ref::random(D, 4);
  const auto rotated_dot = [&](int64_t pq, int64_t pk) {
    RopeParams a, b;
    a.offset = pq;
    b.offset = pk;
    std::vector<float> qr(D), kr(D);
    rope(q.data(), qr.data(), 1, 1, 1, D, a);
    rope(k.data(), kr.data(), 1, 1, 1, D, b);
    return ref::dot(qr.data(), kr.data(), D);
  };
  for (int64_t shift : {1, 17, 1000}) {
    EXPECT_NEAR(rotated_dot(3, 1), rotated_dot(3 + shift, 1 + shift), 1e-5);
    EXPECT_NEAR(rotated_dot(0, 9), rotated_dot(shift, 9 + shift), 1e-5);
  }
  EXPECT_GT(std::abs(rotated_dot(3, 1) - rotated_dot(3, 2)), 1e-3);  // but on the distance, yes
}

TEST(Rope, RejectsOddSizesAndBadBases) {
  std::vector<float> x(12);
  EXPECT_THROW(rope(x.data(), x.data(), 1, 4, 1, 3, {}), Error);
  RopeParams p;
  p.base = 0.0;
  EXPECT_THROW(rope(x.data(), x.data(), 1, 3, 1, 4, p), Error);
}

// A turn lengthens a component by up to sqrt(2): past float32 is an Error naming the argument,
// not a silent inf (which attention would turn into NaN scores).
TEST(Rope, RotationPastFloatRangeThrows) {
  std::vector<float> x(16), out(16);
  for (size_t t = 0; t < x.size(); ++t) x[t] = t % 2 ? 3.4e38f : -3.4e38f;
  RopeParams p;
  p.offset = 1;
  try {
    rope(x.data(), out.data(), 1, 4, 1, 4, p, "q");
    ADD_FAILURE() << "no Error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("q: the rotation overflows float32 (beyond ±3.4e38) at index ", 0), 0u) << e.what();
  }
  // Position 0 turns by nothing: the same inputs stay finite there.
  p.offset = 0;
  EXPECT_NO_THROW(rope(x.data(), out.data(), 1, 1, 1, 4, p));
  EXPECT_EQ(out[1], 3.4e38f);
}

TEST(Rope, MultiHeadAttention) {
  const int64_t B = 2, L = 5, S = 7, E = 12, H = 3;
  const auto query = ref::random(B * L * E, 5), key = ref::random(B * S * E, 6),
             value = ref::random(B * S * E, 7);
  const auto in_w = ref::random(3 * E * E, 8, -0.5f, 0.5f), out_w = ref::random(E * E, 9, -0.5f, 0.5f);
  MultiHeadParams p;
  p.embed_dim = E;
  p.num_heads = H;
  p.in_proj_weight = in_w.data();
  p.out_proj_weight = out_w.data();
  for (bool causal : {false, true}) {
    for (bool interleaved : {true, false}) {
      RopeParams rp;
      rp.interleaved = interleaved;
      rp.offset = 3;
      MaskSet masks;
      masks.causal = causal;
      std::vector<float> out(B * L * E), weights(B * L * S);
      multi_head_attention(query.data(), key.data(), value.data(), B, L, S, p, masks, out.data(),
                           weights.data(), true, nullptr, &rp);
      const ref::MhaResult want = ref::multi_head(
          query.data(), key.data(), value.data(), B, L, S, E, H, in_w.data(), nullptr,
          out_w.data(), nullptr,
          [&](int64_t, int64_t, int64_t i, int64_t j) { return !causal || j <= i; },
          [](int64_t, int64_t, int64_t, int64_t) { return 0.0; },
          [&](std::vector<double>& x, int64_t n) { ref::rope(x, B, n, H, E / H, 10000.0, 3, interleaved); });
      EXPECT_LE(ref::max_error(out, want.out), kTol) << causal << " " << interleaved;
    }
  }
}
