// Finite inputs whose scores or additive masks pass float32's range (issue 17): attention gives
// the float64 answer (flash_attention.cpp recomputes such rows exactly), on 1 and 2 threads with
// identical bits (where the build has threads); attention_scores, which would have to return
// them, throws an Error, as linear_checked does for a product past float32's range.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "attnlab/attention.hpp"
#include "attnlab/error.hpp"
#include "attnlab/linear.hpp"
#include "attnlab/mask.hpp"
#include "attnlab/thread_pool.hpp"
#include "kernels.hpp"
#include "check.hpp"
#include "reference.hpp"

namespace {

using attnlab::AttentionDims;
using attnlab::MaskSet;
using attnlab::Score;

struct Case {
  int64_t Sq = 37, Sk = 140, D = 8, Dv = 3;  // several key tiles and row groups, ragged ends
  std::vector<float> q, k, v, mask;
  Case(float magnitude, uint32_t seed) {
    q = scaled(static_cast<size_t>(Sq * D), seed, magnitude);
    k = scaled(static_cast<size_t>(Sk * D), seed + 1, magnitude);
    v = ref::random(static_cast<size_t>(Sk * Dv), seed + 2, -2, 2);
  }
  static std::vector<float> scaled(size_t n, uint32_t seed, float s) {
    std::vector<float> x = ref::random(n, seed);
    for (float& e : x) e *= s;
    return x;
  }
  AttentionDims dims() const {
    AttentionDims d;
    d.Sq = Sq;
    d.Sk = Sk;
    d.Dq = d.Dk = D;
    d.Dv = Dv;
    return d;
  }
};

void ExpectExact(const Case& c, const MaskSet& m, double mask_scale = 0.0) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.D));
  std::vector<double> want_out, want_w;
  ref::attention(
      1, c.Sq, c.Sk, c.Dv,
      [&](int64_t, int64_t i, int64_t j) {
        return scale * ref::dot(c.q.data() + i * c.D, c.k.data() + j * c.D, c.D) +
               (mask_scale != 0.0 ? static_cast<double>(c.mask[i * c.Sk + j]) : 0.0);
      },
      [&](int64_t, int64_t i, int64_t j) { return !m.causal || j <= i; }, c.v, want_out, want_w);
  std::vector<float> out1(c.Sq * c.Dv), w1(c.Sq * c.Sk), out2(c.Sq * c.Dv), w2(c.Sq * c.Sk);
  attnlab::attention(c.q.data(), c.k.data(), c.v.data(), c.dims(), Score::ScaledDot, {}, m,
                     out1.data(), w1.data(), nullptr);
  EXPECT_TRUE(check::AllClose(out1, want_out));
  EXPECT_TRUE(check::AllClose(w1, want_w));
#if !defined(__EMSCRIPTEN__) || defined(__EMSCRIPTEN_PTHREADS__)  // the build without pthreads has one thread
  attnlab::ThreadPool pool(2);
  attnlab::attention(c.q.data(), c.k.data(), c.v.data(), c.dims(), Score::ScaledDot, {}, m,
                     out2.data(), w2.data(), &pool);
  EXPECT_TRUE(check::BitwiseEqual(out1, out2));
  EXPECT_TRUE(check::BitwiseEqual(w1, w2));
#endif
}

TEST(Overflow, ScoresBeyondFloatRangeGiveTheFloat64Softmax) {
  for (const bool causal : {false, true}) {
    MaskSet m;
    m.causal = causal;
    ExpectExact(Case(1e20f, 11), m);  // scores up to ~1e40: +inf and inf - inf in float32
    ExpectExact(Case(1e30f, 12), m);  // ~1e60
  }
}

TEST(Overflow, AdditiveMaskNearFloatMax) {
  Case c(1.0f, 21);
  c.mask.assign(static_cast<size_t>(c.Sq * c.Sk), 0.0f);
  for (int64_t i = 0; i < c.Sq; ++i) c.mask[i * c.Sk + (i * 7) % c.Sk] = 3e38f;  // x log2(e) overflows
  for (int64_t j = 0; j < c.Sk; ++j) c.mask[5 * c.Sk + j] = -3e38f;           // a row of equal, huge negatives
  MaskSet m;
  attnlab::AdditiveMask am;
  am.data = c.mask.data();
  am.at = attnlab::broadcast_to({c.Sq, c.Sk}, {c.Sq, c.Sk}, "attnMask");
  m.additive.push_back(am);
  ExpectExact(c, m, 1.0);
}

// The decoder's KV cache holds keys only as packed panels and passes a slice without `k`: the
// exact recomputation of an overflowed row reads the panels too (found by fuzz_model_loader: a
// model file with huge weights made it read through the null `k`).
TEST(Overflow, RowsRecomputedFromKeyPanelsAlone) {
  for (const bool causal : {false, true}) {
    Case c(1e20f, 41);
    std::vector<float> panels(static_cast<size_t>(attnlab::kernels::panels_size(c.Sk, c.D)));
    attnlab::kernels::pack_panels(c.k.data(), c.D, c.Sk, c.D, panels.data());
    MaskSet m;
    m.causal = causal;
    std::vector<float> want_out(c.Sq * c.Dv), want_w(c.Sq * c.Sk), out(c.Sq * c.Dv), w(c.Sq * c.Sk);
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.D));
    attnlab::attention(c.q.data(), c.k.data(), c.v.data(), c.dims(), Score::ScaledDot, {}, m,
                       want_out.data(), want_w.data(), nullptr);
    const attnlab::AttentionSlice sl{c.q.data(), c.D, nullptr, 0, c.v.data(), c.Dv, out.data(), c.Dv, w.data(), 0};
    attnlab::attend_slice(sl, 0, c.Sq, c.Sk, c.D, c.Dv, scale, m, panels.data());
    EXPECT_TRUE(check::BitwiseEqual(out, want_out));
    EXPECT_TRUE(check::BitwiseEqual(w, want_w));
  }
}

TEST(Overflow, ScoresThatCannotBeReturnedThrow) {
  Case c(1e20f, 31);
  std::vector<float> scores(c.Sq * c.Sk);
  EXPECT_THROW(attnlab::attention_scores(c.q.data(), c.k.data(), c.dims(), Score::ScaledDot, {},
                                         scores.data(), nullptr),
               attnlab::Error);
}

TEST(Overflow, LinearCheckedNamesItsArguments) {
  // x [2, 3] . W [2, 3]^T: row 1's products of 1e20 * 1e20 pass float32's range.
  const std::vector<float> x = {1, 2, 3, 1e20f, 0, 0}, W = {1, 0, 0, 1e20f, 0, 0}, bias = {0.5f, 0.5f};
  std::vector<float> y(4);
  attnlab::linear_checked(x.data(), 1, 3, W.data(), bias.data(), 2, y.data(), nullptr);
  EXPECT_EQ(y, (std::vector<float>{1.5f, 1e20f + 0.5f, 0, 0}));
  const auto message = [&](const float* b) {
    try {
      attnlab::linear_checked(x.data(), 2, 3, W.data(), b, 2, y.data(), nullptr);
    } catch (const attnlab::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message(bias.data()), "x, weight, bias: the output overflows float32 (beyond \u00b13.4e38) at index 3; scale the inputs down");
  EXPECT_EQ(message(nullptr), "x, weight: the product overflows float32 (beyond \u00b13.4e38) at index 3; scale the inputs down");
}

}  // namespace
