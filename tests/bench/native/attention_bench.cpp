// Native Google Benchmark of the same kernels the WebAssembly build runs (here compiled by g++
// -O3 -march=native: the scalar twins, autovectorised), for the native vs WASM ratio in the
// benchmark report. Names mirror the Node benchmark's shapes: attention/H8/S512/causal/threads:2.
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "attnlab/attention.hpp"
#include "attnlab/linear.hpp"
#include "attnlab/multihead.hpp"

using namespace attnlab;

namespace {

std::vector<float> random(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = dist(rng);
  return x;
}

std::unique_ptr<ThreadPool> pool_of(int threads) {
  return threads > 1 ? std::make_unique<ThreadPool>(threads) : nullptr;
}

void attention_bench(benchmark::State& st, int64_t H, int64_t S, bool causal, int threads) {
  const int64_t d = 64;
  const auto q = random(H * S * d, 1), k = random(H * S * d, 2), v = random(H * S * d, 3);
  std::vector<float> out(H * S * d);
  AttentionDims dims;
  dims.lead = {H};
  dims.Sq = dims.Sk = S;
  dims.Dq = dims.Dk = dims.Dv = d;
  MaskSet masks;
  masks.causal = causal;
  auto pool = pool_of(threads);
  for (auto _ : st)
    attention(q.data(), k.data(), v.data(), dims, Score::ScaledDot, {}, masks, out.data(), nullptr,
              pool.get());
  st.counters["GFLOPs"] = benchmark::Counter(4.0 * H * S * S * d, benchmark::Counter::kIsIterationInvariantRate);
}

void linear_bench(benchmark::State& st, int64_t rows, int64_t E, int threads) {
  const auto x = random(rows * E, 1), W = random(E * E, 2), b = random(E, 3);
  std::vector<float> y(rows * E);
  auto pool = pool_of(threads);
  for (auto _ : st) linear(x.data(), E, rows, E, W.data(), b.data(), E, y.data(), E, pool.get());
  st.counters["GFLOPs"] = benchmark::Counter(2.0 * rows * E * E, benchmark::Counter::kIsIterationInvariantRate);
}

void mha_bench(benchmark::State& st, int64_t S, int64_t E, int64_t H, int threads) {
  const auto x = random(S * E, 1), in_w = random(3 * E * E, 2), out_w = random(E * E, 3);
  const auto in_b = random(3 * E, 4), out_b = random(E, 5);
  std::vector<float> y(S * E);
  MultiHeadParams p;
  p.embed_dim = E, p.num_heads = H;
  p.in_proj_weight = in_w.data(), p.in_proj_bias = in_b.data();
  p.out_proj_weight = out_w.data(), p.out_proj_bias = out_b.data();
  auto pool = pool_of(threads);
  for (auto _ : st)
    multi_head_attention(x.data(), x.data(), x.data(), 1, S, S, p, {}, y.data(), nullptr, false,
                         pool.get());
  st.counters["GFLOPs"] = benchmark::Counter(8.0 * S * E * E + 4.0 * S * S * E, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

int main(int argc, char** argv) {
  for (int threads : {1, 2}) {
    const std::string t = "/threads:" + std::to_string(threads);
    for (auto [H, S] : {std::pair<int64_t, int64_t>{8, 128}, {8, 512}, {8, 1024}, {1, 2048}, {1, 8192}})
      for (bool causal : {false, true}) {
        const std::string name = "attention/H" + std::to_string(H) + "/S" + std::to_string(S) +
                                 (causal ? "/causal" : "/dense") + t;
        benchmark::RegisterBenchmark(name.c_str(), attention_bench, H, S, causal, threads)
            ->Unit(benchmark::kMillisecond)->UseRealTime();
      }
    benchmark::RegisterBenchmark(("linear/512x512x512" + t).c_str(), linear_bench, 512, 512, threads)
        ->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark(("mha/E512/H8/S512" + t).c_str(), mha_bench, 512, 512, 8, threads)
        ->Unit(benchmark::kMillisecond)->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
