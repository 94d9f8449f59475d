// The nn engine's three matrix products (cpp/src/nn/gemm.cpp: a Linear's forward and the two
// products of its backward) on the shapes the two training recipes spend their time in, 1 thread:
// median GFLOP/s over `reps` calls of each, thread CPU time. Build it from two trees and run them
// one after the other for a before/after table (tests/bench/results/train-gemm-rows8-*.md).
//   attnlab_nn_gemm_bench [reps=41]
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "attnlab/nn/gemm.hpp"

using namespace attnlab::nn;

static double cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

template <class F>
static double median_s(F f, int reps) {
  std::vector<double> t;
  f();  // warm: scratch grown, caches filled
  for (int r = 0; r < reps; ++r) {
    const double t0 = cpu_s();
    f();
    t.push_back(cpu_s() - t0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::stoi(argv[1]) : 41;
  struct Shape { const char* what; int64_t N, K, M; };
  // N rows (tokens in a batch), K inputs, M outputs.
  const Shape shapes[] = {
      {"GRU tutorial: output layer (32 x ~7 tokens, 128 -> 2900)", 224, 128, 2900},
      {"GRU tutorial: decoder cell input (cat(embedding, context) 256 -> 3 x 128)", 32, 256, 384},
      {"Transformer: FFN up (64 x ~7 tokens, 256 -> 1024)", 448, 256, 1024},
      {"Transformer: FFN down (1024 -> 256)", 448, 1024, 256},
      {"Transformer: output layer (256 -> 3000)", 448, 256, 3000},
  };
  std::printf("%-76s %9s %9s %9s\n", "shape [N x K] -> M, GFLOP/s (median)", "nt", "nn", "tn");
  for (const Shape& s : shapes) {
    const int64_t N = s.N, K = s.K, M = s.M;
    std::vector<float> x(N * K), w(M * K), y(N * M), dy(N * M), dx(N * K), dw(M * K);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.001f * static_cast<float>(i % 997);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.002f * static_cast<float>(i % 991);
    for (size_t i = 0; i < dy.size(); ++i) dy[i] = 0.003f * static_cast<float>(i % 983);
    GemmScratch sc;
    const double flop = 2.0 * N * K * M;
    const double nt = median_s([&] { gemm_nt(x.data(), w.data(), y.data(), N, M, K, &sc); }, reps);
    const double nn = median_s([&] { gemm_nn(dy.data(), w.data(), dx.data(), N, M, K, false, &sc); }, reps);
    const double tn = median_s([&] { gemm_tn(dy.data(), x.data(), dw.data(), N, M, K, false, &sc); }, reps);
    std::printf("%-76s %9.1f %9.1f %9.1f\n", s.what, flop / nt * 1e-9, flop / nn * 1e-9, flop / tn * 1e-9);
  }
}
