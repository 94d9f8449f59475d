// Finite-difference checks of every op's backward, the optimiser, and a training smoke test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

#include "attnlab/nn/model.hpp"
#include "attnlab/nn/optim.hpp"
#include "attnlab/nn/tape.hpp"

using namespace attnlab::nn;

namespace {

struct Input {
  Tensor t;
  Input(int64_t r, int64_t c, uint32_t seed, float sd = 1.f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> N(0.f, sd);
    t.r = r;
    t.c = c;
    t.v.resize(r * c);
    for (float& x : t.v) x = N(rng);
    t.requires_grad = true;
  }
};

// Builds f(inputs) on a tape, probes it with a fixed random weighting, and compares the analytic
// gradient of every input element with a central difference in double-checked float.
void grad_check(std::vector<Tensor*> ins, const std::function<T(Tape&)>& f, float tol = 2e-2f, float h = 1e-2f) {
  std::vector<float> w;
  auto run = [&](bool backward) {
    Tape tp;
    T y = f(tp);
    if (w.empty()) {
      std::mt19937 rng(99);
      std::normal_distribution<float> N(0.f, 1.f);
      w.resize(y->size());
      for (float& x : w) x = N(rng);
    }
    T s = weighted_sum(tp, y, w);
    if (backward) tp.backward(s);
    return static_cast<double>(s->v[0]);
  };
  for (Tensor* t : ins) t->g.assign(t->v.size(), 0.f);
  run(true);
  for (size_t k = 0; k < ins.size(); ++k) {
    Tensor* t = ins[k];
    const std::vector<float> g = t->g;
    for (size_t i = 0; i < t->v.size(); ++i) {
      const float x0 = t->v[i];
      t->v[i] = x0 + h;
      const double up = run(false);
      t->v[i] = x0 - h;
      const double dn = run(false);
      t->v[i] = x0;
      const double num = (up - dn) / (2.0 * h);
      EXPECT_NEAR(g[i], num, tol * std::max(1.0, std::fabs(num))) << "input " << k << " element " << i;
    }
  }
}

}  // namespace

TEST(NnGrad, Linear) {
  Input x(3, 4, 1), W(5, 4, 2), b(1, 5, 3);
  grad_check({&x.t, &W.t, &b.t}, [&](Tape& tp) { return linear(tp, &x.t, &W.t, &b.t); });
}

TEST(NnGrad, Embedding) {
  Input E(6, 3, 1);
  grad_check({&E.t}, [&](Tape& tp) { return embedding(tp, &E.t, {0, 5, -1, 2, 5}); });
}

TEST(NnGrad, ElementwiseAndShapes) {
  Input a(3, 4, 1), b(3, 4, 2), c(3, 2, 3);
  grad_check({&a.t, &b.t}, [&](Tape& tp) { return mul(tp, add(tp, &a.t, &b.t), scale(tp, &b.t, 0.7f)); });
  grad_check({&a.t}, [&](Tape& tp) { return tanh_(tp, &a.t); });
  grad_check({&a.t}, [&](Tape& tp) { return relu_(tp, &a.t); }, 2e-2f, 1e-3f);
  grad_check({&a.t, &c.t}, [&](Tape& tp) { return concat_cols(tp, &a.t, &c.t); });
  grad_check({&a.t}, [&](Tape& tp) { return slice_rows(tp, &a.t, 1, 2); });
  grad_check({&a.t}, [&](Tape& tp) { return gather_rows(tp, &a.t, {2, 0, 2}); });
  grad_check({&a.t}, [&](Tape& tp) { return scatter_rows(tp, &a.t, {4, 1, 2}, 6); });
  grad_check({&a.t, &b.t}, [&](Tape& tp) { return concat_rows(tp, {&a.t, &b.t, &a.t}); });
  grad_check({&a.t, &b.t}, [&](Tape& tp) { return stack_batch_major(tp, {&a.t, &b.t}); });
  std::vector<float> pe(8, 0.5f);
  grad_check({&a.t}, [&](Tape& tp) { return add_rows_periodic(tp, &a.t, pe, 1); });
}

