// The fused (flash-style) attention path against the float64 reference: masks, valid lengths,
// causal with Sq != Sk, weights on and off, tails of every tile size, and thread counts.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "attnlab/attention.hpp"
#include "attnlab/linear.hpp"
#include "attnlab/row_groups.hpp"
#include "check.hpp"
#include "kernels.hpp"
#include "reference.hpp"

using namespace attnlab;

namespace {

struct Case {
  int64_t batch, Sq, Sk, D, Dv;
  bool causal = false;
  std::vector<int32_t> valid_lens;  // empty, one per slice, or one per row
  bool bool_mask = false;           // [Sq, Sk], true = may attend
  bool key_mask = false;            // [batch, 1, Sk] bytes, nonzero = blocked
  bool additive = false;            // [Sq, Sk] floats with some -inf
};

// The WebAssembly test build without pthreads runs everything on the calling thread.
bool threads_available() {
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
  return false;
#else
  return true;
#endif
}

struct Result {
  std::vector<float> out, weights;
};

struct Inputs {
  std::vector<float> q, k, v, add;
  std::vector<uint8_t> allow, block;
};

Inputs make_inputs(const Case& c) {
  Inputs in;
  in.q = ref::random(c.batch * c.Sq * c.D, 1, -2.0f, 2.0f);
  in.k = ref::random(c.batch * c.Sk * c.D, 2, -2.0f, 2.0f);
  in.v = ref::random(c.batch * c.Sk * c.Dv, 3);
  in.allow.resize(c.Sq * c.Sk);
  for (size_t i = 0; i < in.allow.size(); ++i) in.allow[i] = (i * 2654435761u >> 7) % 5 != 0;
  in.block.resize(c.batch * c.Sk);
  for (size_t i = 0; i < in.block.size(); ++i) in.block[i] = i % 7 == 3;
  in.add = ref::random(c.Sq * c.Sk, 9);
  for (size_t i = 0; i < in.add.size(); i += 11) in.add[i] = -std::numeric_limits<float>::infinity();
  return in;
}

MaskSet make_masks(const Case& c, const Inputs& in) {
  MaskSet m;
  m.causal = c.causal;
  const Shape target{c.batch, c.Sq, c.Sk};
  if (c.bool_mask) m.bools.push_back({in.allow.data(), broadcast_to({c.Sq, c.Sk}, target, "m"), false});
  if (c.key_mask) m.bools.push_back({in.block.data(), broadcast_to({c.batch, 1, c.Sk}, target, "k"), true});
  if (c.additive) m.additive.push_back({in.add.data(), broadcast_to({c.Sq, c.Sk}, target, "a")});
  if (!c.valid_lens.empty())
    m.valid_lens = make_valid_lens(c.valid_lens.data(), static_cast<int64_t>(c.valid_lens.size()),
                                   {c.batch}, c.Sq, c.Sk, "v");
  return m;
}

Result run(const Case& c, const Inputs& in, bool weights, ThreadPool* pool) {
  AttentionDims d;
  d.lead = {c.batch};
  d.Sq = c.Sq, d.Sk = c.Sk, d.Dq = d.Dk = c.D, d.Dv = c.Dv;
  Result r;
  r.out.assign(c.batch * c.Sq * c.Dv, -7.0f);
  if (weights) r.weights.assign(c.batch * c.Sq * c.Sk, -7.0f);
  attention(in.q.data(), in.k.data(), in.v.data(), d, Score::ScaledDot, {}, make_masks(c, in),
            r.out.data(), weights ? r.weights.data() : nullptr, pool);
  return r;
}

void expect_matches_reference(const Case& c) {
  const Inputs in = make_inputs(c);
  const Result got = run(c, in, true, nullptr);
  const double scale = 1.0 / std::sqrt(static_cast<double>(c.D));
  std::vector<double> out, weights;
  ref::attention(
      c.batch, c.Sq, c.Sk, c.Dv,
      [&](int64_t b, int64_t i, int64_t j) {
        double s = scale * ref::dot(&in.q[(b * c.Sq + i) * c.D], &in.k[(b * c.Sk + j) * c.D], c.D);
        if (c.additive) s += in.add[i * c.Sk + j];
        return s;
      },
      [&](int64_t b, int64_t i, int64_t j) {
        if (c.causal && j > i) return false;
        if (!c.valid_lens.empty()) {
          const int32_t v = c.valid_lens.size() == static_cast<size_t>(c.batch)
                                ? c.valid_lens[b]
                                : c.valid_lens[b * c.Sq + i];
          if (j >= v) return false;
        }
        if (c.bool_mask && !in.allow[i * c.Sk + j]) return false;
        if (c.key_mask && in.block[b * c.Sk + j]) return false;
        return true;
      },
      in.v, out, weights);
  for (size_t x = 0; x < out.size(); ++x)
    ASSERT_NEAR(got.out[x], out[x], 1e-5 * std::max(1.0, std::abs(out[x]))) << "out " << x;
  for (size_t x = 0; x < weights.size(); ++x) {
    ASSERT_NEAR(got.weights[x], weights[x], 1e-5) << "weight " << x;
    if (weights[x] == 0.0) ASSERT_EQ(got.weights[x], 0.0f) << "masked weight " << x;
  }
  // The output does not depend on whether weights were asked for, nor on the thread count.
  const Result no_weights = run(c, in, false, nullptr);
  EXPECT_EQ(no_weights.out, got.out);
  if (!threads_available()) return;
  ThreadPool pool(3);
  const Result threaded = run(c, in, true, &pool);
  EXPECT_EQ(threaded.out, got.out);
  EXPECT_EQ(threaded.weights, got.weights);
}

}  // namespace

