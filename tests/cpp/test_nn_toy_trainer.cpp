// The toy tasks and trainer behind createTrainer(): examples obey their task, bad configurations
// throw naming the field, training is deterministic for a seed and lowers the loss, evaluation's
// example has one attention row per output token.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/nn/tokenizer.hpp"
#include "attnlab/nn/trainer.hpp"

using namespace attnlab::nn;

namespace {

std::string error_of(const ToyTrainerConfig& c) {
  try {
    ToyTrainer t(c);
  } catch (const attnlab::Error& e) {
    return e.what();
  }
  return "";
}

ToyTrainerConfig small(const std::string& arch) {
  ToyTrainerConfig c;
  c.arch = arch;
  c.task = {ToyTask::Copy, 4, 2, 3};
  c.hidden = 16;
  c.batch = 8;
  c.lr = 1e-2;
  c.seed = 7;
  return c;
}

}  // namespace

TEST(NnToyTasks, ExamplesObeyTheirTask) {
  for (ToyTask task : {ToyTask::Reverse, ToyTask::Sort, ToyTask::Copy}) {
    const ToyTaskConfig c{task, 5, 2, 7};
    Mt19937 rng(3);
    std::vector<int> src, tgt;
    std::vector<int> lengths_seen(8, 0);
    for (int i = 0; i < 300; ++i) {
      toy_example(c, rng, src, tgt);
      ASSERT_GE(src.size(), 2u);
      ASSERT_LE(src.size(), 7u);
      ++lengths_seen[src.size()];
      for (int x : src) {
        ASSERT_GE(toy_letter(x), 'a');
        ASSERT_LE(toy_letter(x), 'e');
      }
      std::vector<int> want = src;
      if (task == ToyTask::Reverse) std::reverse(want.begin(), want.end());
      if (task == ToyTask::Sort) std::sort(want.begin(), want.end());
      ASSERT_EQ(tgt, want);
    }
    for (int n = 2; n <= 7; ++n) EXPECT_GT(lengths_seen[n], 0) << "length " << n << " never drawn";
  }
  EXPECT_EQ(toy_letter(toy_token(0)), 'a');
  EXPECT_EQ(toy_token(0), Bpe::kByte0 + 'a');
  EXPECT_EQ(parse_toy_task("sort"), ToyTask::Sort);
  EXPECT_THROW(parse_toy_task("shuffle"), attnlab::Error);
}

TEST(NnToyTrainer, RejectsConfigurationsOutOfRangeNamingTheField) {
  const auto field_of = [](auto edit) {
    ToyTrainerConfig c = small("gru");
    edit(c);
    const std::string e = error_of(c);
    return e.substr(0, e.find(':'));
  };
  EXPECT_EQ(field_of([](ToyTrainerConfig&) {}), "");
  EXPECT_EQ(field_of([](ToyTrainerConfig& c) { c.arch = "lstm"; }), "arch");
  EXPECT_EQ(field_of([](ToyTrainerConfig& c) { c.hidden = 6; }), "hidden");
  EXPECT_EQ(field_of([](ToyTrainerConfig& c) { c.hidden = 516; }), "hidden");
  EXPECT_EQ(field_of([](ToyTrainerConfig& c) { c.task.symbols = 1; }), "symbols");
  EXPECT_EQ(field_of([](ToyTrainerConfig& c) { c.task.symbols = 27; }), "symbols");
  EXPECT_EQ(field_of([](ToyTrainerConfig& c) { c.task.min_len = 0; }), "min_len");
  EXPECT_EQ(field_of([](ToyTrainerConfig& c) { c.task.max_len = 1; }), "max_len");
  EXPECT_EQ(field_of([](ToyTrainerConfig& c) { c.task.min_len = c.task.max_len = 31; }), "min_len");
  EXPECT_EQ(field_of([](ToyTrainerConfig& c) { c.batch = 0; }), "batch");
  EXPECT_EQ(field_of([](ToyTrainerConfig& c) { c.lr = 0; }), "lr");
  EXPECT_EQ(field_of([](ToyTrainerConfig& c) { c.lr = NAN; }), "lr");
}

TEST(NnToyTrainer, SameSeedSameRunAndTheLossFalls) {
  ToyTrainer a(small("gru")), b(small("gru"));
  const StepReport first = a.step(1);
  EXPECT_EQ(first.step, 1);
  EXPECT_EQ(b.step(1).loss, first.loss);  // bit for bit: one seed, one run
  double late = 0;
  for (int i = 0; i < 60; ++i) late = a.step(1).loss;
  EXPECT_EQ(a.step(0).step, 61);
  EXPECT_TRUE(std::isfinite(late));
  EXPECT_LT(late, 0.75 * first.loss) << "first " << first.loss << ", after 60 steps " << late;
  ToyTrainerConfig other = small("gru");
  other.seed = 8;
  EXPECT_NE(ToyTrainer(other).step(1).loss, first.loss);
}

TEST(NnToyTrainer, EvaluationHasAnAttentionRowPerOutputToken) {
  for (const std::string arch : {"gru", "gru-luong", "transformer"}) {
    ToyTrainer t(small(arch));
    t.step(2);
    const Evaluation e = t.evaluate(5, 11);
    EXPECT_GE(e.exact_match, 0.0);
    EXPECT_LE(e.exact_match, 1.0);
    const ToyExample& x = e.example;
    ASSERT_GE(x.source.size(), 2u) << arch;
    EXPECT_EQ(x.target, x.source) << arch;  // the copy task
    ASSERT_EQ(x.attention.size(), x.output.size() * x.source.size()) << arch;
    for (size_t r = 0; r < x.output.size(); ++r) {
      const double sum = std::accumulate(x.attention.begin() + r * x.source.size(),
                                         x.attention.begin() + (r + 1) * x.source.size(), 0.0);
      EXPECT_NEAR(sum, 1.0, 1e-4) << arch << " row " << r;  // head-averaged softmax rows
    }
    // Held-out examples come from the evaluation's seed alone: the same seed, the same answer.
    const Evaluation again = t.evaluate(5, 11);
    EXPECT_EQ(again.exact_match, e.exact_match);
    EXPECT_EQ(again.example.output, x.output);
    EXPECT_EQ(again.example.attention, x.attention);
    EXPECT_TRUE(t.evaluate(0, 11).example.source.empty());
  }
}