TEST(NnGrad, GruCell) {
  Input gi(3, 12, 1), gh(3, 12, 2), h(3, 4, 3);
  grad_check({&gi.t, &gh.t, &h.t}, [&](Tape& tp) { return gru_cell(tp, &gi.t, &gh.t, &h.t, {}); });
  grad_check({&gi.t, &gh.t, &h.t}, [&](Tape& tp) { return gru_cell(tp, &gi.t, &gh.t, &h.t, {1, 0, 1}); });
}

TEST(NnGrad, AdditiveAttention) {
  Input qp(2, 4, 1), kp(2 * 3, 4, 2), v(1, 4, 3), vals(2 * 3, 5, 4);
  grad_check({&qp.t, &kp.t, &v.t, &vals.t}, [&](Tape& tp) { return additive_attention(tp, &qp.t, &kp.t, &v.t, &vals.t, 3, {3, 2}); });
  Input kp1(3, 4, 5), vals1(3, 5, 6);  // one source shared by both rows (beam search)
  grad_check({&qp.t, &kp1.t, &v.t, &vals1.t}, [&](Tape& tp) { return additive_attention(tp, &qp.t, &kp1.t, &v.t, &vals1.t, 3, {}); });
}

TEST(NnGrad, MultiHeadAttentionSelfCausalCross) {
  Input q(2 * 3, 4, 1), k(2 * 3, 4, 2), v(2 * 3, 4, 3);
  // self, with key padding
  grad_check({&q.t, &k.t, &v.t}, [&](Tape& tp) { return attention(tp, &q.t, &k.t, &v.t, 2, 3, 3, 2, {3, 2}, false, 0.f); });
  // causal
  grad_check({&q.t, &k.t, &v.t}, [&](Tape& tp) { return attention(tp, &q.t, &k.t, &v.t, 2, 3, 3, 2, {}, true, 0.f); });
  // cross: Lq 3, Lk 2 keys shared across the batch
  Input k2(2, 4, 4), v2(2, 4, 5);
  grad_check({&q.t, &k2.t, &v2.t}, [&](Tape& tp) { return attention(tp, &q.t, &k2.t, &v2.t, 2, 3, 2, 1, {2}, false, 1.f); });
}

// The encoder's inference path: q, k and v read in place as column blocks of one stacked
// product, the same bits as attention() on the three blocks copied out (outputs and weights),
// with key padding; a tensor that needs gradients is refused.
TEST(NnGrad, SelfAttentionStackedReadsTheBlocksInPlace) {
  const int64_t B = 2, L = 9, D = 8, H = 2;
  Input qkv(B * L, 3 * D, 21);
  qkv.t.requires_grad = false;
  Tensor q, k, v;
  for (Tensor* t : {&q, &k, &v}) t->r = B * L, t->c = D, t->v.resize(B * L * D);
  for (int64_t i = 0; i < B * L; ++i)
    for (int64_t c = 0; c < D; ++c) {
      q.v[i * D + c] = qkv.t.v[i * 3 * D + c];
      k.v[i * D + c] = qkv.t.v[i * 3 * D + D + c];
      v.v[i * D + c] = qkv.t.v[i * 3 * D + 2 * D + c];
    }
  const std::vector<int> lens = {9, 4};
  Tape tp;
  tp.grad_enabled = false;
  std::vector<float> w_split(B * H * L * L), w_stacked(B * H * L * L);
  T split = attention(tp, &q, &k, &v, B, L, L, H, lens, false, 0.f, w_split.data());
  T stacked = self_attention_stacked(tp, &qkv.t, B, L, H, lens, w_stacked.data());
  EXPECT_EQ(stacked->v, split->v);
  EXPECT_EQ(w_stacked, w_split);
  qkv.t.requires_grad = true;
  EXPECT_THROW(self_attention_stacked(tp, &qkv.t, B, L, H, lens), std::exception);
}

