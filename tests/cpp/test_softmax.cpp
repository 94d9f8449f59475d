// masked_softmax and softmax_row against the float64 reference: valid lengths, causal, boolean
// and additive masks broadcast over leading dimensions, extreme logits, fully masked rows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "attnlab/mask.hpp"
#include "attnlab/softmax.hpp"
#include "attnlab/thread_pool.hpp"
#include "check.hpp"
#include "reference.hpp"

using attnlab::AdditiveMask;
using attnlab::BoolMask;
using attnlab::MaskSet;
using attnlab::Shape;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Scores [2, 3, Sq, Sk]: lead [B, H] = [2, 3].
const Shape kLead{2, 3};
constexpr int64_t kB = 2, kH = 3, kBatch = 6, kSq = 4, kSk = 5;
const Shape kTarget{kB, kH, kSq, kSk};

std::vector<float> Softmax(const std::vector<float>& x, int64_t batch, int64_t Sq, int64_t Sk,
                       const MaskSet& m, attnlab::ThreadPool* pool = nullptr) {
  std::vector<float> y(x.size(), kNaN);  // NaN: an element the op forgot to write shows up
  attnlab::masked_softmax(x.data(), y.data(), batch, Sq, Sk, m, pool);
  return y;
}

bool All(int64_t, int64_t, int64_t) { return true; }
double NoBias(int64_t, int64_t, int64_t) { return 0.0; }

// Rows of y sum to 1, or are all exactly zero when `empty(b, i)`.
template <class Empty>
void ExpectRowSums(const std::vector<float>& y, int64_t batch, int64_t Sq, int64_t Sk,
                   Empty empty) {
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < Sq; ++i) {
      const float* row = y.data() + (b * Sq + i) * Sk;
      if (empty(b, i)) {
        EXPECT_TRUE(check::AllZero(row, static_cast<size_t>(Sk))) << "row b=" << b << " i=" << i;
      } else {
        double s = 0.0;
        for (int64_t j = 0; j < Sk; ++j) s += row[j];
        EXPECT_NEAR(s, 1.0, 1e-5) << "row b=" << b << " i=" << i;
      }
    }
}

}  // namespace

TEST(SoftmaxRow, MatchesReference) {
  for (int64_t n : {1, 2, 3, 4, 5, 8, 17, 100}) {
    std::vector<float> x = ref::random(static_cast<size_t>(n), 10 + static_cast<uint32_t>(n), -8, 8);
    std::vector<double> s(x.begin(), x.end());
    const ref::Row want = ref::softmax(s, std::vector<bool>(static_cast<size_t>(n), true));
    EXPECT_TRUE(attnlab::softmax_row(x.data(), n));
    EXPECT_TRUE(check::AllClose(x, want.w)) << "n=" << n;
  }
}

TEST(SoftmaxRow, EmptyRowReturnsFalse) {
  EXPECT_FALSE(attnlab::softmax_row(nullptr, 0));
  std::vector<float> guard{1.5f, 2.5f};
  EXPECT_FALSE(attnlab::softmax_row(guard.data(), 0));
  EXPECT_EQ(guard, (std::vector<float>{1.5f, 2.5f}));  // nothing written
}

TEST(SoftmaxRow, NegativeInfinityEntries) {
  std::vector<float> x{-kInf, 0.5f, -kInf, -1.0f, -kInf};
  EXPECT_TRUE(attnlab::softmax_row(x.data(), 5));
  const ref::Row want = ref::softmax({0, 0.5, 0, -1.0, 0}, {false, true, false, true, false});
  EXPECT_TRUE(check::AllClose(x, want.w));
  EXPECT_EQ(x[0], 0.0f);
  EXPECT_EQ(x[2], 0.0f);
  EXPECT_EQ(x[4], 0.0f);

  std::vector<float> all(7, -kInf);
  EXPECT_FALSE(attnlab::softmax_row(all.data(), 7));
  EXPECT_TRUE(check::AllZero(all.data(), all.size()));
}

TEST(MaskedSoftmax, NoMasks) {
  const auto x = ref::random(kBatch * kSq * kSk, 1, -4, 4);
  const auto y = Softmax(x, kBatch, kSq, kSk, MaskSet{});
  EXPECT_TRUE(check::AllClose(y, ref::masked_softmax(x, kBatch, kSq, kSk, All, NoBias)));
  ExpectRowSums(y, kBatch, kSq, kSk, [](int64_t, int64_t) { return false; });
}

