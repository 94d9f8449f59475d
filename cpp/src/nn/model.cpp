#include "attnlab/nn/model.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "attnlab/attention.hpp"
#include "attnlab/error.hpp"
#include "attnlab/nn/weights.hpp"
#include "attnlab/thread_pool.hpp"
#include "kernels.hpp"

namespace attnlab::nn {

// ---------------------------------------------------------------- config, batches, params

std::string ModelConfig::get(const std::string& k, const std::string& def) const {
  auto it = kv.find(k);
  return it == kv.end() ? def : it->second;
}
int64_t ModelConfig::geti(const std::string& k, int64_t def) const {
  auto it = kv.find(k);
  if (it == kv.end()) return def;
  try {
    return std::stoll(it->second);
  } catch (...) {
    throw Error("model config: '" + k + "' is not an integer: '" + it->second + "'");
  }
}
float ModelConfig::getf(const std::string& k, float def) const {
  auto it = kv.find(k);
  if (it == kv.end()) return def;
  try {
    return std::stof(it->second);
  } catch (...) {
    throw Error("model config: '" + k + "' is not a number: '" + it->second + "'");
  }
}
std::string ModelConfig::serialize() const {
  std::string s;
  for (const auto& [k, v] : kv) s += k + "=" + v + "\n";
  return s;
}
ModelConfig ModelConfig::parse(const std::string& text) {
  ModelConfig c;
  // Split by hand: <sstream> would pull the locale machinery (~100 KB) into the WebAssembly.
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    require(eq != std::string::npos, [&] { return "model config: line without '=': '" + line + "'"; });
    c.kv[line.substr(0, eq)] = line.substr(eq + 1);
  }
  return c;
}

int64_t Batch::target_tokens() const {
  int64_t n = 0;
  for (int t : tgt_out) n += t >= 0;
  return n;
}

Batch make_batch(const std::vector<const std::vector<int>*>& src, const std::vector<const std::vector<int>*>& tgt) {
  Batch b;
  b.B = static_cast<int64_t>(src.size());
  for (auto* s : src) b.S = std::max<int64_t>(b.S, static_cast<int64_t>(s->size()));
  for (auto* t : tgt) b.T = std::max<int64_t>(b.T, static_cast<int64_t>(t->size()) + 1);
  b.S = std::max<int64_t>(b.S, 1);
  b.src.assign(b.B * b.S, -1);
  b.tgt_in.assign(b.B * b.T, -1);
  b.tgt_out.assign(b.B * b.T, -1);
  for (int64_t i = 0; i < b.B; ++i) {
    const auto& s = *src[i];
    const auto& t = *tgt[i];
    std::copy(s.begin(), s.end(), b.src.begin() + i * b.S);
    b.src_len.push_back(static_cast<int>(s.size()));
    b.tgt_in[i * b.T] = 1;  // BOS
    for (size_t j = 0; j < t.size(); ++j) {
      b.tgt_in[i * b.T + j + 1] = t[j];
      b.tgt_out[i * b.T + j] = t[j];
    }
    b.tgt_out[i * b.T + t.size()] = 2;  // EOS
  }
  return b;
}

std::vector<Param*> Model::param_ptrs() const {
  std::vector<Param*> v;
  for (const auto& p : params) v.push_back(p.get());
  return v;
}
Param* Model::find(const std::string& name) const {
  for (const auto& p : params)
    if (p->name == name) return p.get();
  return nullptr;
}
int64_t Model::num_params() const {
  int64_t n = 0;
  for (const auto& p : params) n += p->t.size();
  return n;
}
void Model::row_parts(DecodeState& st, int64_t R, const std::function<void(Tape&, int64_t, int64_t)>& f) const {
  const int64_t parts = R >= 2 && st.pool ? std::min<int64_t>(R, st.pool->size()) : 1;
  while (static_cast<int64_t>(st.tapes.size()) < parts) st.tapes.emplace_back().grad_enabled = false;
  for (int64_t p = 0; p < parts; ++p) {
    st.tapes[p].clear();
    st.tapes[p].pool = parts == 1 ? st.pool : nullptr;
  }
  if (parts == 1) return f(st.tapes[0], 0, R);
  parallel_for(st.pool, parts, [&](int64_t p) { f(st.tapes[p], p * R / parts, (p + 1) * R / parts); });
}

Param* Model::add_param(const std::string& name, std::vector<int64_t> shape) {
  auto p = std::make_unique<Param>();
  p->name = name;
  p->shape = shape;
  const int64_t rows = shape.size() == 1 ? 1 : shape[0];
  const int64_t cols = shape.size() == 1 ? shape[0] : shape[1];
  p->t.r = rows;
  p->t.c = cols;
  p->t.v.assign(static_cast<size_t>(rows * cols), 0.f);
  p->t.requires_grad = true;
  params.push_back(std::move(p));
  return params.back().get();
}