TEST(FlashAttention, DenseTailsOfEveryTile) { expect_matches_reference({2, 70, 131, 67, 33}); }
TEST(FlashAttention, HeadSize64ManyTiles) { expect_matches_reference({2, 200, 300, 64, 64}); }
TEST(FlashAttention, CausalSquare) { expect_matches_reference({2, 150, 150, 64, 64, true}); }
TEST(FlashAttention, CausalSqLessThanSk) { expect_matches_reference({1, 37, 200, 16, 24, true}); }
TEST(FlashAttention, CausalSqGreaterThanSk) { expect_matches_reference({1, 200, 37, 16, 8, true}); }
TEST(FlashAttention, ValidLensPerSlice) {
  expect_matches_reference({3, 50, 140, 32, 16, false, {140, 0, 65}});
}
TEST(FlashAttention, ValidLensPerRowWithCausal) {
  Case c{1, 90, 90, 8, 8, true};
  for (int i = 0; i < 90; ++i) c.valid_lens.push_back((i * 37) % 91);
  expect_matches_reference(c);
}
TEST(FlashAttention, BoolMaskKeyPaddingAndAdditive) {
  expect_matches_reference({2, 80, 150, 64, 64, false, {}, true, true, true});
}
TEST(FlashAttention, EverythingAtOnce) {
  expect_matches_reference({2, 100, 100, 24, 40, true, {100, 51}, true, true, true});
}
// Keys are packed in chunks of 512 on the pool: two full chunks and a tail that ends mid-panel.
TEST(FlashAttention, KeysPackedInChunks) { expect_matches_reference({2, 40, 1100, 64, 64, true}); }
TEST(FlashAttention, NoKeys) { expect_matches_reference({2, 5, 0, 8, 8}); }

TEST(FlashAttention, LargeLogitsStayFinite) {
  // Scores of +-1e4: the running max must keep every exp in range.
  Case c{1, 9, 200, 4, 4};
  Inputs in = make_inputs(c);
  for (auto& x : in.q) x *= 100.0f;
  for (auto& x : in.k) x *= 100.0f;
  const Result r = run(c, in, true, nullptr);
  for (float x : r.out) ASSERT_TRUE(std::isfinite(x));
  for (float x : r.weights) ASSERT_TRUE(std::isfinite(x));
}

TEST(Linear, MatchesFloat64WithBiasStridesAndRowTails) {
  const int64_t rows = 70, in = 37, out = 21, ldx = 40, ldy = 25;
  const auto x = ref::random(rows * ldx, 1), W = ref::random(out * in, 2), b = ref::random(out, 3);
  for (bool bias : {false, true}) {
    std::vector<float> y(rows * ldy, -7.0f), y3 = y;
    linear(x.data(), ldx, rows, in, W.data(), bias ? b.data() : nullptr, out, y.data(), ldy, nullptr);
    if (threads_available()) {
      ThreadPool pool(3);
      linear(x.data(), ldx, rows, in, W.data(), bias ? b.data() : nullptr, out, y3.data(), ldy, &pool);
      EXPECT_EQ(y, y3);
    }
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < ldy; ++j) {
        if (j >= out) {
          ASSERT_EQ(y[r * ldy + j], -7.0f);
          continue;
        }
        double want = bias ? b[j] : 0.0;
        want += ref::dot(&x[r * ldx], &W[j * in], in);
        ASSERT_NEAR(y[r * ldy + j], want, 1e-5 * std::max(1.0, std::abs(want)));
      }
  }
}

// Wide inputs take fewer rows per task (their interleaved copy stays within L2: 64 rows at
// in = 4100), so rows split into several blocks, with a short last one, and threads split the
// columns finer: the same bits at any thread count, and float64's values.
TEST(Linear, RowBlocksAndColumnSplitsOfWideInputs) {
  const int64_t rows = 150, in = 4100, out = 45;
  const auto x = ref::random(rows * in, 4), W = ref::random(out * in, 5), b = ref::random(out, 6);
  std::vector<float> y(rows * out), y2 = y;
  linear(x.data(), in, rows, in, W.data(), b.data(), out, y.data(), out, nullptr);
  if (threads_available()) {
    ThreadPool pool(2);
    linear(x.data(), in, rows, in, W.data(), b.data(), out, y2.data(), out, &pool);
    EXPECT_EQ(y, y2);
  }
  std::vector<float> none(1, -7.0f);  // no rows: nothing written, no task sizing divides by zero
  linear(x.data(), in, 0, in, W.data(), b.data(), out, none.data(), out, nullptr);
  EXPECT_EQ(none[0], -7.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < out; ++j) {
      const double want = b[j] + ref::dot(&x[r * in], &W[j * in], in);
      ASSERT_NEAR(y[r * out + j], want, 1e-4 * std::max(1.0, std::abs(want))) << r << "," << j;
    }
}