TEST(MaskedSoftmax, ValidLensPerLeadingPrefix) {
  const auto x = ref::random(kBatch * kSq * kSk, 2, -4, 4);
  // Length 1 (one for everything), 2 (one per B, shared by H) and 6 (one per (B, H)).
  const std::vector<std::vector<int32_t>> cases{{3}, {4, 0}, {5, 0, 1, 2, 3, 4}};
  for (const auto& lens : cases) {
    SCOPED_TRACE("validLens length " + std::to_string(lens.size()));
    MaskSet m;
    m.valid_lens = attnlab::make_valid_lens(lens.data(), static_cast<int64_t>(lens.size()), kLead,
                                            kSq, kSk, "validLens");
    const int64_t per = kBatch / static_cast<int64_t>(lens.size());
    auto len = [&](int64_t b) { return static_cast<int64_t>(lens[b / per]); };
    const auto y = Softmax(x, kBatch, kSq, kSk, m);
    EXPECT_TRUE(check::AllClose(
        y, ref::masked_softmax(x, kBatch, kSq, kSk,
                               [&](int64_t b, int64_t, int64_t j) { return j < len(b); }, NoBias)));
    ExpectRowSums(y, kBatch, kSq, kSk, [&](int64_t b, int64_t) { return len(b) == 0; });
  }
}

TEST(MaskedSoftmax, ValidLensPerRow) {
  const auto x = ref::random(kBatch * kSq * kSk, 3, -4, 4);
  std::vector<int32_t> lens(kBatch * kSq);
  for (size_t r = 0; r < lens.size(); ++r) lens[r] = static_cast<int32_t>((r * 7 + 3) % (kSk + 1));
  MaskSet m;
  m.valid_lens = attnlab::make_valid_lens(lens.data(), static_cast<int64_t>(lens.size()), kLead,
                                          kSq, kSk, "validLens");
  auto len = [&](int64_t b, int64_t i) { return static_cast<int64_t>(lens[b * kSq + i]); };
  const auto y = Softmax(x, kBatch, kSq, kSk, m);
  EXPECT_TRUE(check::AllClose(
      y, ref::masked_softmax(x, kBatch, kSq, kSk,
                             [&](int64_t b, int64_t i, int64_t j) { return j < len(b, i); },
                             NoBias)));
  ExpectRowSums(y, kBatch, kSq, kSk, [&](int64_t b, int64_t i) { return len(b, i) == 0; });
}

TEST(MaskedSoftmax, ValidLensSingleQueryRow) {
  // Sq == 1: a length-batch array is both "one per row" and "one per (B, H)"; same meaning.
  const auto x = ref::random(kBatch * kSk, 4, -4, 4);
  const std::vector<int32_t> lens{1, 2, 3, 4, 5, 0};
  MaskSet m;
  m.valid_lens = attnlab::make_valid_lens(lens.data(), 6, kLead, 1, kSk, "validLens");
  const auto y = Softmax(x, kBatch, 1, kSk, m);
  EXPECT_TRUE(check::AllClose(
      y, ref::masked_softmax(x, kBatch, 1, kSk,
                             [&](int64_t b, int64_t, int64_t j) { return j < lens[b]; }, NoBias)));
}

TEST(MaskedSoftmax, ValidLensErrorsNameTheArgument) {
  const std::vector<int32_t> ok(24, 1);
  // Neither a leading prefix (1, 2, 6) nor one per row (24).
  EXPECT_TRUE(check::ThrowsError(
      [&] { attnlab::make_valid_lens(ok.data(), 3, kLead, kSq, kSk, "myLens"); }, "myLens"));
  EXPECT_TRUE(check::ThrowsError(
      [&] { attnlab::make_valid_lens(ok.data(), 4, kLead, kSq, kSk, "myLens"); }, "myLens"));
  const std::vector<int32_t> too_big{1, kSk + 1};
  EXPECT_TRUE(check::ThrowsError(
      [&] { attnlab::make_valid_lens(too_big.data(), 2, kLead, kSq, kSk, "myLens"); }, "myLens"));
  const std::vector<int32_t> negative{-1, 2};
  EXPECT_TRUE(check::ThrowsError(
      [&] { attnlab::make_valid_lens(negative.data(), 2, kLead, kSq, kSk, "myLens"); }, "myLens"));
  // The bounds themselves are valid.
  const std::vector<int32_t> edges{0, kSk};
  EXPECT_NO_THROW(attnlab::make_valid_lens(edges.data(), 2, kLead, kSq, kSk, "myLens"));
}