// Past the fused kernel's first 4-row group and 8-key panel (Lq 6, Lk 10): the gradients, and
// the forward output and weights against a float64 softmax(q k^T * scale) v with the masks.
TEST(NnGrad, MultiHeadAttentionAcrossKernelBlocks) {
  const int64_t B = 2, L = 10, Lq = 6, D = 8, H = 2, dh = D / H;
  Input q(B * Lq, D, 11), k(B * L, D, 12), v(B * L, D, 13);
  const std::vector<int> lens = {10, 7};
  grad_check({&q.t, &k.t, &v.t}, [&](Tape& tp) { return attention(tp, &q.t, &k.t, &v.t, B, Lq, L, H, lens, true, 0.f); });
  Tape tp;
  tp.grad_enabled = false;
  std::vector<float> w(B * H * Lq * L, -1.f);
  T y = attention(tp, &q.t, &k.t, &v.t, B, Lq, L, H, lens, true, 0.f, w.data());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Lq; ++i) {
        const int64_t n = std::min<int64_t>(lens[b], i + 1);
        std::vector<double> p(L, 0.0);
        double mx = -1e300, sum = 0;
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t e = 0; e < dh; ++e) s += static_cast<double>(q.t.v[(b * Lq + i) * D + h * dh + e]) * k.t.v[(b * L + j) * D + h * dh + e];
          p[j] = s / std::sqrt(static_cast<double>(dh));
          mx = std::max(mx, p[j]);
        }
        for (int64_t j = 0; j < n; ++j) sum += (p[j] = std::exp(p[j] - mx));
        for (int64_t j = 0; j < L; ++j) EXPECT_NEAR(w[((b * H + h) * Lq + i) * L + j], j < n ? p[j] / sum : 0.0, 1e-6);
        for (int64_t e = 0; e < dh; ++e) {
          double o = 0;
          for (int64_t j = 0; j < n; ++j) o += p[j] / sum * v.t.v[(b * L + j) * D + h * dh + e];
          EXPECT_NEAR(y->v[(b * Lq + i) * D + h * dh + e], o, 1e-5);
        }
      }
}

// Layer norm sums several rows at a time (interleaved chains, each row in column order): every
// row count of a group and its tail gives the bits of each row alone.
TEST(NnGrad, LayerNormRowGroupsKeepEachRowsBits) {
  for (int64_t N : {1, 3, 5, 8, 13}) {
    Input x(N, 37, 10 + static_cast<uint32_t>(N)), g(1, 37, 30), b(1, 37, 40);
    Tape tp;
    tp.grad_enabled = false;
    const T all = layer_norm(tp, &x.t, &g.t, &b.t);
    for (int64_t i = 0; i < N; ++i) {
      Input row(1, 37, 0);
      std::copy_n(x.t.v.data() + i * 37, 37, row.t.v.data());
      const T one = layer_norm(tp, &row.t, &g.t, &b.t);
      EXPECT_TRUE(std::equal(one->v.begin(), one->v.end(), all->v.begin() + i * 37)) << "N " << N << " row " << i;
    }
  }
}

TEST(NnGrad, LayerNormDropoutCrossEntropy) {
  Input x(3, 5, 1), g(1, 5, 2), b(1, 5, 3);
  grad_check({&x.t, &g.t, &b.t}, [&](Tape& tp) { return layer_norm(tp, &x.t, &g.t, &b.t); });
  grad_check({&x.t}, [&](Tape& tp) {
    Mt19937 rng(5);  // same mask every run
    return dropout(tp, &x.t, 0.4f, rng);
  });
  Input logits(4, 6, 7);
  grad_check({&logits.t}, [&](Tape& tp) { return cross_entropy(tp, &logits.t, {1, -1, 5, 0}, 0.1f); });
  grad_check({&logits.t}, [&](Tape& tp) { return cross_entropy(tp, &logits.t, {2, 3, -1, -1}, 0.f); });
}

