// attnlab-train: trains a translation model on a pairs TSV (English<TAB>French).
//
//   attnlab-train --data pairs.tsv --direction fra-eng --arch gru --d 256 --epochs 8 \
//                 --out web/models/fra-eng-gru.atl --checkpoint build/ckpt/fra-eng-gru
//   attnlab-train --config cfg.txt            (key=value lines, the same names as the flags)
//   ... --resume                               (continues from --checkpoint, bit-identically)
//
// Flags (defaults): direction fra-eng, arch gru|gru-luong|transformer, d 256, layers 2, heads 4,
// ffn 4*d, src-vocab 3000, tgt-vocab 3000, max-len 48 (tokens; longer pairs are skipped),
// epochs 10, batch 64, lr 1e-3, warmup 0, decay none|inv_sqrt|linear, clip 1, dropout 0.1,
// label-smoothing 0, seed 1, val-per-mille 30, filter none|tutorial, dtype int8|fp16|fp32,
// log-every 100, ckpt-every 1000, time-limit 0 (seconds; stop cleanly and save), eval-limit 300
// (validation sources for the per-epoch greedy BLEU; 0 = skip), max-steps 0 (0 = all epochs; also
// the end of the learning-rate schedule), stop-at 0 (stop there, checkpoint, keep the schedule).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <numeric>
#include <random>

#include "attnlab/nn/optim.hpp"
#include "attnlab/nn/weights.hpp"
#include "common_eval.hpp"
#include "data.hpp"

using namespace attnlab;
using namespace attnlab::tools;
using Clock = std::chrono::steady_clock;

namespace {

const char* const kUsage =
    "attnlab-train: trains a translation model on a pairs TSV (English<TAB>French)\n"
    "  --data FILE (Tatoeba pairs.tsv)  --direction fra-eng|eng-fra  --arch gru|gru-luong|transformer\n"
    "  --d 256  --layers 2  --heads 4  --ffn 4*d  --src-vocab 3000  --tgt-vocab 3000  --max-len 48\n"
    "  --epochs 10  --batch 64  --lr 1e-3  --warmup 0  --decay none|inv_sqrt|linear  --clip 1\n"
    "  --dropout 0.1  --label-smoothing 0  --seed 1  --val-per-mille 30  --filter none|tutorial\n"
    "  --out FILE.atl  --dtype int8|fp16|fp32  --checkpoint PREFIX  --resume  --ckpt-every 1000\n"
    "  --log-every 100  --eval-limit 300  --time-limit SECONDS  --max-steps N  --stop-at STEP\n"
    "  --config FILE (key=value lines, the flags' names)\n";

struct OptState {
  uint64_t step = 0, epoch = 0, batch = 0;
};

void save_opt(const std::string& path, const nn::Adam& adam, const OptState& s) {
  std::vector<uint8_t> b;
  auto put = [&](const void* p, size_t n) { b.insert(b.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n); };
  put("ATLNOPT1", 8);
  put(&s.step, 8);
  put(&s.epoch, 8);
  put(&s.batch, 8);
  const int64_t t = adam.t_;
  put(&t, 8);
  const uint64_t n = adam.m_.size();
  put(&n, 8);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t k = adam.m_[i].size();
    put(&k, 8);
    put(adam.m_[i].data(), k * 4);
    put(adam.v_[i].data(), k * 4);
  }
  write_file(path, b);
}

void load_opt(const std::string& path, nn::Adam& adam, OptState& s) {
  const auto b = read_file(path);
  size_t pos = 0;
  auto get = [&](void* p, size_t n) {
    if (pos + n > b.size()) throw std::runtime_error("optimizer checkpoint truncated: " + path);
    std::memcpy(p, b.data() + pos, n);
    pos += n;
  };
  char magic[8];
  get(magic, 8);
  if (std::memcmp(magic, "ATLNOPT1", 8) != 0) throw std::runtime_error("not an optimizer checkpoint: " + path);
  get(&s.step, 8);
  get(&s.epoch, 8);
  get(&s.batch, 8);
  int64_t t;
  get(&t, 8);
  adam.t_ = t;
  uint64_t n;
  get(&n, 8);
  if (n != adam.m_.size()) throw std::runtime_error("optimizer checkpoint does not match the model");
  for (size_t i = 0; i < n; ++i) {
    uint64_t k;
    get(&k, 8);
    if (k != adam.m_[i].size()) throw std::runtime_error("optimizer checkpoint does not match the model");
    get(adam.m_[i].data(), k * 4);
    get(adam.v_[i].data(), k * 4);
  }
}

