// Pretrained-checkpoint shapes on the native engine (issue 16): a GPT-2 124M-, TinyStories-33M-
// (GPT-Neo) or bert-base-shaped checkpoint of random F16 weights (speed does not depend on their
// values) built in memory, then: a 128-token prompt (forward with every attention map) and, for
// the decoders, per generated token (extend by one through the KV cache), at 1 and 2 threads.
// Figures are medians; with a pool, wall time (process CPU time over all threads is also shown).
//   attnlab_pretrained_bench [gpt2|tinystories|bert] [reps=5]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "attnlab/pretrained.hpp"

using namespace attnlab;
using namespace attnlab::pretrained;

namespace {

double wall_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
double cpu_ms() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct T { std::string name; std::vector<int64_t> shape; };

std::vector<uint8_t> checkpoint(const std::vector<T>& ts) {
  std::string h = "{";
  uint64_t off = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    uint64_t n = 2;
    for (int64_t d : ts[i].shape) n *= static_cast<uint64_t>(d);
    h += (i ? ",\"" : "\"") + ts[i].name + "\":{\"dtype\":\"F16\",\"shape\":[";
    for (size_t d = 0; d < ts[i].shape.size(); ++d) h += (d ? "," : "") + std::to_string(ts[i].shape[d]);
    h += "],\"data_offsets\":[" + std::to_string(off) + "," + std::to_string(off + n) + "]}";
    off += n;
  }
  h += "}";
  std::vector<uint8_t> f(8 + h.size() + off);
  const uint64_t hn = h.size();
  std::memcpy(f.data(), &hn, 8);
  std::memcpy(f.data() + 8, h.data(), h.size());
  // Halves of magnitude below 0.06 (exponent 10..14 of 15-biased F16): LayerNorm keeps every scale sane.
  std::mt19937 rng(1);
  uint16_t* d = reinterpret_cast<uint16_t*>(f.data() + 8 + h.size());
  for (uint64_t i = 0; i < off / 2; ++i) {
    const uint32_t r = rng();
    d[i] = static_cast<uint16_t>(((r >> 16) & 0x8000) | ((10 + r % 5) << 10) | ((r >> 3) & 0x3ff));
  }
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "gpt2";
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  std::string config;
  std::vector<T> ts;
  auto norm = [&](const std::string& p, int64_t E) {
    ts.push_back({p + ".weight", {E}});
    ts.push_back({p + ".bias", {E}});
  };
  if (which == "gpt2" || which == "tinystories") {
    const bool neo = which == "tinystories";
    const int64_t E = 768, L = neo ? 4 : 12, V = 50257, P = neo ? 2048 : 1024, I = 4 * E;
    config = neo ? "{\"architectures\":[\"GPTNeoForCausalLM\"],\"hidden_size\":768,\"num_layers\":4,\"num_heads\":16,"
                   "\"max_position_embeddings\":2048,\"window_size\":256,\"attention_types\":[[[\"global\",\"local\"],2]]}"
                 : "{\"architectures\":[\"GPT2LMHeadModel\"]}";
    const std::string p = neo ? "transformer." : "";
    ts.push_back({p + "wte.weight", {V, E}});
    ts.push_back({p + "wpe.weight", {P, E}});
    for (int64_t l = 0; l < L; ++l) {
      const std::string h = p + "h." + std::to_string(l) + ".";
      norm(h + "ln_1", E);
      norm(h + "ln_2", E);
      if (neo) {
        for (const char* n : {"q_proj", "k_proj", "v_proj", "out_proj"}) ts.push_back({h + "attn.attention." + n + ".weight", {E, E}});
        ts.push_back({h + "attn.attention.out_proj.bias", {E}});
        ts.push_back({h + "mlp.c_fc.weight", {I, E}});
        ts.push_back({h + "mlp.c_proj.weight", {E, I}});
      } else {
        ts.push_back({h + "attn.c_attn.weight", {E, 3 * E}});
        ts.push_back({h + "attn.c_attn.bias", {3 * E}});
        ts.push_back({h + "attn.c_proj.weight", {E, E}});
        ts.push_back({h + "attn.c_proj.bias", {E}});
        ts.push_back({h + "mlp.c_fc.weight", {E, I}});
        ts.push_back({h + "mlp.c_proj.weight", {I, E}});
      }
      ts.push_back({h + "mlp.c_fc.bias", {I}});
      ts.push_back({h + "mlp.c_proj.bias", {E}});
    }
    norm(p + "ln_f", E);
  } else {
    const int64_t E = 768, V = 30522, I = 3072;
    config = "{\"architectures\":[\"BertForMaskedLM\"]}";
    ts.push_back({"bert.embeddings.word_embeddings.weight", {V, E}});
    ts.push_back({"bert.embeddings.position_embeddings.weight", {512, E}});
    ts.push_back({"bert.embeddings.token_type_embeddings.weight", {2, E}});
    norm("bert.embeddings.LayerNorm", E);
    for (int l = 0; l < 12; ++l) {
      const std::string h = "bert.encoder.layer." + std::to_string(l) + ".";
      for (const char* n : {"attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"}) {
        ts.push_back({h + n + ".weight", {E, E}});
        ts.push_back({h + n + ".bias", {E}});
      }
      norm(h + "attention.output.LayerNorm", E);
      ts.push_back({h + "intermediate.dense.weight", {I, E}});
      ts.push_back({h + "intermediate.dense.bias", {I}});
      ts.push_back({h + "output.dense.weight", {E, I}});
      ts.push_back({h + "output.dense.bias", {E}});
      norm(h + "output.LayerNorm", E);
    }
    ts.push_back({"cls.predictions.transform.dense.weight", {E, E}});
    ts.push_back({"cls.predictions.transform.dense.bias", {E}});
    norm("cls.predictions.transform.LayerNorm", E);
    ts.push_back({"cls.predictions.bias", {V}});
  }
  const std::vector<uint8_t> file = checkpoint(ts);
  double t0 = wall_ms();
  auto m = load(config, file.data(), file.size());
  std::printf("%s-shaped: %.1f MB F16 file, %.1f MB fp32 parameters, loaded in %.0f ms\n", which.c_str(), file.size() / 1e6,
              m->parameter_bytes() / 1e6, wall_ms() - t0);
  std::vector<int32_t> prompt(128);
  for (int i = 0; i < 128; ++i) prompt[i] = (i * 7919) % 30000;
  const bool decoder = m->config().family != Family::BERT;
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    ThreadPool* p = threads > 1 ? &pool : nullptr;
    std::vector<double> pw, pc, tw, tc;
    for (int r = 0; r < reps; ++r) {
      double w = wall_ms(), c = cpu_ms();
      m->forward(prompt, nullptr, true, p);
      pw.push_back(wall_ms() - w);
      pc.push_back(cpu_ms() - c);
      if (!decoder) continue;
      for (int k = 0; k < 8; ++k) {
        w = wall_ms(), c = cpu_ms();
        m->extend({static_cast<int32_t>(1000 + k)}, true, p);
        tw.push_back(wall_ms() - w);
        tc.push_back(cpu_ms() - c);
      }
    }
    std::printf("  %d thread(s): prompt of 128 tokens %.1f ms (CPU %.1f ms)", threads, median(pw), median(pc));
    if (decoder) std::printf(", per generated token %.2f ms (CPU %.2f ms)", median(tw), median(tc));
    std::printf("\n");
  }
}