// A small model for the whole-model tests: 2 layers, 2 heads, label smoothing 0.1.
static std::unique_ptr<Model> small_model(const std::string& arch, int d, int ffn, int src_vocab, int tgt_vocab,
                                          const char* dropout, uint64_t seed) {
  ModelConfig cfg;
  cfg.set("arch", arch);
  cfg.set("d", std::to_string(d));
  cfg.set("heads", "2");
  cfg.set("layers", "2");
  cfg.set("ffn", std::to_string(ffn));
  cfg.set("src_vocab", std::to_string(src_vocab));
  cfg.set("tgt_vocab", std::to_string(tgt_vocab));
  cfg.set("dropout", dropout);
  cfg.set("label_smoothing", "0.1");
  auto m = make_model(cfg);
  init_params(*m, seed);
  return m;
}

// Whole models: the gradient of the loss with respect to a sample of every parameter.
static void model_grad_check(const std::string& arch) {
  auto m = small_model(arch, 8, 12, 7, 9, "0", 3);
  std::vector<int> s1 = {0, 4, 5}, s2 = {6, 1}, t1 = {3, 8}, t2 = {4, 5, 6};
  const Batch b = make_batch({&s1, &s2}, {&t1, &t2});
  Mt19937 rng(1);
  auto loss = [&](bool backward) {
    Tape tp;
    T l = m->loss(tp, b, rng, true);
    if (backward) tp.backward(l);
    return static_cast<double>(l->v[0]);
  };
  for (auto* p : m->param_ptrs()) p->t.g.assign(p->t.v.size(), 0.f);
  loss(true);
  int checked = 0;
  for (auto* p : m->param_ptrs()) {
    const std::vector<float> g = p->t.g;
    for (size_t i = 0; i < p->t.v.size(); i += 1 + p->t.v.size() / 5) {
      const float x0 = p->t.v[i], h = 1e-2f;
      p->t.v[i] = x0 + h;
      const double up = loss(false);
      p->t.v[i] = x0 - h;
      const double dn = loss(false);
      p->t.v[i] = x0;
      const double num = (up - dn) / (2 * h);
      EXPECT_NEAR(g[i], num, 3e-3 + 3e-2 * std::fabs(num)) << arch << " " << p->name << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 20);
}

TEST(NnGrad, GruBahdanauModel) { model_grad_check("gru"); }
TEST(NnGrad, GruLuongModel) { model_grad_check("gru-luong"); }
TEST(NnGrad, TransformerModel) { model_grad_check("transformer"); }

// A trainer's tape is cleared and reused: its nodes keep their buffers, values and gradients
// from the last batch, of other shapes, and the first op to write a gradient does not zero it
// first (Tensor::grad_slot). Every parameter's gradient on a reused tape has the bits of a new one.
// The parameters' own gradients are as Adam::step leaves them: spent (has_grad false) over stale
// values, NaN here, which no op may add to.
TEST(NnGrad, ReusedTapeGivesTheGradientsOfANewOne) {
  for (const std::string arch : {"gru", "transformer"}) {
    auto m = small_model(arch, 16, 24, 11, 13, "0.2", 5);
    std::vector<int> s1 = {0, 4, 5, 9, 2}, s2 = {6, 1}, t1 = {3, 8, 12, 1}, t2 = {4, 5, 6};
    std::vector<int> u1 = {7, 3}, u2 = {1, 2, 3, 4, 5, 6, 8}, v1 = {2}, v2 = {9, 10, 11, 12, 3, 4};
    const Batch b = make_batch({&s1, &s2}, {&t1, &t2}), other = make_batch({&u1, &u2}, {&v1, &v2});
    auto grads = [&](Tape& tp, const Batch& batch) {
      for (auto* p : m->param_ptrs()) {
        p->t.g.assign(p->t.v.size(), std::nanf(""));
        p->t.has_grad = false;
      }
      Mt19937 rng(9);
      tp.clear();
      T l = m->loss(tp, batch, rng, true);
      tp.backward(l);
      std::vector<float> all;
      for (auto* p : m->param_ptrs()) all.insert(all.end(), p->t.grad(), p->t.grad() + p->t.size());
      return all;
    };
    Tape fresh, reused;
    const std::vector<float> want = grads(fresh, b);
    for (size_t i = 0; i < want.size(); ++i) ASSERT_TRUE(std::isfinite(want[i])) << arch << ": gradient " << i;
    grads(reused, other);
    grads(reused, b);
    grads(reused, other);
    const std::vector<float> got = grads(reused, b);
    ASSERT_EQ(got.size(), want.size());
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), sizeof(float) * got.size())) << arch;
  }
}

