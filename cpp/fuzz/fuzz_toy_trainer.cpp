// Fuzzes the toy trainer behind createTrainer(): any configuration (task name, architecture,
// sizes, learning rate, seed) either throws attnlab::Error or trains a step to a finite loss and
// evaluates to an exact match in [0, 1] with an attention row per output token. Sizes that pass
// the checks are kept small so that each input runs in milliseconds.
#include <string>

#include "attnlab/nn/trainer.hpp"
#include "fuzz_common.hpp"

using namespace attnlab;
using namespace attnlab::nn;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const char* tasks[] = {"reverse", "sort", "copy", "shuffle", ""};
  const char* archs[] = {"gru", "gru-luong", "transformer", "lstm"};
  ToyTrainerConfig c;
  ToyTask task;
  try {
    task = parse_toy_task(tasks[in.ConsumeIntegralInRange<int>(0, 4)]);
  } catch (const Error&) {
    return 0;
  }
  c.task = {task, in.ConsumeIntegralInRange<int>(-1, 27), in.ConsumeIntegralInRange<int>(-1, 5),
            in.ConsumeIntegralInRange<int>(-1, 5)};
  c.arch = archs[in.ConsumeIntegralInRange<int>(0, 3)];
  c.hidden = in.ConsumeIntegralInRange<int>(-4, 12);
  c.batch = in.ConsumeIntegralInRange<int>(-1, 3);
  c.lr = in.ConsumeBool() ? in.ConsumeFloatingPoint<double>() : in.ConsumeFloatingPointInRange<double>(1e-4, 0.1);
  c.seed = in.ConsumeIntegral<uint32_t>();
  try {
    ToyTrainer t(c);
    const StepReport r = t.step(1);
    if (r.step != 1 || !std::isfinite(r.loss)) std::abort();
    const Evaluation e = t.evaluate(2, in.ConsumeIntegral<uint32_t>());
    if (!(e.exact_match >= 0 && e.exact_match <= 1)) std::abort();
    const ToyExample& x = e.example;
    if (x.attention.size() != x.output.size() * x.source.size()) std::abort();
    fuzz::require_finite(x.attention.data(), static_cast<int64_t>(x.attention.size()));
  } catch (const Error&) {
  }
  return 0;
}
