// attention() and attention_scores() for every Score against the float64 reference: batching over
// leading dims, masks, fully masked rows, the scale override, thread-count invariance, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "attnlab/attention.hpp"
#include "attnlab/error.hpp"
#include "attnlab/mask.hpp"
#include "attnlab/thread_pool.hpp"
#include "check.hpp"
#include "reference.hpp"

using attnlab::AdditiveMask;
using attnlab::AttentionDims;
using attnlab::BoolMask;
using attnlab::MaskSet;
using attnlab::Score;
using attnlab::ScoreParams;
using attnlab::Shape;

// Readable parameter names in test output.
namespace attnlab {
void PrintTo(Score s, std::ostream* os) { *os << score_name(s); }
}  // namespace attnlab

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

bool All(int64_t, int64_t, int64_t) { return true; }

// One attention call's inputs. Learned scores get Dk != Dq; Dv differs from both.
struct Problem {
  Score score;
  Shape lead;
  int64_t Sq, Sk, Dq, Dk, Dv, hidden = 5;
  std::vector<float> q, k, v, W, Wq, Wk, wv;
  float scale = 0.0f;

  Problem(Score s, Shape lead_, int64_t Sq_, int64_t Sk_, uint32_t seed, int64_t Dq_ = 4,
          int64_t Dv_ = 3)
      : score(s), lead(std::move(lead_)), Sq(Sq_), Sk(Sk_), Dq(Dq_),
        Dk(s == Score::General || s == Score::Additive ? Dq_ + 2 : Dq_), Dv(Dv_) {
    const int64_t B = batch();
    q = ref::random(static_cast<size_t>(B * Sq * Dq), seed);
    k = ref::random(static_cast<size_t>(B * Sk * Dk), seed + 1);
    v = ref::random(static_cast<size_t>(B * Sk * Dv), seed + 2, -2, 2);
    W = ref::random(static_cast<size_t>(Dq * Dk), seed + 3);
    Wq = ref::random(static_cast<size_t>(hidden * Dq), seed + 4);
    Wk = ref::random(static_cast<size_t>(hidden * Dk), seed + 5);
    wv = ref::random(static_cast<size_t>(hidden), seed + 6, -2, 2);
  }
  int64_t batch() const { return ref::product(lead); }
  AttentionDims dims() const {
    AttentionDims d;
    d.lead = lead;
    d.Sq = Sq;
    d.Sk = Sk;
    d.Dq = Dq;
    d.Dk = Dk;
    d.Dv = Dv;
    return d;
  }
  ScoreParams params() const {
    ScoreParams p;
    if (score == Score::General) p.W = W.data();
    if (score == Score::Additive) {
      p.Wq = Wq.data();
      p.Wk = Wk.data();
      p.wv = wv.data();
      p.hidden = hidden;
    }
    p.scale = scale;
    return p;
  }
  Shape target() const {
    Shape t = lead;
    t.push_back(Sq);
    t.push_back(Sk);
    return t;
  }
  // The raw score of query i against key j at leading index b, in double.
  double raw(int64_t b, int64_t i, int64_t j) const {
    const float* qi = q.data() + (b * Sq + i) * Dq;
    const float* kj = k.data() + (b * Sk + j) * Dk;
    switch (score) {
      case Score::Dot: return (scale != 0.0f ? scale : 1.0) * ref::dot(qi, kj, Dq);
      case Score::ScaledDot:
        return (scale != 0.0f ? scale : 1.0 / std::sqrt(static_cast<double>(Dq))) *
               ref::dot(qi, kj, Dq);
      case Score::General: return (scale != 0.0f ? scale : 1.0) * ref::general(qi, W.data(), kj, Dq, Dk);
      case Score::Additive:
        return ref::additive(qi, kj, Wq.data(), Wk.data(), wv.data(), hidden, Dq, Dk);
    }
    return 0.0;
  }
};

struct Result {
  std::vector<float> out, weights;
};

Result Attend(const Problem& p, const MaskSet& m, bool with_weights,
              attnlab::ThreadPool* pool = nullptr) {
  Result r;
  r.out.assign(static_cast<size_t>(p.batch() * p.Sq * p.Dv), kNaN);
  if (with_weights) r.weights.assign(static_cast<size_t>(p.batch() * p.Sq * p.Sk), kNaN);
  attnlab::attention(p.q.data(), p.k.data(), p.v.data(), p.dims(), p.score, p.params(), m,
                     r.out.data(), with_weights ? r.weights.data() : nullptr, pool);
  return r;
}