TEST(MaskedSoftmax, Causal) {
  for (auto [Sq, Sk] : std::vector<std::pair<int64_t, int64_t>>{{5, 5}, {3, 7}, {7, 3}, {1, 4}}) {
    SCOPED_TRACE("Sq=" + std::to_string(Sq) + " Sk=" + std::to_string(Sk));
    const auto x = ref::random(kBatch * Sq * Sk, 5, -4, 4);
    MaskSet m;
    m.causal = true;
    const auto y = Softmax(x, kBatch, Sq, Sk, m);
    const auto want = ref::masked_softmax(
        x, kBatch, Sq, Sk, [](int64_t, int64_t i, int64_t j) { return j <= i; }, NoBias);
    EXPECT_TRUE(check::AllClose(y, want));
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t i = 0; i < Sq; ++i)
        for (int64_t j = i + 1; j < Sk; ++j) EXPECT_EQ(y[(b * Sq + i) * Sk + j], 0.0f);
    ExpectRowSums(y, kBatch, Sq, Sk, [](int64_t, int64_t) { return false; });
  }
}

TEST(MaskedSoftmax, BoolMaskBothPolarities) {
  const auto x = ref::random(kBatch * kSq * kSk, 6, -4, 4);
  std::vector<uint8_t> bits(kBatch * kSq * kSk);
  const auto r = ref::random(bits.size(), 7, 0, 1);
  for (size_t t = 0; t < bits.size(); ++t) bits[t] = r[t] < 0.4f ? 1 : 0;
  for (bool true_blocks : {true, false}) {
    SCOPED_TRACE(true_blocks ? "true = blocked" : "true = may attend");
    MaskSet m;
    m.bools.push_back(BoolMask{bits.data(), attnlab::broadcast_to(kTarget, kTarget, "mask"),
                               true_blocks});
    auto allowed = [&](int64_t b, int64_t i, int64_t j) {
      const bool bit = bits[(b * kSq + i) * kSk + j] != 0;
      return true_blocks ? !bit : bit;
    };
    const auto y = Softmax(x, kBatch, kSq, kSk, m);
    EXPECT_TRUE(check::AllClose(y, ref::masked_softmax(x, kBatch, kSq, kSk, allowed, NoBias)));
    ExpectRowSums(y, kBatch, kSq, kSk, [&](int64_t b, int64_t i) {
      for (int64_t j = 0; j < kSk; ++j)
        if (allowed(b, i, j)) return false;
      return true;
    });
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t i = 0; i < kSq; ++i)
        for (int64_t j = 0; j < kSk; ++j)
          if (!allowed(b, i, j)) {
            EXPECT_EQ(y[(b * kSq + i) * kSk + j], 0.0f);
          }
  }
}

TEST(MaskedSoftmax, AdditiveMaskWithNegativeInfinity) {
  const auto x = ref::random(kBatch * kSq * kSk, 8, -4, 4);
  auto add = ref::random(kBatch * kSq * kSk, 9, -2, 2);
  for (size_t t = 0; t < add.size(); t += 3) add[t] = -kInf;
  for (int64_t j = 0; j < kSk; ++j) add[(1 * kSq + 2) * kSk + j] = -kInf;  // one row all -inf
  MaskSet m;
  m.additive.push_back(AdditiveMask{add.data(), attnlab::broadcast_to(kTarget, kTarget, "bias")});
  const auto y = Softmax(x, kBatch, kSq, kSk, m);
  EXPECT_TRUE(check::AllClose(
      y, ref::masked_softmax(x, kBatch, kSq, kSk, All, [&](int64_t b, int64_t i, int64_t j) {
        return static_cast<double>(add[(b * kSq + i) * kSk + j]);
      })));
  EXPECT_TRUE(check::AllZero(y.data() + (1 * kSq + 2) * kSk, kSk));
  for (size_t t = 0; t < add.size(); t += 3) EXPECT_EQ(y[t], 0.0f) << t;
}

