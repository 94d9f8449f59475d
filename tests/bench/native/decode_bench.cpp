// Greedy decoding: milliseconds per output token at output lengths 5, 20 and 40 with the same
// source, on a model file. End-of-sentence is never chosen (the next best token is), so every
// length is reached; each figure is the median over `reps` decodes of the steps alone (start(),
// the encoder, is reported apart), with and without collecting the attention. With an in-place
// KV cache a step's cost grows only by its attention over the keys so far, so the per-token
// figures should stay flat.
//   attnlab_decode_bench MODEL.atl [reps=30] [source text]
// Built with -DATTNLAB_DECODE_BENCH_OLD_API against an older tree (whose Model::step returned the
// attention through vectors every step and start() took no limits), it measures that tree the
// same way, for a before/after table (tests/bench/results/engine-*.md says how).
#include <algorithm>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "attnlab/nn/weights.hpp"

using namespace attnlab::nn;
// This thread's CPU time: a busy shared machine skews it far less than wall time.
static double cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: attnlab_decode_bench MODEL.atl [reps=30] [source text]\n");
    return 2;
  }
  std::ifstream f(argv[1], std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const int reps = argc > 2 ? std::stoi(argv[2]) : 30;
  const std::string text = argc > 3 ? argv[3] : "Je pense que nous devrions partir avant la nuit tombée.";
  LoadedModel lm = load_model(bytes.data(), bytes.size());
  const Model& m = *lm.model;
  const std::vector<int> src = lm.src.encode(text);
  const int64_t V = m.tgt_vocab();
  std::printf("model %s (%s), source \"%s\" (%zu tokens), %d decodes per figure, 1 thread\n", argv[1],
              m.cfg.get("arch").c_str(), text.c_str(), src.size(), reps);
  std::printf("CPU ms (thread), medians\n| output tokens | ms/token, no attention | ms/token, with attention | start() ms |\n|---|---|---|---|\n");
  // Lengths and modes interleaved within each repetition, so machine load hits all alike.
  const int lens[3] = {5, 20, 40};
  std::vector<double> per[3][2], starts[3];
  for (int r = 0; r < reps + 2; ++r)  // two warm-up rounds
    for (int li = 0; li < 3; ++li)
      for (int with_att = 0; with_att < 2; ++with_att) {
        const int len = lens[li];
#if defined(ATTNLAB_DECODE_BENCH_OLD_API)
        const double t0 = cpu_ms();
        auto st = m.start(src);
        const double t1 = cpu_ms();
        struct {
          std::vector<float> logp;
          std::vector<std::vector<float>> cross, self;
        } out;
#else
        DecodeLimits lim;
        lim.rows = 1;
        lim.steps = len;
        lim.attention = with_att;
        const double t0 = cpu_ms();
        auto st = m.start(src, lim);
        const double t1 = cpu_ms();
        StepOutput out;
#endif
        int last = Bpe::kBos;
        for (int s = 0; s < len; ++s) {
#if defined(ATTNLAB_DECODE_BENCH_OLD_API)
          m.step(*st, {last}, out.logp, out.cross, out.self);  // always collects the attention
#else
          m.step(*st, {last}, with_att, out);
#endif
          int best = Bpe::kEos + 1;
          for (int j = Bpe::kEos + 1; j < V; ++j)
            if (out.logp[j] > out.logp[best]) best = j;
          last = best;
        }
        const double t2 = cpu_ms();
        if (r < 2) continue;
        per[li][with_att].push_back((t2 - t1) / len);
        starts[li].push_back(t1 - t0);
      }
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  for (int li = 0; li < 3; ++li)
    std::printf("| %d | %.3f | %.3f | %.3f |\n", lens[li], median(per[li][0]), median(per[li][1]), median(starts[li]));
  return 0;
}