// Reference out and weights under allowed(b, i, j) and an additive bias(b, i, j).
void Reference(const Problem& p, const std::function<bool(int64_t, int64_t, int64_t)>& allowed,
               const std::function<double(int64_t, int64_t, int64_t)>& bias,
               std::vector<double>& out, std::vector<double>& weights) {
  ref::attention(
      p.batch(), p.Sq, p.Sk, p.Dv,
      [&](int64_t b, int64_t i, int64_t j) { return p.raw(b, i, j) + bias(b, i, j); }, allowed,
      p.v, out, weights);
}

void ExpectMatches(const Problem& p, const MaskSet& m,
                   const std::function<bool(int64_t, int64_t, int64_t)>& allowed,
                   const std::function<double(int64_t, int64_t, int64_t)>& bias =
                       [](int64_t, int64_t, int64_t) { return 0.0; }) {
  std::vector<double> want_out, want_w;
  Reference(p, allowed, bias, want_out, want_w);
  const Result with = Attend(p, m, true);
  EXPECT_TRUE(check::AllClose(with.out, want_out));
  EXPECT_TRUE(check::AllClose(with.weights, want_w));
  const Result without = Attend(p, m, false);
  EXPECT_TRUE(check::BitwiseEqual(without.out, with.out)) << "output depends on weights != null";
  // Each weight row sums to 1, or is all zero (with a zero output) when nothing is visible.
  for (int64_t r = 0; r < p.batch() * p.Sq; ++r) {
    double s = 0.0, want_s = 0.0;
    for (int64_t j = 0; j < p.Sk; ++j) {
      s += with.weights[r * p.Sk + j];
      want_s += want_w[r * p.Sk + j];
    }
    if (want_s == 0.0) {
      EXPECT_TRUE(check::AllZero(with.weights.data() + r * p.Sk, p.Sk)) << "row " << r;
      EXPECT_TRUE(check::AllZero(with.out.data() + r * p.Dv, p.Dv)) << "row " << r;
    } else {
      EXPECT_NEAR(s, 1.0, 1e-5) << "row " << r;
    }
  }
}

class AttentionByScore : public ::testing::TestWithParam<Score> {};

std::string ScoreName(const ::testing::TestParamInfo<Score>& info) {
  return attnlab::score_name(info.param);
}

}  // namespace

TEST_P(AttentionByScore, UnmaskedSingleBatch) {
  Problem p(GetParam(), {}, 5, 7, 100);
  ExpectMatches(p, MaskSet{}, All);
}

TEST_P(AttentionByScore, BatchedOverLeadingDims) {
  Problem p(GetParam(), {2, 3}, 5, 7, 200);
  ExpectMatches(p, MaskSet{}, All);
}

TEST_P(AttentionByScore, DvDiffersFromDq) {
  Problem p(GetParam(), {3}, 4, 6, 250, /*Dq=*/5, /*Dv=*/9);
  ExpectMatches(p, MaskSet{}, All);
}

TEST_P(AttentionByScore, ScoresMatchReference) {
  for (float scale : {0.0f, 0.37f}) {
    Problem p(GetParam(), {2, 3}, 5, 7, 300);
    p.scale = scale;
    std::vector<float> s(static_cast<size_t>(p.batch() * p.Sq * p.Sk), kNaN);
    attnlab::attention_scores(p.q.data(), p.k.data(), p.dims(), p.score, p.params(), s.data(),
                              nullptr);
    std::vector<double> want(s.size());
    for (int64_t b = 0; b < p.batch(); ++b)
      for (int64_t i = 0; i < p.Sq; ++i)
        for (int64_t j = 0; j < p.Sk; ++j) want[(b * p.Sq + i) * p.Sk + j] = p.raw(b, i, j);
    EXPECT_TRUE(check::AllClose(s, want)) << "scale " << scale;
  }
}

TEST_P(AttentionByScore, Causal) {
  for (auto [Sq, Sk] : std::vector<std::pair<int64_t, int64_t>>{{6, 6}, {4, 7}, {7, 4}}) {
    SCOPED_TRACE("Sq=" + std::to_string(Sq) + " Sk=" + std::to_string(Sk));
    Problem p(GetParam(), {2}, Sq, Sk, 400);
    MaskSet m;
    m.causal = true;
    ExpectMatches(p, m, [](int64_t, int64_t i, int64_t j) { return j <= i; });
  }
}