TEST(MaskedSoftmax, MasksBroadcastOverLeadingDims) {
  const auto x = ref::random(kBatch * kSq * kSk, 11, -4, 4);
  for (const Shape& shape : std::vector<Shape>{{kSq, kSk}, {kB, 1, kSq, kSk}, {kB, 1, 1, kSk},
                                               {kSq, 1}, {1, kH, kSq, 1}, {kSk}}) {
    SCOPED_TRACE("mask shape " + attnlab::to_string(shape));
    const size_t n = static_cast<size_t>(ref::product(shape));
    // Bits with at least one visible key per broadcast row most of the time; both kinds at once.
    std::vector<uint8_t> bits(n);
    const auto r = ref::random(n, 12, 0, 1);
    for (size_t t = 0; t < n; ++t) bits[t] = r[t] < 0.3f ? 1 : 0;
    auto add = ref::random(n, 13, -3, 3);
    add[n / 2] = -kInf;
    MaskSet m;
    m.bools.push_back(BoolMask{bits.data(), attnlab::broadcast_to(shape, kTarget, "mask"), true});
    m.additive.push_back(AdditiveMask{add.data(), attnlab::broadcast_to(shape, kTarget, "bias")});
    auto flat = [](int64_t b, int64_t i, int64_t j) { return (b * kSq + i) * kSk + j; };
    const auto y = Softmax(x, kBatch, kSq, kSk, m);
    EXPECT_TRUE(check::AllClose(
        y, ref::masked_softmax(
               x, kBatch, kSq, kSk,
               [&](int64_t b, int64_t i, int64_t j) {
                 return bits[ref::broadcast_index(shape, kTarget, flat(b, i, j))] == 0;
               },
               [&](int64_t b, int64_t i, int64_t j) {
                 return static_cast<double>(add[ref::broadcast_index(shape, kTarget, flat(b, i, j))]);
               })));
  }
}

TEST(MaskedSoftmax, AllMaskKindsTogether) {
  const auto x = ref::random(kBatch * kSq * kSk, 14, -4, 4);
  const std::vector<int32_t> lens{4, 2};
  std::vector<uint8_t> attend(kSq * kSk), pad(kB * kSk);
  for (size_t t = 0; t < attend.size(); ++t) attend[t] = (t % 4 != 1);  // true = may attend
  for (size_t t = 0; t < pad.size(); ++t) pad[t] = (t % 5 == 0);        // true = blocked
  const auto add = ref::random(kSq * kSk, 15, -1, 1);
  MaskSet m;
  m.causal = true;
  m.valid_lens = attnlab::make_valid_lens(lens.data(), 2, kLead, kSq, kSk, "validLens");
  m.bools.push_back(BoolMask{attend.data(), attnlab::broadcast_to({kSq, kSk}, kTarget, "a"), false});
  m.bools.push_back(
      BoolMask{pad.data(), attnlab::broadcast_to({kB, 1, 1, kSk}, kTarget, "pad"), true});
  m.additive.push_back(AdditiveMask{add.data(), attnlab::broadcast_to({kSq, kSk}, kTarget, "b")});
  const auto y = Softmax(x, kBatch, kSq, kSk, m);
  EXPECT_TRUE(check::AllClose(
      y, ref::masked_softmax(
             x, kBatch, kSq, kSk,
             [&](int64_t b, int64_t i, int64_t j) {
               return j <= i && j < lens[b / kH] && attend[i * kSk + j] &&
                      !pad[(b / kH) * kSk + j];
             },
             [&](int64_t, int64_t i, int64_t j) { return static_cast<double>(add[i * kSk + j]); })));
}