TEST(NnOptim, AdamScheduleAndClipping) {
  Param p;
  p.t.r = 1;
  p.t.c = 2;
  p.t.v = {1.f, -1.f};
  p.t.requires_grad = true;
  AdamConfig c;
  c.lr = 0.1f;
  c.warmup = 10;
  c.decay = "inv_sqrt";
  c.clip = 1.f;
  Adam a({&p}, c);
  EXPECT_FLOAT_EQ(a.lr_at(5), 0.05f);
  EXPECT_FLOAT_EQ(a.lr_at(40), 0.05f);
  p.t.grad()[0] = 30.f;
  p.t.grad()[1] = -40.f;
  EXPECT_NEAR(a.step(), 50.f, 1e-4);
  // First Adam step moves each weight by lr_at(1) against the gradient's sign.
  EXPECT_NEAR(p.t.v[0], 1.f - 0.01f, 1e-5);
  EXPECT_NEAR(p.t.v[1], -1.f + 0.01f, 1e-5);
  EXPECT_EQ(p.t.grad()[0], 0.f);
  EXPECT_EQ(p.t.grad()[1], 0.f);
}

// A few hundred steps on a tiny copy/reverse task: the loss must fall by more than half, and two
// runs with the same seed must agree bit for bit.
static std::vector<float> smoke(const std::string& arch, float* first, float* last) {
  ModelConfig cfg;
  cfg.set("arch", arch);
  cfg.set("d", "32");
  cfg.set("heads", "4");
  cfg.set("layers", "1");
  cfg.set("ffn", "64");
  cfg.set("src_vocab", "270");
  cfg.set("tgt_vocab", "270");
  cfg.set("dropout", "0");
  auto m = make_model(cfg);
  init_params(*m, 7);
  AdamConfig ac;
  ac.lr = 3e-3f;
  ac.warmup = 20;
  ac.clip = 1.f;
  Adam adam(m->param_ptrs(), ac);
  Mt19937 rng(11);
  std::uniform_int_distribution<int> tok(260, 269), len(2, 5);
  Tape tp;
  float l0 = 0, l1 = 0;
  for (int step = 0; step < 300; ++step) {
    std::vector<std::vector<int>> src(16), tgt(16);
    std::vector<const std::vector<int>*> ps, pt;
    for (int i = 0; i < 16; ++i) {
      const int n = len(rng);
      for (int k = 0; k < n; ++k) src[i].push_back(tok(rng));
      tgt[i].assign(src[i].rbegin(), src[i].rend());
      ps.push_back(&src[i]);
      pt.push_back(&tgt[i]);
    }
    tp.clear();
    T l = m->loss(tp, make_batch(ps, pt), rng, true);
    tp.backward(l);
    adam.step();
    if (step < 10) l0 += l->v[0] / 10;
    if (step >= 290) l1 += l->v[0] / 10;
  }
  *first = l0;
  *last = l1;
  return m->params[0]->t.v;
}

TEST(NnTrain, SmokeLossHalvesAndIsDeterministic) {
  for (const std::string arch : {"gru", "gru-luong", "transformer"}) {
    float a0, a1, b0, b1;
    const auto w1 = smoke(arch, &a0, &a1);
    const auto w2 = smoke(arch, &b0, &b1);
    EXPECT_LT(a1, a0 / 2) << arch << ": loss " << a0 << " -> " << a1;
    EXPECT_EQ(w1, w2) << arch;
  }
}