TEST_P(AttentionByScore, ValidLensIncludingZero) {
  Problem p(GetParam(), {2, 3}, 4, 6, 500);
  {
    SCOPED_TRACE("one length per batch prefix");
    const std::vector<int32_t> lens{0, 4};
    MaskSet m;
    m.valid_lens = attnlab::make_valid_lens(lens.data(), 2, p.lead, p.Sq, p.Sk, "validLens");
    ExpectMatches(p, m, [&](int64_t b, int64_t, int64_t j) { return j < lens[b / 3]; });
    const Result r = Attend(p, m, true);
    EXPECT_TRUE(check::AllZero(r.out.data(), static_cast<size_t>(3 * p.Sq * p.Dv)));
  }
  {
    SCOPED_TRACE("one length per query row");
    std::vector<int32_t> lens(static_cast<size_t>(p.batch() * p.Sq));
    for (size_t t = 0; t < lens.size(); ++t) lens[t] = static_cast<int32_t>((t * 5) % 7);
    MaskSet m;
    m.valid_lens = attnlab::make_valid_lens(lens.data(), static_cast<int64_t>(lens.size()),
                                            p.lead, p.Sq, p.Sk, "validLens");
    ExpectMatches(p, m, [&](int64_t b, int64_t i, int64_t j) { return j < lens[b * p.Sq + i]; });
  }
}

TEST_P(AttentionByScore, AllMaskedRowsGiveZeros) {
  Problem p(GetParam(), {2}, 4, 5, 600);
  // Row (b=0, i=2) blocked by a boolean mask; row (b=1, i=0) by an additive -inf row.
  std::vector<uint8_t> blocked(static_cast<size_t>(2 * 4 * 5), 0);
  for (int64_t j = 0; j < 5; ++j) blocked[(0 * 4 + 2) * 5 + j] = 1;
  blocked[(1 * 4 + 3) * 5 + 1] = 1;
  std::vector<float> add(static_cast<size_t>(2 * 4 * 5), 0.0f);
  for (int64_t j = 0; j < 5; ++j) add[(1 * 4 + 0) * 5 + j] = -kInf;
  add[(0 * 4 + 1) * 5 + 4] = -kInf;
  MaskSet m;
  m.bools.push_back(BoolMask{blocked.data(), attnlab::broadcast_to(p.target(), p.target(), "m"), true});
  m.additive.push_back(AdditiveMask{add.data(), attnlab::broadcast_to(p.target(), p.target(), "a")});
  ExpectMatches(
      p, m, [&](int64_t b, int64_t i, int64_t j) { return blocked[(b * 4 + i) * 5 + j] == 0; },
      [&](int64_t b, int64_t i, int64_t j) { return static_cast<double>(add[(b * 4 + i) * 5 + j]); });
  const Result r = Attend(p, m, true);
  EXPECT_TRUE(check::AllZero(r.out.data() + (0 * 4 + 2) * p.Dv, p.Dv));
  EXPECT_TRUE(check::AllZero(r.weights.data() + (0 * 4 + 2) * 5, 5));
  EXPECT_TRUE(check::AllZero(r.out.data() + (1 * 4 + 0) * p.Dv, p.Dv));
  EXPECT_TRUE(check::AllZero(r.weights.data() + (1 * 4 + 0) * 5, 5));
}

TEST_P(AttentionByScore, BroadcastMasksOverLeadingDims) {
  Problem p(GetParam(), {2, 3}, 4, 6, 700);
  const Shape t = p.target();
  std::vector<uint8_t> attend(static_cast<size_t>(2 * 4 * 6));  // [2, 1, Sq, Sk], true = attend
  for (size_t x = 0; x < attend.size(); ++x) attend[x] = (x % 3 != 2);
  std::vector<uint8_t> pad{0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0};  // [2, 1, 1, Sk], true = blocked
  const auto add = ref::random(static_cast<size_t>(4 * 6), 701, -1, 1);  // [Sq, Sk]
  MaskSet m;
  m.bools.push_back(BoolMask{attend.data(), attnlab::broadcast_to({2, 1, 4, 6}, t, "attend"), false});
  m.bools.push_back(BoolMask{pad.data(), attnlab::broadcast_to({2, 1, 1, 6}, t, "pad"), true});
  m.additive.push_back(AdditiveMask{add.data(), attnlab::broadcast_to({4, 6}, t, "bias")});
  m.causal = true;
  ExpectMatches(
      p, m,
      [&](int64_t b, int64_t i, int64_t j) {
        const int64_t B = b / 3;
        return j <= i && attend[(B * 4 + i) * 6 + j] && !pad[B * 6 + j];
      },
      [&](int64_t, int64_t i, int64_t j) { return static_cast<double>(add[i * 6 + j]); });
}