nn::DType parse_dtype(const std::string& s) {
  if (s == "fp32") return nn::DType::F32;
  if (s == "fp16") return nn::DType::F16;
  if (s == "int8") return nn::DType::I8;
  throw std::runtime_error("dtype must be fp32, fp16 or int8");
}

// Batches of one epoch: shuffled with seed + epoch, then sorted by length inside pools of 50
// batches (little padding), then the batch order shuffled again.
std::vector<std::vector<int>> epoch_batches(const std::vector<std::vector<int>>& srcs, const std::vector<std::vector<int>>& tgts,
                                            int batch, uint64_t seed, uint64_t epoch) {
  std::vector<int> idx(srcs.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::mt19937 rng(static_cast<uint32_t>(seed * 1000003ull + epoch));
  std::shuffle(idx.begin(), idx.end(), rng);
  const size_t pool = static_cast<size_t>(batch) * 50;
  for (size_t p = 0; p < idx.size(); p += pool) {
    auto e = idx.begin() + std::min(idx.size(), p + pool);
    std::stable_sort(idx.begin() + p, e, [&](int a, int b) {
      return std::make_pair(srcs[a].size(), tgts[a].size()) < std::make_pair(srcs[b].size(), tgts[b].size());
    });
  }
  std::vector<std::vector<int>> out;
  for (size_t p = 0; p < idx.size(); p += batch) out.emplace_back(idx.begin() + p, idx.begin() + std::min(idx.size(), p + batch));
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // Every step allocates and frees the same few-megabyte buffers (the tape's tensors, the loss's
  // gradient). glibc serves blocks that large by mmap and returns them at free, so each step
  // faulted in fresh zeroed pages: the kernel's page clearing was 5% of the tutorial GRU's step.
  // Kept in the heap instead, the next step reuses them.
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
  try {
    Flags F;
    F.parse(argc, argv);
    if (F.usage_or_check(kUsage, {"data", "direction", "arch", "d", "layers", "heads", "ffn", "src-vocab", "tgt-vocab",
                                  "max-len", "epochs", "batch", "lr", "warmup", "decay", "clip", "dropout",
                                  "label-smoothing", "seed", "val-per-mille", "filter", "dtype", "log-every",
                                  "ckpt-every", "time-limit", "eval-limit", "max-steps", "stop-at", "checkpoint",
                                  "out", "resume"}))
      return 0;
    const std::string data = F.s("data", "/work/shared/data/tatoeba-fra-eng/pairs.tsv");
    const std::string direction = F.s("direction", "fra-eng");
    const uint64_t seed = static_cast<uint64_t>(F.i("seed", 1));
    const int per_mille = static_cast<int>(F.i("val-per-mille", 30));
    const std::string filter = F.s("filter", "none");
    const std::string ckpt = F.s("checkpoint", "");
    const std::string out = F.s("out", "");
    const int batch = static_cast<int>(F.i("batch", 64));
    const int epochs = static_cast<int>(F.i("epochs", 10));
    const double time_limit = F.f("time-limit", 0);
    const int64_t max_steps = F.i("max-steps", 0);
    const int64_t stop_at = F.i("stop-at", 0);  // stop (and checkpoint) here without changing the schedule
    const int log_every = static_cast<int>(F.i("log-every", 100));
    const int ckpt_every = static_cast<int>(F.i("ckpt-every", 1000));
    const size_t eval_limit = static_cast<size_t>(F.i("eval-limit", 300));

    // ---- data and split
    const auto all = read_pairs(data, direction);
    std::vector<Pair> train, val;
    for (const auto& p : all) {
      if (filter == "tutorial") {
        const std::string& en = direction == "fra-eng" ? p.tgt : p.src;
        const std::string& fr = direction == "fra-eng" ? p.src : p.tgt;
        if (!tutorial_filter(en, fr)) continue;
      } else if (filter != "none") {
        throw std::runtime_error("filter must be none or tutorial");
      }
      (per_mille > 0 && is_validation(p.src, per_mille) ? val : train).push_back(p);
    }
    std::printf("data: %zu pairs (%s, filter %s) -> %zu train, %zu validation (val-per-mille %d)\n", all.size(), direction.c_str(),
                filter.c_str(), train.size(), val.size(), per_mille);

    // ---- model: resume, or learn vocabularies and initialise
    nn::LoadedModel lm;
    const bool resume = F.has("resume") && !ckpt.empty() && std::ifstream(ckpt + ".atl").good();
    if (resume) {
      const auto bytes = read_file(ckpt + ".atl");
      lm = nn::load_model(bytes.data(), bytes.size());
      std::printf("resuming from %s.atl\n", ckpt.c_str());
    } else {
      const auto t0 = Clock::now();
      std::vector<std::string> s, t;
      for (const auto& p : train) {
        s.push_back(p.src);
        t.push_back(p.tgt);
      }
      lm.src = nn::Bpe::learn(s, static_cast<int>(F.i("src-vocab", 3000)));
      lm.tgt = nn::Bpe::learn(t, static_cast<int>(F.i("tgt-vocab", 3000)));
      std::printf("BPE learned in %.1f s: source %d tokens, target %d tokens\n",
                  std::chrono::duration<double>(Clock::now() - t0).count(), lm.src.size(), lm.tgt.size());
      nn::ModelConfig cfg;
      const std::string arch = F.s("arch", "gru");
      const int64_t d = F.i("d", 256);
      cfg.set("arch", arch);
      cfg.set("d", std::to_string(d));
      cfg.set("src_lang", direction == "fra-eng" ? "fr" : "en");
      cfg.set("tgt_lang", direction == "fra-eng" ? "en" : "fr");
      cfg.set("src_vocab", std::to_string(lm.src.size()));
      cfg.set("tgt_vocab", std::to_string(lm.tgt.size()));
      cfg.set("max_len", std::to_string(F.i("max-len", 48)));
      cfg.set("dropout", F.s("dropout", "0.1"));
      cfg.set("label_smoothing", F.s("label-smoothing", "0"));
      cfg.set("val_per_mille", std::to_string(per_mille));
      cfg.set("seed", std::to_string(seed));
      cfg.set("filter", filter);
      if (arch == "transformer") {
        cfg.set("layers", std::to_string(F.i("layers", 2)));
        cfg.set("heads", std::to_string(F.i("heads", 4)));
        cfg.set("ffn", std::to_string(F.i("ffn", 4 * d)));
      }
      lm.model = nn::make_model(cfg);
      nn::init_params(*lm.model, seed);
    }
    nn::Model& model = *lm.model;
    std::printf("model: %s, %lld parameters\n", model.cfg.serialize().c_str(), static_cast<long long>(model.num_params()));

    // ---- encode
    const int64_t maxlen = model.cfg.geti("max_len", 48);
    std::vector<std::vector<int>> S, T;
    size_t skipped = 0;
    for (const auto& p : train) {
      auto s = lm.src.encode(p.src), t = lm.tgt.encode(p.tgt);
      if (s.empty() || static_cast<int64_t>(s.size()) > maxlen || static_cast<int64_t>(t.size()) + 1 > maxlen) {
        ++skipped;
        continue;
      }
      S.push_back(std::move(s));
      T.push_back(std::move(t));
    }
    size_t src_tok = 0, tgt_tok = 0;
    for (size_t i = 0; i < S.size(); ++i) {
      src_tok += S[i].size();
      tgt_tok += T[i].size() + 1;
    }
    std::printf("encoded: %zu pairs (%zu skipped), %.2f source / %.2f target tokens per pair\n", S.size(), skipped,
                double(src_tok) / S.size(), double(tgt_tok) / S.size());
    const Grouped vg = group_by_source(val);

    // ---- optimiser
    const int64_t batches_per_epoch = (static_cast<int64_t>(S.size()) + batch - 1) / batch;
    nn::AdamConfig ac;
    ac.lr = static_cast<float>(F.f("lr", 1e-3));
    ac.warmup = F.i("warmup", 0);
    ac.decay = F.s("decay", "none");
    ac.total_steps = max_steps ? max_steps : batches_per_epoch * epochs;
    ac.clip = static_cast<float>(F.f("clip", 1.0));
    nn::Adam adam(model.param_ptrs(), ac);
    OptState os;
    if (resume) load_opt(ckpt + ".opt", adam, os);
    auto checkpoint = [&] {
      if (ckpt.empty()) return;
      write_file(ckpt + ".atl", nn::save_model(model, lm.src, lm.tgt, nn::DType::F32));
      save_opt(ckpt + ".opt", adam, os);
    };

    // ---- train
    nn::Tape tp;
    nn::Mt19937 drop_rng;
    const auto t_start = Clock::now();
    auto t_log = t_start;
    double loss_sum = 0, tok_log = 0;
    int64_t n_log = 0;
    const int64_t total = ac.total_steps;
    const int64_t step0 = static_cast<int64_t>(os.step);
    bool stop = false;
    for (uint64_t ep = os.epoch; ep < static_cast<uint64_t>(epochs) && !stop; ++ep) {
      const auto batches = epoch_batches(S, T, batch, seed, ep);
      const auto t_ep = Clock::now();
      const std::clock_t c_ep = std::clock();
      double ep_loss = 0, ep_tok = 0;
      for (uint64_t bi = (ep == os.epoch ? os.batch : 0); bi < batches.size(); ++bi) {
        std::vector<const std::vector<int>*> bs, bt;
        for (int i : batches[bi]) {
          bs.push_back(&S[i]);
          bt.push_back(&T[i]);
        }
        const nn::Batch b = nn::make_batch(bs, bt);
        drop_rng.seed(static_cast<uint32_t>(seed * 7919ull + os.step));
        tp.clear();
        nn::T loss = model.loss(tp, b, drop_rng, true);
        tp.backward(loss);
        adam.step();
        ++os.step;
        os.epoch = ep;
        os.batch = bi + 1;
        const double ntok = static_cast<double>(b.target_tokens());
        loss_sum += loss->v[0] * ntok;
        tok_log += ntok;
        ep_loss += loss->v[0] * ntok;
        ep_tok += ntok;
        ++n_log;
        const int64_t step = static_cast<int64_t>(os.step);
        if (step % log_every == 0) {
          const auto now = Clock::now();
          const double dt = std::chrono::duration<double>(now - t_log).count();
          const double el = std::chrono::duration<double>(now - t_start).count();
          const double eta = (step - step0) > 0 ? el / (step - step0) * (total - step) : 0;
          std::printf("epoch %llu step %lld/%lld loss %.4f lr %.2e %.0f tok/s elapsed %.0fs eta %.0fs\n",
                      static_cast<unsigned long long>(ep + 1), static_cast<long long>(step), static_cast<long long>(total),
                      loss_sum / tok_log, adam.lr_at(step), tok_log / dt, el, eta);
          std::fflush(stdout);
          loss_sum = tok_log = 0;
          n_log = 0;
          t_log = now;
        }
        if (ckpt_every > 0 && step % ckpt_every == 0) checkpoint();
        const double el = std::chrono::duration<double>(Clock::now() - t_start).count();
        if ((time_limit > 0 && el > time_limit) || (max_steps > 0 && step >= max_steps) || (stop_at > 0 && step >= stop_at)) {
          std::printf("stopping at step %lld (%s)\n", static_cast<long long>(step),
                      max_steps > 0 && step >= max_steps ? "max-steps" : stop_at > 0 && step >= stop_at ? "stop-at" : "time limit");
          stop = true;
          break;
        }
      }
      const double ep_s = std::chrono::duration<double>(Clock::now() - t_ep).count();
      const double ep_cpu = static_cast<double>(std::clock() - c_ep) / CLOCKS_PER_SEC;
      if (!stop) {
        os.epoch = ep + 1;
        os.batch = 0;
      }
      std::printf("epoch %llu %s in %.2f s (%.2f s CPU): train loss %.4f, %.0f target tok/s\n", static_cast<unsigned long long>(ep + 1),
                  stop ? "stopped" : "done", ep_s, ep_cpu, ep_tok > 0 ? ep_loss / ep_tok : 0.0, ep_tok / ep_s);
      if (eval_limit > 0 && !vg.srcs.empty()) {
        nn::DecodeOptions o;
        const auto r = eval_bleu(model, lm.src, lm.tgt, vg, o, eval_limit, 3);
        std::printf("  validation greedy BLEU %.2f on %zu sources (%.2f ms/sentence)\n", r.bleu, r.sources, r.ms_per_sentence);
      }
      std::fflush(stdout);
      checkpoint();
    }
    if (!out.empty()) {
      const auto bytes = nn::save_model(model, lm.src, lm.tgt, parse_dtype(F.s("dtype", "int8")));
      write_file(out, bytes);
      std::printf("wrote %s (%zu bytes)\n", out.c_str(), bytes.size());
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab-train: %s\n", e.what());
    return 1;
  }
}