TEST(MaskedSoftmax, ExtremeLogits) {
  // Rows: all 1e4; all -1e4; mixed 1e4 / -1e4; near-equal large values; spread of -1e4 values.
  const int64_t Sk = 6;
  const std::vector<float> x{
      1e4f,  1e4f,  1e4f,  1e4f,  1e4f,  1e4f,   //
      -1e4f, -1e4f, -1e4f, -1e4f, -1e4f, -1e4f,  //
      1e4f,  -1e4f, 1e4f,  -1e4f, -1e4f, 1e4f,   //
      1e4f,  9999.f, 9998.f, -1e4f, 1e4f, 9997.5f,  //
      -1e4f, -9999.f, -1e4f, -9998.f, -1e4f, -9999.5f,  //
      3e38f, -3e38f, 3e38f, 0.0f, -1e4f, 1e4f,  // differences overflow float
      -3e38f, -3e38f, -3e38f, -3e38f, -3e38f, -3e38f,
  };
  const int64_t rows = static_cast<int64_t>(x.size()) / Sk;
  const auto y = Softmax(x, 1, rows, Sk, MaskSet{});
  for (float v : y) EXPECT_TRUE(std::isfinite(v)) << v;
  EXPECT_TRUE(check::AllClose(y, ref::masked_softmax(x, 1, rows, Sk, All, NoBias)));
  ExpectRowSums(y, 1, rows, Sk, [](int64_t, int64_t) { return false; });
  // -1e4 next to 1e4 underflows to exactly zero weight.
  EXPECT_EQ(y[2 * Sk + 1], 0.0f);
  EXPECT_EQ(y[3 * Sk + 3], 0.0f);
  EXPECT_EQ(y[5 * Sk + 1], 0.0f);
  EXPECT_FLOAT_EQ(y[5 * Sk + 0], 0.5f);

  // The same through an additive mask and causal masking.
  MaskSet m;
  m.causal = true;
  std::vector<float> add(x.size(), 0.0f);
  for (size_t t = 0; t < add.size(); t += 4) add[t] = -1e4f;
  m.additive.push_back(AdditiveMask{add.data(), attnlab::broadcast_to({rows, Sk}, {rows, Sk}, "b")});
  const auto y2 = Softmax(x, 1, rows, Sk, m);
  EXPECT_TRUE(check::AllClose(
      y2, ref::masked_softmax(x, 1, rows, Sk, [](int64_t, int64_t i, int64_t j) { return j <= i; },
                              [&](int64_t, int64_t i, int64_t j) {
                                return static_cast<double>(add[i * Sk + j]);
                              })));
}

TEST(MaskedSoftmax, FullyMaskedRowsAreExactZeros) {
  const auto x = ref::random(kBatch * kSq * kSk, 16, -4, 4);
  // Each mechanism blocks exactly one row of its own: (b=0,i=1), (b=2,i=3), (b=4,*), (b=5,i=0).
  std::vector<uint8_t> blocked(kBatch * kSq * kSk, 0);
  for (int64_t j = 0; j < kSk; ++j) blocked[(0 * kSq + 1) * kSk + j] = 1;
  std::vector<float> add(kBatch * kSq * kSk, 0.5f);
  for (int64_t j = 0; j < kSk; ++j) add[(2 * kSq + 3) * kSk + j] = -kInf;
  std::vector<int32_t> lens(kBatch * kSq, kSk);
  for (int64_t i = 0; i < kSq; ++i) lens[4 * kSq + i] = 0;
  lens[5 * kSq + 0] = 0;
  MaskSet m;
  m.bools.push_back(BoolMask{blocked.data(), attnlab::broadcast_to(kTarget, kTarget, "m"), true});
  m.additive.push_back(AdditiveMask{add.data(), attnlab::broadcast_to(kTarget, kTarget, "a")});
  m.valid_lens = attnlab::make_valid_lens(lens.data(), static_cast<int64_t>(lens.size()), kLead,
                                          kSq, kSk, "validLens");
  const auto y = Softmax(x, kBatch, kSq, kSk, m);
  auto empty = [](int64_t b, int64_t i) {
    return (b == 0 && i == 1) || (b == 2 && i == 3) || b == 4 || (b == 5 && i == 0);
  };
  ExpectRowSums(y, kBatch, kSq, kSk, empty);
  for (float v : y) EXPECT_FALSE(std::isnan(v));
}

TEST(MaskedSoftmax, ZeroKeys) {
  // Sk == 0: nothing to write and nothing to read; must not crash.
  std::vector<float> x, y;
  MaskSet m;
  m.causal = true;
  attnlab::masked_softmax(x.data(), y.data(), kBatch, kSq, 0, m, nullptr);
  SUCCEED();
}

TEST(MaskedSoftmax, ThreadCountInvariance) {
  const int64_t batch = 7, Sq = 9, Sk = 13;
  const auto x = ref::random(batch * Sq * Sk, 17, -6, 6);
  std::vector<int32_t> lens{13, 0, 5, 9, 1, 13, 7};
  MaskSet m;
  m.causal = true;
  m.valid_lens = attnlab::make_valid_lens(lens.data(), batch, {batch}, Sq, Sk, "validLens");
  const auto base = Softmax(x, batch, Sq, Sk, m, nullptr);
  for (int threads : {1, 2, 3}) {
    attnlab::ThreadPool pool(threads);
    EXPECT_TRUE(check::BitwiseEqual(Softmax(x, batch, Sq, Sk, m, &pool), base)) << threads;
  }
}