TEST_P(AttentionByScore, ThreadCountInvariance) {
  // Sq = 40 spans three 16-row tasks per batch; masks exercise every path.
  Problem p(GetParam(), {2, 3}, 40, 23, 800);
  std::vector<int32_t> lens{23, 0, 17, 5, 23, 1};
  const auto add = ref::random(static_cast<size_t>(40 * 23), 801, -1, 1);
  MaskSet m;
  m.causal = true;
  m.valid_lens = attnlab::make_valid_lens(lens.data(), 6, p.lead, p.Sq, p.Sk, "validLens");
  m.additive.push_back(AdditiveMask{add.data(), attnlab::broadcast_to({40, 23}, p.target(), "a")});
  const Result base = Attend(p, m, true, nullptr);
  std::vector<float> base_scores(static_cast<size_t>(p.batch() * p.Sq * p.Sk));
  attnlab::attention_scores(p.q.data(), p.k.data(), p.dims(), p.score, p.params(),
                            base_scores.data(), nullptr);
  for (int threads : {1, 2, 3}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    attnlab::ThreadPool pool(threads);
    const Result r = Attend(p, m, true, &pool);
    EXPECT_TRUE(check::BitwiseEqual(r.out, base.out));
    EXPECT_TRUE(check::BitwiseEqual(r.weights, base.weights));
    std::vector<float> s(base_scores.size());
    attnlab::attention_scores(p.q.data(), p.k.data(), p.dims(), p.score, p.params(), s.data(),
                              &pool);
    EXPECT_TRUE(check::BitwiseEqual(s, base_scores));
  }
}

TEST_P(AttentionByScore, NoKeys) {
  // Sk == 0: every query attends to nothing, so every output row is zero.
  Problem p(GetParam(), {2}, 3, 0, 900);
  std::vector<float> out(static_cast<size_t>(2 * 3 * p.Dv), kNaN);
  std::vector<float> weights{42.0f};  // [2, 3, 0]: nothing may be written
  MaskSet m;
  m.causal = true;
  attnlab::attention(p.q.data(), p.k.data(), p.v.data(), p.dims(), p.score, p.params(), m,
                     out.data(), weights.data(), nullptr);
  EXPECT_TRUE(check::AllZero(out.data(), out.size()));
  EXPECT_EQ(weights[0], 42.0f);
  attnlab::attention(p.q.data(), p.k.data(), p.v.data(), p.dims(), p.score, p.params(), MaskSet{},
                     out.data(), nullptr, nullptr);
  EXPECT_TRUE(check::AllZero(out.data(), out.size()));
  std::vector<float> scores{42.0f};  // [2, 3, 0]
  attnlab::attention_scores(p.q.data(), p.k.data(), p.dims(), p.score, p.params(), scores.data(),
                            nullptr);
  EXPECT_EQ(scores[0], 42.0f);
}

TEST_P(AttentionByScore, NoQueries) {
  Problem p(GetParam(), {2}, 0, 4, 950);
  std::vector<float> out{42.0f}, weights{42.0f};
  attnlab::attention(p.q.data(), p.k.data(), p.v.data(), p.dims(), p.score, p.params(), MaskSet{},
                     out.data(), weights.data(), nullptr);
  EXPECT_EQ(out[0], 42.0f);
  EXPECT_EQ(weights[0], 42.0f);
}

INSTANTIATE_TEST_SUITE_P(Scores, AttentionByScore,
                         ::testing::Values(Score::Dot, Score::ScaledDot, Score::General,
                                           Score::Additive),
                         ScoreName);

TEST(Attention, ScaleOverride) {
  for (Score s : {Score::Dot, Score::ScaledDot, Score::General}) {
    SCOPED_TRACE(attnlab::score_name(s));
    Problem p(s, {2}, 4, 5, 1000);
    p.scale = 2.5f;
    ExpectMatches(p, MaskSet{}, All);
    // The override really replaces the default: it changes the result.
    Problem d(s, {2}, 4, 5, 1000);
    EXPECT_FALSE(check::BitwiseEqual(Attend(p, MaskSet{}, true).weights,
                                     Attend(d, MaskSet{}, true).weights));
  }
}