// Groups of 6 rows exist only where relaxed SIMD fuses the multiply-add (kernels::kWideRows; the
// relaxed builds are checked in tests/js/relaxed.test.ts): elsewhere a request for 6 keeps 4.
TEST(FlashAttention, RowGroupsOfSixOnlyWhereTheBuildHasThem) {
  EXPECT_EQ(set_row_groups(6), kernels::kWideRows);
  EXPECT_EQ(row_groups(), kernels::kWideRows);
  EXPECT_EQ(set_row_groups(4), 4);
  EXPECT_EQ(set_row_groups(5), 4);
  EXPECT_EQ(row_groups(), 4);
  EXPECT_EQ(std::isfinite(row_groups_probe(4, 2)), true);
}

// A single query row (a decoder's, a generated token's) goes through gemm_1xn, not a group of 4
// with three rows of padding: the same bits as that row within the whole slice's call (every row
// sees the same keys here), weights included, for key tails, several key tiles, 8-column value
// blocks and their tails, and a valid length.
TEST(FlashAttention, SingleRowsGiveTheirGroupsBits) {
  for (const auto& [Sq, Sk, D, Dv, len] : std::vector<std::array<int64_t, 5>>{
           {9, 5, 16, 8, 5}, {7, 131, 64, 64, 131}, {6, 200, 64, 67, 150}, {5, 140, 33, 33, 128}, {3, 300, 24, 96, 300}}) {
    const std::vector<float> q = ref::random(Sq * D, 1, -2.0f, 2.0f), k = ref::random(Sk * D, 2, -2.0f, 2.0f),
                             v = ref::random(Sk * Dv, 3);
    std::vector<float> panels(static_cast<size_t>(kernels::panels_size(Sk, D)));
    kernels::pack_panels(k.data(), D, Sk, D, panels.data());
    const int32_t valid = static_cast<int32_t>(len);
    MaskSet m;
    if (len < Sk) m.valid_lens.data = &valid, m.valid_lens.batch_offset = {0};
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));
    std::vector<float> all_out(Sq * Dv), all_w(Sq * Sk), one_out(Sq * Dv), one_w(Sq * Sk);
    attend_slice({q.data(), D, nullptr, 0, v.data(), Dv, all_out.data(), Dv, all_w.data(), 0}, 0, Sq, Sk, D, Dv, scale, m,
                 panels.data());
    for (int64_t i = 0; i < Sq; ++i)
      attend_slice({q.data(), D, nullptr, 0, v.data(), Dv, one_out.data(), Dv, one_w.data(), 0}, i, i + 1, Sk, D, Dv, scale, m,
                   panels.data());
    EXPECT_TRUE(check::BitwiseEqual(one_out, all_out)) << Sq << " x " << Sk << ", D " << D << ", Dv " << Dv;
    EXPECT_TRUE(check::BitwiseEqual(one_w, all_w)) << Sq << " x " << Sk << ", D " << D << ", Dv " << Dv;
  }
  // A last group of two rows goes as single rows only where both see as many keys. Under a causal
  // mask rows 4 and 5 of 6 see 5 and 6 keys, so they stay a group, whose tile width (6) is not
  // row 4's own: the same bits as the two rows' own call, which is that group. Key 5's value
  // holds an inf, which a group's product reaches in row 4 as 0 * inf (its exact recomputation
  // follows) and a single row 4 does not: split, the bits would differ.
  const int64_t Sq = 6, Sk = 6, D = 16;
  const std::vector<float> q = ref::random(Sq * D, 4), k = ref::random(Sk * D, 5);
  std::vector<float> v = ref::random(Sk * D, 6);
  v[5 * D] = std::numeric_limits<float>::infinity();
  std::vector<float> panels(static_cast<size_t>(kernels::panels_size(Sk, D)));
  kernels::pack_panels(k.data(), D, Sk, D, panels.data());
  MaskSet causal;
  causal.causal = true;
  std::vector<float> all_out(Sq * D), all_w(Sq * Sk), two_out(Sq * D), two_w(Sq * Sk);
  attend_slice({q.data(), D, nullptr, 0, v.data(), D, all_out.data(), D, all_w.data(), 0}, 0, Sq, Sk, D, D, 0.25f, causal,
               panels.data());
  attend_slice({q.data(), D, nullptr, 0, v.data(), D, two_out.data(), D, two_w.data(), 0}, 4, 6, Sk, D, D, 0.25f, causal,
               panels.data());
  EXPECT_TRUE(check::BitwiseEqual(std::vector<float>(two_out.begin() + 4 * D, two_out.end()),
                                  std::vector<float>(all_out.begin() + 4 * D, all_out.end())));
  EXPECT_TRUE(check::BitwiseEqual(std::vector<float>(two_w.begin() + 4 * Sk, two_w.end()),
                                  std::vector<float>(all_w.begin() + 4 * Sk, all_w.end())));
}
