#include "attnlab/nn/trainer.hpp"

#include <chrono>

#include "attnlab/error.hpp"
#include "attnlab/nn/tokenizer.hpp"
#include "attnlab/nn/translate.hpp"

namespace attnlab::nn {
namespace {

void check(const ToyTrainerConfig& c) {
  const ToyTaskConfig& t = c.task;
  const auto range = [](const char* field, const std::string& expected, double got) {
    return std::string(field) + ": expected " + expected + ", got " + std::to_string(got);
  };
  require(c.arch == "gru" || c.arch == "gru-luong" || c.arch == "transformer",
          [&] { return "arch: expected 'gru', 'gru-luong' or 'transformer', got '" + c.arch + "'"; });
  require(c.hidden >= 4 && c.hidden <= 512 && c.hidden % 4 == 0,
          [&] { return range("hidden", "a multiple of 4 in [4, 512]", c.hidden); });
  require(t.symbols >= 2 && t.symbols <= 26, [&] { return range("symbols", "[2, 26]", t.symbols); });
  require(t.min_len >= 1 && t.min_len <= 30, [&] { return range("min_len", "[1, 30]", t.min_len); });
  require(t.max_len >= t.min_len && t.max_len <= 30,
          [&] { return range("max_len", "[min_len, 30]", t.max_len); });
  require(c.batch >= 1 && c.batch <= 512, [&] { return range("batch", "[1, 512]", c.batch); });
  require(c.lr > 0 && c.lr < 1e30, [&] { return range("lr", "a finite number > 0", c.lr); });
}

std::vector<std::string> letters(const std::vector<int>& tokens) {
  std::vector<std::string> s;
  for (int x : tokens) s.push_back(std::string(1, toy_letter(x)));
  return s;
}

}  // namespace

ToyTrainer::ToyTrainer(const ToyTrainerConfig& c) : c_(c) {
  check(c);
  rng_.seed(c.seed);
  ModelConfig cfg;
  cfg.set("arch", c.arch);
  cfg.set("d", std::to_string(c.hidden));
  cfg.set("heads", "4");
  cfg.set("layers", "1");
  cfg.set("ffn", std::to_string(2 * c.hidden));
  cfg.set("max_len", "64");
  cfg.set("src_vocab", std::to_string(Bpe::kFirstSymbol));
  cfg.set("tgt_vocab", std::to_string(Bpe::kFirstSymbol));
  cfg.set("dropout", "0");
  model_ = make_model(cfg);
  init_params(*model_, c.seed);
  AdamConfig ac;
  ac.lr = static_cast<float>(c.lr);
  ac.warmup = 50;
  ac.clip = 1.f;
  adam_ = std::make_unique<Adam>(model_->param_ptrs(), ac);
}

StepReport ToyTrainer::step(int steps) {
  double loss = 0, tokens = 0;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::vector<int>> src(c_.batch), tgt(c_.batch);
  std::vector<const std::vector<int>*> ps, pt;
  for (int i = 0; i < c_.batch; ++i) {
    ps.push_back(&src[i]);
    pt.push_back(&tgt[i]);
  }
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < c_.batch; ++i) toy_example(c_.task, rng_, src[i], tgt[i]);
    const Batch b = make_batch(ps, pt);
    tape_.clear();
    T l = model_->loss(tape_, b, rng_, true);
    tape_.backward(l);
    adam_->step();
    ++step_;
    loss += l->v[0];
    tokens += static_cast<double>(b.target_tokens());
  }
  tape_.clear();
  const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return {step_, steps > 0 ? loss / steps : 0, sec > 0 ? tokens / sec : 0};
}

Evaluation ToyTrainer::evaluate(int n, uint32_t seed) const {
  Mt19937 rng(seed);
  Evaluation e;
  int correct = 0;
  const AttentionLayout lay = model_->layout();
  for (int i = 0; i < n; ++i) {
    std::vector<int> src, tgt;
    toy_example(c_.task, rng, src, tgt);
    DecodeOptions o;
    o.max_len = static_cast<int>(tgt.size()) + 4;
    const std::vector<Hypothesis> hyps = beam_search(*model_, src, o);
    std::vector<int> out = hyps.empty() ? std::vector<int>{} : hyps[0].ids;
    const bool ended = !out.empty() && out.back() == Bpe::kEos;
    if (ended) out.pop_back();
    correct += out == tgt;
    if (i > 0) continue;
    ToyExample& x = e.example;
    x.source = letters(src);
    x.target = letters(tgt);
    x.output = letters(out);
    if (ended) x.output.push_back("</s>");
    const int64_t S = static_cast<int64_t>(src.size()), Tn = static_cast<int64_t>(x.output.size());
    const int64_t last = (lay.layers - 1) * lay.heads;
    for (int64_t t = 0; t < Tn; ++t)
      for (int64_t k = 0; k < S; ++k) {
        float a = 0;
        for (int64_t h = 0; h < lay.heads; ++h) a += hyps[0].cross[t][(last + h) * S + k];
        x.attention.push_back(a / static_cast<float>(lay.heads));
      }
  }
  e.exact_match = n > 0 ? static_cast<double>(correct) / n : 0;
  return e;
}

}  // namespace attnlab::nn