// The output layer and the loss over the rows that have a target: a batch's padding rows (11.5% of
// the shipped Transformer recipe's decoder rows) would go through the vocabulary-wide product and
// softmax for nothing. The same loss and gradients: a padding row's share of either is zero.
static T output_loss(Tape& tp, T x, const std::vector<int>& targets, Param* W, Param* b, float eps) {
  std::vector<int> rows, kept;
  for (size_t i = 0; i < targets.size(); ++i)
    if (targets[i] >= 0) {
      rows.push_back(static_cast<int>(i));
      kept.push_back(targets[i]);
    }
  if (rows.size() == targets.size()) return cross_entropy(tp, linear(tp, x, &W->t, &b->t), targets, eps);
  return cross_entropy(tp, linear(tp, gather_rows(tp, x, rows), &W->t, &b->t), kept, eps);
}

static bool ends_with(const std::string& s, const std::string& suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

void init_params(Model& m, uint64_t seed) {
  Mt19937 rng(static_cast<uint32_t>(seed));
  const bool transformer = m.cfg.get("arch") == "transformer";
  const float d = static_cast<float>(m.cfg.geti("d", 128));
  for (auto& p : m.params) {
    auto& v = p->t.v;
    const std::string& n = p->name;
    if (ends_with(n, ".g")) {
      std::fill(v.begin(), v.end(), 1.f);
    } else if (ends_with(n, "emb")) {
      std::normal_distribution<float> N(0.f, transformer ? 1.f / std::sqrt(d) : 1.f);
      for (float& x : v) x = N(rng);
    } else if (p->shape.size() == 2) {
      const float fan_in = static_cast<float>(p->shape[1]), fan_out = static_cast<float>(p->shape[0]);
      const float a = transformer ? std::sqrt(6.f / (fan_in + fan_out)) : 1.f / std::sqrt(fan_in);
      std::uniform_real_distribution<float> U(-a, a);
      for (float& x : v) x = U(rng);
    } else if (!transformer) {  // GRU-model biases and vectors: PyTorch's U(-1/sqrt(H), 1/sqrt(H))
      const float a = 1.f / std::sqrt(d);
      std::uniform_real_distribution<float> U(-a, a);
      for (float& x : v) x = U(rng);
    } else {
      std::fill(v.begin(), v.end(), 0.f);
    }
  }
}

// ---------------------------------------------------------------- GRU seq2seq

namespace {

class GruModel : public Model {
 public:
  explicit GruModel(const ModelConfig& c) {
    cfg = c;
    luong_ = c.get("arch") == "gru-luong";
    H_ = c.geti("d", 128);
    const int64_t Vs = c.geti("src_vocab"), Vt = c.geti("tgt_vocab");
    require(H_ > 0 && H_ <= 4096 && Vs > 0 && Vt > 0, [] { return std::string("GRU model: bad dimensions"); });
    src_emb_ = add_param("src_emb", {Vs, H_});
    e_wih_ = add_param("enc.w_ih", {3 * H_, H_});
    e_bih_ = add_param("enc.b_ih", {3 * H_});
    e_whh_ = add_param("enc.w_hh", {3 * H_, H_});
    e_bhh_ = add_param("enc.b_hh", {3 * H_});
    tgt_emb_ = add_param("tgt_emb", {Vt, H_});
    if (luong_) {
      att_w_ = add_param("att.w", {H_, H_});
      d_wih_ = add_param("dec.w_ih", {3 * H_, H_});
      comb_w_ = add_param("comb.w", {H_, 2 * H_});
      comb_b_ = add_param("comb.b", {H_});
    } else {
      att_wa_ = add_param("att.wa", {H_, H_});
      att_ba_ = add_param("att.ba", {H_});
      att_ua_ = add_param("att.ua", {H_, H_});
      att_bu_ = add_param("att.bu", {H_});
      att_v_ = add_param("att.v", {H_});
      d_wih_ = add_param("dec.w_ih", {3 * H_, 2 * H_});
    }
    d_bih_ = add_param("dec.b_ih", {3 * H_});
    d_whh_ = add_param("dec.w_hh", {3 * H_, H_});
    d_bhh_ = add_param("dec.b_hh", {3 * H_});
    out_w_ = add_param("out.w", {Vt, H_});
    out_b_ = add_param("out.b", {Vt});
  }

  struct Enc {
    T keys = nullptr, kp = nullptr, h = nullptr;
    int64_t S = 0;
    std::vector<int> lens;
  };

  Enc encode(Tape& tp, const std::vector<int>& src, int64_t B, int64_t S, const std::vector<int>& lens, float drop, Mt19937& rng) const {
    std::vector<int> ids(B * S);
    for (int64_t t = 0; t < S; ++t)
      for (int64_t b = 0; b < B; ++b) ids[t * B + b] = src[b * S + t];
    T E = dropout(tp, embedding(tp, &src_emb_->t, ids), drop, rng);
    T GI = linear(tp, E, &e_wih_->t, &e_bih_->t);
    T h = tp.make(B, H_);
    std::vector<T> outs;
    std::vector<uint8_t> active(B);
    for (int64_t t = 0; t < S; ++t) {
      for (int64_t b = 0; b < B; ++b) active[b] = t < lens[b];
      T gh = linear(tp, h, &e_whh_->t, &e_bhh_->t);
      h = gru_cell(tp, slice_rows(tp, GI, t * B, B), gh, h, active);
      outs.push_back(h);
    }
    Enc e;
    e.keys = stack_batch_major(tp, outs);
    e.kp = luong_ ? nullptr : linear(tp, e.keys, &att_ua_->t, &att_bu_->t);
    e.h = h;
    e.S = S;
    e.lens = lens;
    return e;
  }

  // One decoder step: returns {new hidden, output features, attention node}.
  struct Step {
    T h, out, att;
  };
  // weights: null, or [rows, S] receiving the step's attention.
  Step dec_step(Tape& tp, T h, T emb, const Enc& e, float* weights = nullptr) const {
    if (luong_) {
      T gi = linear(tp, emb, &d_wih_->t, &d_bih_->t);
      T gh = linear(tp, h, &d_whh_->t, &d_bhh_->t);
      T hn = gru_cell(tp, gi, gh, h, every_row_);
      T q = linear(tp, hn, &att_w_->t, nullptr);
      T ctx = attention(tp, q, e.keys, e.keys, hn->r, 1, e.S, 1, e.lens, false, 1.f, weights);
      T o = tanh_(tp, linear(tp, concat_cols(tp, hn, ctx), &comb_w_->t, &comb_b_->t));
      return {hn, o, ctx};
    }
    T qp = linear(tp, h, &att_wa_->t, &att_ba_->t);
    T ctx = additive_attention(tp, qp, e.kp, &att_v_->t, e.keys, e.S, e.lens, weights);
    T gi = linear(tp, concat_cols(tp, emb, ctx), &d_wih_->t, &d_bih_->t);
    T gh = linear(tp, h, &d_whh_->t, &d_bhh_->t);
    T hn = gru_cell(tp, gi, gh, h, every_row_);
    return {hn, hn, ctx};
  }

  T loss(Tape& tp, const Batch& b, Mt19937& rng, bool train) override {
    const float drop = train ? cfg.getf("dropout", 0.1f) : 0.f;
    Enc e = encode(tp, b.src, b.B, b.S, b.src_len, drop, rng);
    std::vector<int> ids(b.B * b.T), tg(b.B * b.T);
    for (int64_t t = 0; t < b.T; ++t)
      for (int64_t i = 0; i < b.B; ++i) {
        ids[t * b.B + i] = b.tgt_in[i * b.T + t];
        tg[t * b.B + i] = b.tgt_out[i * b.T + t];
      }
    T E = dropout(tp, embedding(tp, &tgt_emb_->t, ids), drop, rng);
    T h = e.h;
    std::vector<T> outs;
    for (int64_t t = 0; t < b.T; ++t) {
      Step s = dec_step(tp, h, slice_rows(tp, E, t * b.B, b.B), e);
      h = s.h;
      outs.push_back(s.out);
    }
    T O = dropout(tp, concat_rows(tp, outs), drop, rng);
    return output_loss(tp, O, tg, out_w_, out_b_, train ? cfg.getf("label_smoothing", 0.f) : 0.f);
  }

  struct State : DecodeState {
    Tape enc_tp;
    Enc e;
    std::vector<float> h;  // [rows, H]
    std::vector<float> w;  // [rows, S] this step's attention
  };

  std::unique_ptr<DecodeState> start(const std::vector<int>& src, const DecodeLimits& lim) const override {
    auto st = std::make_unique<State>();
    st->enc_tp.grad_enabled = false;
    st->enc_tp.pool = st->pool = lim.pool;
    Mt19937 rng(0);
    const int64_t S = std::max<int64_t>(1, static_cast<int64_t>(src.size()));
    std::vector<int> s = src;
    if (s.empty()) s.push_back(-1);
    st->e = encode(st->enc_tp, s, 1, S, {static_cast<int>(src.size())}, 0.f, rng);
    st->h = st->e.h->v;
    st->src_len = static_cast<int64_t>(src.size());
    return st;
  }

  void step(DecodeState& ds, const std::vector<int>& last, bool attention, StepOutput& out) const override {
    auto& st = static_cast<State&>(ds);
    const int64_t R = static_cast<int64_t>(last.size()), S = st.e.S, n = st.src_len, V = tgt_vocab();
    if (attention) st.w.assign(R * S, 0.f);
    out.logp.resize(R * V);
    std::vector<float> h(R * H_);
    row_parts(st, R, [&](Tape& tp, int64_t r0, int64_t r1) {
      const int64_t rows = r1 - r0;
      T h0 = tp.make_uninit(rows, H_);
      std::copy_n(st.h.data() + r0 * H_, rows * H_, h0->v.data());
      Step s = dec_step(tp, h0, embedding(tp, &tgt_emb_->t, last.data() + r0, rows), st.e, attention ? st.w.data() + r0 * S : nullptr);
      T logits = linear(tp, s.out, &out_w_->t, &out_b_->t);
      log_softmax_rows(logits->v.data(), out.logp.data() + r0 * V, rows, V, tp.pool);
      std::copy(s.h->v.begin(), s.h->v.end(), h.begin() + r0 * H_);
    });
    st.h = std::move(h);
    out.self.clear();
    out.cross.resize(attention ? R * n : 0);
    if (attention)
      for (int64_t r = 0; r < R; ++r) std::copy_n(st.w.data() + r * S, n, out.cross.data() + r * n);
    st.rows = R;
    st.t++;
  }

  // The recurrent state is one row per hypothesis: gathered by parent.
  void reorder(DecodeState& ds, const std::vector<int>& parent) const override {
    auto& st = static_cast<State&>(ds);
    std::vector<float> h(parent.size() * H_);
    for (size_t i = 0; i < parent.size(); ++i) std::copy_n(st.h.data() + parent[i] * H_, H_, h.data() + i * H_);
    st.h = std::move(h);
    st.rows = static_cast<int64_t>(parent.size());
  }

  AttentionLayout layout() const override { return {1, 1, false}; }

 private:
  bool luong_ = false;
  int64_t H_ = 0;
  // gru_cell's `active` for a decoder step (empty: every row). A member, not a `{}` temporary:
  // a temporary with a destructor makes the calls around it exception-aware, which in the scalar
  // WebAssembly build (JavaScript-based exceptions) is a round trip through JavaScript each.
  const std::vector<uint8_t> every_row_;
  Param *src_emb_, *e_wih_, *e_bih_, *e_whh_, *e_bhh_, *tgt_emb_;
  Param *att_wa_ = nullptr, *att_ba_ = nullptr, *att_ua_ = nullptr, *att_bu_ = nullptr, *att_v_ = nullptr;
  Param *att_w_ = nullptr, *comb_w_ = nullptr, *comb_b_ = nullptr;
  Param *d_wih_, *d_bih_, *d_whh_, *d_bhh_, *out_w_, *out_b_;
};

// ---------------------------------------------------------------- Transformer

class TransformerModel : public Model {
 public:
  explicit TransformerModel(const ModelConfig& c) {
    cfg = c;
    d_ = c.geti("d", 128);
    heads_ = c.geti("heads", 4);
    L_ = c.geti("layers", 2);
    F_ = c.geti("ffn", 4 * d_);
    maxlen_ = c.geti("max_len", 64);
    const int64_t Vs = c.geti("src_vocab"), Vt = c.geti("tgt_vocab");
    require(d_ > 0 && d_ <= 4096 && heads_ > 0 && d_ % heads_ == 0 && L_ > 0 && L_ <= 32 && F_ > 0 && F_ <= 16384 &&
                maxlen_ > 0 && maxlen_ <= 4096 && Vs > 0 && Vt > 0,
            [] { return std::string("Transformer model: bad dimensions"); });
    src_emb_ = add_param("src_emb", {Vs, d_});
    tgt_emb_ = add_param("tgt_emb", {Vt, d_});
    for (int64_t l = 0; l < L_; ++l) {
      const std::string p = "enc." + std::to_string(l) + ".";
      enc_.push_back({mha(p + "self."), ln(p + "ln1"), ln(p + "ln2"), {}, {}, ffn(p + "ffn."), nullptr});
    }
    for (int64_t l = 0; l < L_; ++l) {
      const std::string p = "dec." + std::to_string(l) + ".";
      dec_.push_back({mha(p + "self."), ln(p + "ln1"), ln(p + "ln2"), mha(p + "cross."), ln(p + "ln3"), ffn(p + "ffn."), nullptr});
    }
    out_w_ = add_param("out.w", {Vt, d_});
    out_b_ = add_param("out.b", {Vt});
    pe_.assign(maxlen_ * d_, 0.f);
    for (int64_t p = 0; p < maxlen_; ++p)
      for (int64_t i = 0; i < d_; i += 2) {
        const double x = p / std::pow(10000.0, static_cast<double>(i) / d_);
        pe_[p * d_ + i] = static_cast<float>(std::sin(x));
        if (i + 1 < d_) pe_[p * d_ + i + 1] = static_cast<float>(std::cos(x));
      }
  }

  struct Mha {
    Param *wq, *wk, *wv, *wo;
  };
  struct Ln {
    Param *g, *b;
  };
  struct Ffn {
    Param *w1, *b1, *w2, *b2;
  };
  struct Layer {
    Mha self;
    Ln ln1, ln2;
    Mha cross;
    Ln ln3;
    Ffn ffn;
    // self's wq, wk and wv stacked (stack_q8), where a loaded model has them as int8: a step's
    // q, k and v in one product, over one quantisation of x.
    std::unique_ptr<Tensor> qkv;
  };

  void weights_loaded() override {
    for (auto* layers : {&enc_, &dec_})
      for (Layer& l : *layers)
        if (!l.self.wq->t.q8.empty() && !l.self.wk->t.q8.empty() && !l.self.wv->t.q8.empty())
          l.qkv = std::make_unique<Tensor>(stack_q8({&l.self.wq->t, &l.self.wk->t, &l.self.wv->t}));
  }

  // Self-attention's q, k and v of x, each [rows, d] at row stride ld: views into the stacked
  // product at inference, else three products (whose tensors training needs).
  struct Qkv {
    T q, k, v;  // the tensors (all three the stacked product's when stacked)
    const float *qp, *kp, *vp;
    int64_t ld;
  };
  Qkv self_qkv(Tape& tp, const Layer& l, T x) const {
    if (l.qkv && !tp.grad_enabled) {
      T y = linear(tp, x, l.qkv.get(), nullptr);
      return {y, y, y, y->v.data(), y->v.data() + d_, y->v.data() + 2 * d_, 3 * d_};
    }
    T q = linear(tp, x, &l.self.wq->t, nullptr), k = linear(tp, x, &l.self.wk->t, nullptr), v = linear(tp, x, &l.self.wv->t, nullptr);
    return {q, k, v, q->v.data(), k->v.data(), v->v.data(), d_};
  }

  Mha mha(const std::string& p) {
    return {add_param(p + "wq", {d_, d_}), add_param(p + "wk", {d_, d_}), add_param(p + "wv", {d_, d_}), add_param(p + "wo", {d_, d_})};
  }
  Ln ln(const std::string& p) { return {add_param(p + ".g", {d_}), add_param(p + ".b", {d_})}; }
  Ffn ffn(const std::string& p) {
    return {add_param(p + "w1", {F_, d_}), add_param(p + "b1", {F_}), add_param(p + "w2", {d_, F_}), add_param(p + "b2", {d_})};
  }

  T ffn_fwd(Tape& tp, const Ffn& f, T x) const {
    return linear(tp, linear_relu(tp, x, &f.w1->t, &f.b1->t), &f.w2->t, &f.b2->t);
  }
  T add_norm(Tape& tp, const Ln& n, T x, T y, float drop, Mt19937& rng) const {
    return layer_norm(tp, add(tp, x, dropout(tp, y, drop, rng)), &n.g->t, &n.b->t);
  }
  void check_len(int64_t L) const {
    require(L <= maxlen_, [&] { return "Transformer: sequence longer than max_len " + std::to_string(maxlen_); });
  }
  // ids: n = rows * L tokens, each row's L positions from pos0.
  T embed(Tape& tp, Param* E, const int* ids, int64_t n, int64_t L, int64_t pos0, float drop, Mt19937& rng) const {
    check_len(pos0 + L);
    T x = scale(tp, embedding(tp, &E->t, ids, n), std::sqrt(static_cast<float>(d_)));
    std::vector<float> pe(pe_.begin() + pos0 * d_, pe_.begin() + (pos0 + L) * d_);
    return dropout(tp, add_rows_periodic(tp, x, pe, L), drop, rng);
  }

  // Encoder over src [B, S] batch-major -> memory [B * S, d]. atts: null, or per layer the
  // self-attention weights [B, heads, S, S] (appended).
  T encode(Tape& tp, const std::vector<int>& src, int64_t B, int64_t S, const std::vector<int>& lens, float drop,
           Mt19937& rng, std::vector<std::vector<float>>* atts) const {
    T x = embed(tp, src_emb_, src.data(), B * S, S, 0, drop, rng);
    for (const Layer& l : enc_) {
      const Qkv p = self_qkv(tp, l, x);
      float* w = nullptr;
      if (atts) w = atts->emplace_back(static_cast<size_t>(B * heads_ * S * S)).data();
      T a = p.ld != d_ ? self_attention_stacked(tp, p.q, B, S, heads_, lens, w)
                       : attention(tp, p.q, p.k, p.v, B, S, S, heads_, lens, false, 0.f, w);
      x = add_norm(tp, l.ln1, x, linear(tp, a, &l.self.wo->t, nullptr), drop, rng);
      x = add_norm(tp, l.ln2, x, ffn_fwd(tp, l.ffn, x), drop, rng);
    }
    return x;
  }

  // The decoder runs on the target's tokens only: a batch's rows [B * T] padded to its longest
  // target are 11.5% padding in the shipped recipe, and every product, norm and dropout but
  // attention works row by row. Attention takes them back in the padded layout (zeros in the
  // padding, which no token's causal mask reaches) and gives back the tokens' rows; dropout draws
  // the whole padded tensor's numbers. So the same loss and gradients, bit for bit, as the
  // padded decoder: a padding row's share of either was zero.
  T loss(Tape& tp, const Batch& b, Mt19937& rng, bool train) override {
    const float drop = train ? cfg.getf("dropout", 0.1f) : 0.f;
    T mem = encode(tp, b.src, b.B, b.S, b.src_len, drop, rng, nullptr);
    const int64_t BT = b.B * b.T;
    std::vector<int> rows, targets;  // the tokens' rows of [B * T], and what each predicts
    for (int64_t i = 0; i < BT; ++i)
      if (b.tgt_in[i] >= 0) {
        rows.push_back(static_cast<int>(i));
        targets.push_back(b.tgt_out[i]);
      }
    auto padded = [&](T y) { return scatter_rows(tp, y, rows, BT); };
    auto add_norm_rows = [&](const Ln& n, T x, T y) {
      return layer_norm(tp, add(tp, x, dropout(tp, y, drop, rng, rows, BT)), &n.g->t, &n.b->t);
    };
    T x = gather_rows(tp, embed(tp, tgt_emb_, b.tgt_in.data(), BT, b.T, 0, drop, rng), rows);
    for (const Layer& l : dec_) {
      T q = linear(tp, x, &l.self.wq->t, nullptr), k = linear(tp, x, &l.self.wk->t, nullptr), v = linear(tp, x, &l.self.wv->t, nullptr);
      T a = gather_rows(tp, attention(tp, padded(q), padded(k), padded(v), b.B, b.T, b.T, heads_, {}, true, 0.f), rows);
      x = add_norm_rows(l.ln1, x, linear(tp, a, &l.self.wo->t, nullptr));
      T q2 = linear(tp, x, &l.cross.wq->t, nullptr), k2 = linear(tp, mem, &l.cross.wk->t, nullptr), v2 = linear(tp, mem, &l.cross.wv->t, nullptr);
      T c = gather_rows(tp, attention(tp, padded(q2), k2, v2, b.B, b.T, b.S, heads_, b.src_len, false, 0.f), rows);
      x = add_norm_rows(l.ln2, x, linear(tp, c, &l.cross.wo->t, nullptr));
      x = add_norm_rows(l.ln3, x, ffn_fwd(tp, l.ffn, x));
    }
    return output_loss(tp, x, targets, out_w_, out_b_, train ? cfg.getf("label_smoothing", 0.f) : 0.f);
  }

  // The decoder's keys and values, written in place. Keys are stored as the fused attention
  // kernel's 8-key panels (kernels::pack_panels layout) per head, so a step appends its key
  // into the panel and attends without packing; values are plain rows. Capacity for
  // `cap_rows` hypotheses (slots) of `cap_t` steps is reserved once by start().
  struct State : DecodeState {
    Tape enc_tp;
    int64_t S = 0, cap_rows = 0, cap_t = 0;
    int64_t src_panel = 0, panel = 0;  // floats per head: the source's key panels, a slot's
    std::vector<float> ck, cv;  // cross keys [L][heads][src_panel], values [L][S][d]
    // Self keys [L][slot][heads][panel], values [L][slot][cap_t][d], left uninitialised: a step
    // reads only the values of the steps so far, and zeroes each key panel as its first key goes
    // in (the kernel reads whole 8-key panels). Zeroing all at start() was 800 KB for a 10-word beam 5.
    std::unique_ptr<float[]> kc, vc;
    std::vector<int> slot;      // the slot of each live row
    int32_t src_len32 = 0;
    MaskSet cross_mask;         // hides the padding key of an empty source
    // None, for the self-attention. Kept here rather than as a local of step(): a local with a
    // destructor makes every call in step() an exception-aware call, which in the scalar
    // WebAssembly build (JavaScript-based exceptions) is a round trip through a JavaScript
    // trampoline.
    MaskSet no_mask;
    // Dropout's generator for the ops a step shares with training. Inference (drop 0) never
    // draws from it; constructing one per step (2.5 KB of state, seeded word by word) was not free.
    Mt19937 no_dropout{0};
    float* keys(int64_t l, int64_t s, int64_t h) { return kc.get() + ((l * cap_rows + s) * heads + h) * panel; }
    float* values(int64_t l, int64_t s) { return vc.get() + (l * cap_rows + s) * cap_t * d; }
    int64_t heads = 0, d = 0;
  };

  std::unique_ptr<DecodeState> start(const std::vector<int>& src, const DecodeLimits& lim) const override {
    require(lim.rows >= 1 && lim.steps >= 1, [] { return std::string("Transformer decode: limits must be positive"); });
    auto st = std::make_unique<State>();
    st->enc_tp.grad_enabled = false;
    st->enc_tp.pool = st->pool = lim.pool;
    Mt19937 rng(0);
    std::vector<int> s = src;
    if (s.empty()) s.push_back(-1);
    const int64_t S = static_cast<int64_t>(s.size()), dh = d_ / heads_;
    std::vector<std::vector<float>> atts;
    T mem = encode(st->enc_tp, s, 1, S, {static_cast<int>(src.size())}, 0.f, rng, lim.attention ? &atts : nullptr);
    st->S = S;
    st->heads = heads_;
    st->d = d_;
    st->src_len = static_cast<int64_t>(src.size());
    st->src_len32 = static_cast<int32_t>(src.size());
    if (st->src_len < S) {
      st->cross_mask.valid_lens.data = &st->src_len32;
      st->cross_mask.valid_lens.batch_offset = {0};
    }
    st->src_panel = kernels::panels_size(S, dh);
    st->ck.assign(L_ * heads_ * st->src_panel, 0.f);
    for (int64_t l = 0; l < L_; ++l) {
      const Layer& y = dec_[l];
      T k = linear(st->enc_tp, mem, &y.cross.wk->t, nullptr);
      for (int64_t h = 0; h < heads_; ++h)
        kernels::pack_panels(k->v.data() + h * dh, d_, S, dh, st->ck.data() + (l * heads_ + h) * st->src_panel);
      T v = linear(st->enc_tp, mem, &y.cross.wv->t, nullptr);
      st->cv.insert(st->cv.end(), v->v.begin(), v->v.end());
    }
    st->cap_rows = lim.rows;
    st->cap_t = std::min<int64_t>(lim.steps, maxlen_);
    st->panel = kernels::panels_size(st->cap_t, dh);
    st->kc.reset(new float[L_ * st->cap_rows * heads_ * st->panel]);
    st->vc.reset(new float[L_ * st->cap_rows * st->cap_t * d_]);
    st->slot = {0};
    const int64_t n = st->src_len;
    if (lim.attention) {
      st->enc_self.assign(L_ * heads_ * n * n, 0.f);
      for (int64_t l = 0; l < L_; ++l)
        for (int64_t h = 0; h < heads_; ++h)
          for (int64_t i = 0; i < n; ++i)
            std::copy_n(atts[l].data() + (h * S + i) * S, n, st->enc_self.data() + ((l * heads_ + h) * n + i) * n);
    }
    return st;
  }

  void step(DecodeState& ds, const std::vector<int>& last, bool attention, StepOutput& out) const override {
    auto& st = static_cast<State&>(ds);
    const int64_t R = static_cast<int64_t>(last.size()), t = st.t, n = st.src_len, LH = L_ * heads_, V = tgt_vocab();
    check_len(t + 1);
    require(R == static_cast<int64_t>(st.slot.size()) && t < st.cap_t, [&] {
      return "Transformer decode: step " + std::to_string(t) + " with " + std::to_string(R) + " rows exceeds the reserved " +
             std::to_string(st.cap_t) + " steps or does not match the " + std::to_string(st.slot.size()) + " live rows";
    });
    out.cross.assign(attention ? R * LH * n : 0, 0.f);
    out.self.assign(attention ? R * LH * (t + 1) : 0, 0.f);
    out.logp.resize(R * V);
    row_parts(st, R, [&](Tape& tp, int64_t r0, int64_t r1) { step_rows(st, tp, last.data(), r0, r1, attention, out); });
    st.rows = R;
    st.t++;
  }

  // step() for rows [r0, r1) of the live rows, on tape tp (whose pool, if any, its ops share).
  void step_rows(State& st, Tape& tp, const int* last, int64_t r0, int64_t r1, bool attention, StepOutput& out) const {
    Mt19937& rng = st.no_dropout;
    const int64_t R = r1 - r0, t = st.t, n = st.src_len, dh = d_ / heads_, LH = L_ * heads_;
    const float scale = resolve_scale(Score::ScaledDot, 0.f, dh);
    T x = embed(tp, tgt_emb_, last + r0, R, 1, t, 0.f, rng);
    float* self_w = attention ? out.self.data() + r0 * LH * (t + 1) : nullptr;
    float* cross_w = attention && n == st.S ? out.cross.data() + r0 * LH * n : nullptr;
    const int* slot = st.slot.data() + r0;
    for (int64_t li = 0; li < L_; ++li) {
      const Layer& l = dec_[li];
      const Qkv qkv = self_qkv(tp, l, x);
      const int64_t ld = qkv.ld;
      // Append this step's key (into row t % 8 of panel t / 8) and value to each row's slot.
      T a = tp.make_uninit(R, d_);  // every (row, head) attends into its own columns
      for (int64_t r = 0; r < R; ++r) {
        const int sl = slot[r];
        std::copy_n(qkv.vp + r * ld, d_, st.values(li, sl) + t * d_);
        for (int64_t h = 0; h < heads_; ++h) {
          float* p = st.keys(li, sl, h) + (t / 8) * 8 * dh + t % 8;
          if (t % 8 == 0) std::fill_n(p, 8 * dh, 0.f);
          const float* kr = qkv.kp + r * ld + h * dh;
          for (int64_t c = 0; c < dh; ++c) p[c * 8] = kr[c];
        }
      }
      // Each (row, head) attends alone, into its own outputs: spread over the pool, the same bits.
      parallel_for(tp.pool, R * heads_, [&](int64_t rh) {
        const int64_t r = rh / heads_, h = rh % heads_;
        const int sl = slot[r];
        const AttentionSlice self{qkv.qp + r * ld + h * dh, ld, nullptr, 0, st.values(li, sl) + h * dh, d_,
                                  a->v.data() + r * d_ + h * dh, d_,
                                  self_w ? self_w + (r * LH + li * heads_ + h) * (t + 1) : nullptr, 0};
        attend_slice(self, 0, 1, t + 1, dh, dh, scale, st.no_mask, st.keys(li, sl, h));
      });
      x = add_norm(tp, l.ln1, x, linear(tp, a, &l.self.wo->t, nullptr), 0.f, rng);
      T q2 = linear(tp, x, &l.cross.wq->t, nullptr);
      // Every row attends to the same source keys, so one call per head takes all the rows (in
      // the kernel's groups of 4): the same bits as a call per row, which padded each row to 4.
      T c = tp.make_uninit(R, d_);  // every head attends into its own columns
      T cw = tp.make_uninit(cross_w ? heads_ * R : 0, st.S);  // per head, its [R, S] weights
      parallel_for(tp.pool, heads_, [&](int64_t h) {
        float* w = cross_w ? cw->v.data() + h * R * st.S : nullptr;
        const AttentionSlice cross{q2->v.data() + h * dh, d_, nullptr, 0, st.cv.data() + li * st.S * d_ + h * dh, d_,
                                   c->v.data() + h * dh, d_, w, 0};
        attend_slice(cross, 0, R, st.S, dh, dh, scale, st.cross_mask, st.ck.data() + (li * heads_ + h) * st.src_panel);
        for (int64_t r = 0; w && r < R; ++r) std::copy_n(w + r * st.S, n, cross_w + (r * LH + li * heads_ + h) * n);
      });
      x = add_norm(tp, l.ln2, x, linear(tp, c, &l.cross.wo->t, nullptr), 0.f, rng);
      x = add_norm(tp, l.ln3, x, ffn_fwd(tp, l.ffn, x), 0.f, rng);
    }
    T logits = linear(tp, x, &out_w_->t, &out_b_->t);
    log_softmax_rows(logits->v.data(), out.logp.data() + r0 * logits->c, R, logits->c, tp.pool);
  }

  // By index: a row keeps its parent's slot; only a parent's second and later children copy its
  // history into a free slot (a slot whose hypothesis has no children).
  void reorder(DecodeState& ds, const std::vector<int>& parent) const override {
    auto& st = static_cast<State&>(ds);
    const int64_t R = static_cast<int64_t>(parent.size()), t = st.t, dh = d_ / heads_;
    require(R <= st.cap_rows, [&] {
      return "Transformer decode: " + std::to_string(R) + " rows exceed the reserved " + std::to_string(st.cap_rows);
    });
    std::vector<int> slot(R, -1);
    std::vector<uint8_t> taken(st.slot.size(), 0), kept(st.cap_rows, 0);
    for (int64_t i = 0; i < R; ++i) {
      const int p = parent[i];
      if (taken[p]) continue;
      taken[p] = 1;
      slot[i] = st.slot[p];
      kept[slot[i]] = 1;
    }
    int free = 0;
    const int64_t kfloats = (t + 7) / 8 * 8 * dh;  // the panels holding keys 0 .. t-1
    for (int64_t i = 0; i < R; ++i) {
      if (slot[i] >= 0) continue;
      while (kept[free]) ++free;
      slot[i] = free;
      kept[free] = 1;
      const int from = st.slot[parent[i]];
      for (int64_t l = 0; l < L_; ++l) {
        for (int64_t h = 0; h < heads_; ++h) std::copy_n(st.keys(l, from, h), kfloats, st.keys(l, free, h));
        std::copy_n(st.values(l, from), t * d_, st.values(l, free));
      }
    }
    st.slot = std::move(slot);
    st.rows = R;
  }

  AttentionLayout layout() const override { return {L_, heads_, true}; }

 private:
  int64_t d_, heads_, L_, F_, maxlen_;
  Param *src_emb_, *tgt_emb_, *out_w_, *out_b_;
  std::vector<Layer> enc_, dec_;
  std::vector<float> pe_;
};

}  // namespace

std::unique_ptr<Model> make_model(const ModelConfig& cfg) {
  const std::string arch = cfg.get("arch");
  if (arch == "gru" || arch == "gru-luong") return std::make_unique<GruModel>(cfg);
  if (arch == "transformer") return std::make_unique<TransformerModel>(cfg);
  throw Error("model config: unknown arch '" + arch + "' (expected gru, gru-luong or transformer)");
}

}  // namespace attnlab::nn