TEST(Attention, ScaledDotDividesBySqrtD) {
  // With Dq = 16 the scaled scores are exactly the dot scores / 4.
  Problem dot(Score::Dot, {}, 3, 4, 1100, 16), scaled(Score::ScaledDot, {}, 3, 4, 1100, 16);
  std::vector<float> a(12), b(12);
  attnlab::attention_scores(dot.q.data(), dot.k.data(), dot.dims(), dot.score, dot.params(),
                            a.data(), nullptr);
  attnlab::attention_scores(scaled.q.data(), scaled.k.data(), scaled.dims(), scaled.score,
                            scaled.params(), b.data(), nullptr);
  for (size_t t = 0; t < a.size(); ++t) EXPECT_FLOAT_EQ(b[t], a[t] / 4.0f) << t;
}

TEST(Attention, InvalidArgumentsThrow) {
  auto call = [](Problem p, AttentionDims d, ScoreParams params) {
    return [p, d, params] {
      std::vector<float> out(4096), w(4096);
      attnlab::attention(p.q.data(), p.k.data(), p.v.data(), d, p.score, params, MaskSet{},
                         out.data(), w.data(), nullptr);
    };
  };
  auto scores = [](Problem p, AttentionDims d, ScoreParams params) {
    return [p, d, params] {
      std::vector<float> s(4096);
      attnlab::attention_scores(p.q.data(), p.k.data(), d, p.score, params, s.data(), nullptr);
    };
  };
  for (Score s : {Score::Dot, Score::ScaledDot}) {
    Problem p(s, {2}, 3, 4, 1200);
    AttentionDims d = p.dims();
    d.Dk = d.Dq + 1;  // dot products need Dq == Dk
    EXPECT_TRUE(check::ThrowsError(call(p, d, p.params()), "k:"));
    EXPECT_TRUE(check::ThrowsError(scores(p, d, p.params()), "k:"));
  }
  {
    Problem p(Score::General, {2}, 3, 4, 1300);
    ScoreParams no_w = p.params();
    no_w.W = nullptr;
    EXPECT_TRUE(check::ThrowsError(call(p, p.dims(), no_w), "W"));
    EXPECT_TRUE(check::ThrowsError(scores(p, p.dims(), no_w), "W"));
  }
  {
    Problem p(Score::Additive, {2}, 3, 4, 1400);
    ScoreParams bad = p.params();
    bad.wv = nullptr;
    EXPECT_TRUE(check::ThrowsError(call(p, p.dims(), bad), "additive"));
    bad = p.params();
    bad.Wq = nullptr;
    EXPECT_TRUE(check::ThrowsError(call(p, p.dims(), bad), "additive"));
    bad = p.params();
    bad.Wk = nullptr;
    EXPECT_TRUE(check::ThrowsError(scores(p, p.dims(), bad), "additive"));
    bad = p.params();
    bad.hidden = 0;
    EXPECT_TRUE(check::ThrowsError(call(p, p.dims(), bad), "additive"));
  }
  {
    Problem p(Score::ScaledDot, {2}, 3, 4, 1500);
    for (int which = 0; which < 5; ++which) {
      AttentionDims d = p.dims();
      if (which == 0) d.Sq = -1;
      if (which == 1) d.Sk = -1;
      if (which == 2) d.Dq = d.Dk = 0;
      if (which == 3) d.Dv = 0;
      if (which == 4) d.Dq = d.Dk = -2;
      EXPECT_TRUE(check::ThrowsError(call(p, d, p.params()), "attention")) << which;
    }
  }
}

TEST(Attention, ParseScore) {
  for (Score s : {Score::Dot, Score::ScaledDot, Score::General, Score::Additive})
    EXPECT_EQ(attnlab::parse_score(attnlab::score_name(s)), s);
  EXPECT_TRUE(check::ThrowsError([] { attnlab::parse_score("Dot"); }, "score"));
  EXPECT_TRUE(check::ThrowsError([] { attnlab::parse_score(""); }, "score"));
  EXPECT_TRUE(check::ThrowsError([] { attnlab::parse_score("scaled-dot"); }, "scaled-dot"));
}
