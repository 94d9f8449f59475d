// embind for issue 4: translators (load a model file from the heap, translate with attention) and
// the in-browser trainer (a toy sequence task trained by the same C++ engine). Objects live in
// handle tables; every call returns JSON text: {"error": "..."} on failure, no exception crosses
// into JavaScript.
#include <emscripten/bind.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <new>
#include <random>
#include <string>

#include "attnlab/error.hpp"
#include "attnlab/nn/optim.hpp"
#include "attnlab/nn/translate.hpp"

using namespace attnlab;
using namespace attnlab::nn;

namespace {

std::string jstr(const std::string& s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') { o.push_back('\\'); o.push_back(static_cast<char>(c)); }
    else if (c < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", c);
      o += b;
    } else o.push_back(static_cast<char>(c));
  }
  return o + "\"";
}
std::string jnum(double x) {
  if (!std::isfinite(x)) return "null";
  char b[32];
  std::snprintf(b, sizeof b, "%.5g", x);
  return b;
}
std::string jarr(const std::vector<std::string>& v) {
  std::string o = "[";
  for (size_t i = 0; i < v.size(); ++i) o += (i ? "," : "") + jstr(v[i]);
  return o + "]";
}
template <class It>
std::string jfloats(It b, It e) {
  std::string o = "[";
  for (It i = b; i != e; ++i) o += (i == b ? "" : ",") + jnum(*i);
  return o + "]";
}

template <class F>
std::string guarded(F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    return "{\"error\":" + jstr(e.what()) + "}";
  } catch (const std::bad_alloc&) {
    return "{\"error\":\"out of memory: the WebAssembly heap could not grow enough\"}";
  } catch (const std::exception& e) {
    return "{\"error\":" + jstr(std::string("internal error: ") + e.what()) + "}";
  }
}

std::map<int, std::unique_ptr<Translator>> translators;
int next_id = 1;

std::string translator_create(double ptr, double len) {
  return guarded([&] {
    const auto* p = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(ptr));
    auto tr = Translator::load(p, static_cast<size_t>(len));
    const int id = next_id++;
    const auto& cfg = tr->model().cfg;
    std::string info = "{\"id\":" + std::to_string(id) + ",\"arch\":" + jstr(cfg.get("arch")) + ",\"srcLang\":" + jstr(cfg.get("src_lang")) +
                       ",\"tgtLang\":" + jstr(cfg.get("tgt_lang")) + ",\"parameters\":" + std::to_string(tr->model().num_params()) +
                       ",\"srcVocab\":" + std::to_string(tr->src_vocab().size()) + ",\"tgtVocab\":" + std::to_string(tr->tgt_vocab().size()) +
                       ",\"config\":" + jstr(cfg.serialize()) + "}";
    translators[id] = std::move(tr);
    return info;
  });
}

// {text, sourceTokens, targetTokens, sourcePieces, score, attention: {...}, beams: [{text, tokens, score}]}
std::string translator_translate(int id, std::string text, int beam, int max_len, double length_penalty) {
  return guarded([&] {
    auto it = translators.find(id);
    require(it != translators.end(), [] { return std::string("translate: this translator has been disposed"); });
    const Translator& tr = *it->second;
    DecodeOptions o;
    o.beam = beam;
    o.max_len = max_len;
    o.length_penalty = static_cast<float>(length_penalty);
    const Translation t = tr.translate(text, o);
    const int64_t S = static_cast<int64_t>(t.src_tokens.size());
    const int64_t Tn = static_cast<int64_t>(t.tgt_tokens.size());
    std::string j = "{\"text\":" + jstr(t.text) + ",\"sourceTokens\":" + jarr(t.src_tokens) + ",\"targetTokens\":" + jarr(t.tgt_tokens);
    // Pieces before the model's source limit cut them: more than sourceTokens means truncated.
    j += ",\"sourcePieces\":" + std::to_string(tr.src_vocab().encode(text).size());
    const Hypothesis* best = t.beams.empty() ? nullptr : &t.beams[0];
    j += ",\"score\":" + jnum(best ? best->score : 0) + ",\"logProb\":" + jnum(best ? best->logp : 0);
    const int64_t L = t.layout.layers, H = t.layout.heads;
    // cross [L, H, T, S]
    std::vector<float> cross(L * H * Tn * S, 0.f), self;
    if (best)
      for (int64_t s = 0; s < Tn; ++s)
        for (int64_t lh = 0; lh < L * H; ++lh)
          for (int64_t k = 0; k < S; ++k) cross[(lh * Tn + s) * S + k] = best->cross[s][lh * S + k];
    j += ",\"attention\":{\"layers\":" + std::to_string(L) + ",\"heads\":" + std::to_string(H);
    if (!t.layout.has_self) {
      j += ",\"kind\":\"alignment\",\"alignment\":" + jfloats(cross.begin(), cross.end());
    } else {
      self.assign(L * H * Tn * Tn, 0.f);  // [L, H, T, T], causal (zeros above the diagonal)
      if (best)
        for (int64_t s = 0; s < Tn; ++s)
          for (int64_t lh = 0; lh < L * H; ++lh)
            for (int64_t k = 0; k <= s; ++k) self[(lh * Tn + s) * Tn + k] = best->self[s][lh * (s + 1) + k];
      j += ",\"kind\":\"transformer\",\"cross\":" + jfloats(cross.begin(), cross.end()) + ",\"decoderSelf\":" + jfloats(self.begin(), self.end()) +
           ",\"encoderSelf\":" + jfloats(t.enc_self.begin(), t.enc_self.end());
    }
    j += "},\"beams\":[";
    for (size_t b = 0; b < t.beams.size(); ++b) {
      std::vector<std::string> toks;
      for (int id2 : t.beams[b].ids) toks.push_back(id2 == Bpe::kEos ? "</s>" : tr.tgt_vocab().piece(id2));
      j += std::string(b ? "," : "") + "{\"text\":" + jstr(tr.tgt_vocab().decode(t.beams[b].ids, tr.tgt_lang())) + ",\"tokens\":" + jarr(toks) +
           ",\"score\":" + jnum(t.beams[b].score) + ",\"logProb\":" + jnum(t.beams[b].logp) + "}";
    }
    return j + "]}";
  });
}

void translator_dispose(int id) { translators.erase(id); }

// ---------------------------------------------------------------- the toy trainer

struct Trainer {
  std::unique_ptr<Model> model;
  std::unique_ptr<Adam> adam;
  std::string task;
  int symbols = 8, min_len = 3, max_len = 6, batch = 32;
  std::mt19937 rng;
  Tape tp;
  int64_t step = 0;
};
std::map<int, std::unique_ptr<Trainer>> trainers;

// Tokens: the target-vocabulary byte ids 'a'.. stand for the task symbols so pieces print nicely.
int sym_tok(int s) { return Bpe::kByte0 + 'a' + s; }

void make_example(Trainer& t, std::mt19937& rng, std::vector<int>& src, std::vector<int>& tgt) {
  std::uniform_int_distribution<int> L(t.min_len, t.max_len), S(0, t.symbols - 1);
  const int n = L(rng);
  src.clear();
  for (int i = 0; i < n; ++i) src.push_back(sym_tok(S(rng)));
  if (t.task == "reverse") tgt.assign(src.rbegin(), src.rend());
  else if (t.task == "sort") {
    tgt = src;
    std::sort(tgt.begin(), tgt.end());
  } else tgt = src;  // copy
}

std::string trainer_create(std::string task, int arch_id, int d, int symbols, int min_len, int max_len, int batch, double lr, int seed) {
  return guarded([&] {
    require(task == "reverse" || task == "sort" || task == "copy", [&] { return "createTrainer: task must be 'reverse', 'sort' or 'copy', got '" + task + "'"; });
    require(d >= 4 && d <= 512 && d % 4 == 0, [] { return std::string("createTrainer: hidden must be a multiple of 4 in [4, 512]"); });
    require(symbols >= 2 && symbols <= 26, [] { return std::string("createTrainer: symbols must be in [2, 26]"); });
    require(min_len >= 1 && min_len <= max_len && max_len <= 30, [] { return std::string("createTrainer: need 1 <= minLength <= maxLength <= 30"); });
    require(batch >= 1 && batch <= 512, [] { return std::string("createTrainer: batch must be in [1, 512]"); });
    auto t = std::make_unique<Trainer>();
    t->task = task;
    t->symbols = symbols;
    t->min_len = min_len;
    t->max_len = max_len;
    t->batch = batch;
    t->rng.seed(static_cast<uint32_t>(seed));
    ModelConfig cfg;
    cfg.set("arch", arch_id == 0 ? "gru" : arch_id == 1 ? "gru-luong" : "transformer");
    cfg.set("d", std::to_string(d));
    cfg.set("heads", "4");
    cfg.set("layers", "1");
    cfg.set("ffn", std::to_string(2 * d));
    cfg.set("max_len", "64");
    cfg.set("src_vocab", std::to_string(Bpe::kFirstSymbol));
    cfg.set("tgt_vocab", std::to_string(Bpe::kFirstSymbol));
    cfg.set("dropout", "0");
    t->model = make_model(cfg);
    init_params(*t->model, static_cast<uint64_t>(seed));
    AdamConfig ac;
    ac.lr = static_cast<float>(lr);
    ac.warmup = 50;
    ac.clip = 1.f;
    t->adam = std::make_unique<Adam>(t->model->param_ptrs(), ac);
    const int id = next_id++;
    trainers[id] = std::move(t);
    return "{\"id\":" + std::to_string(id) + ",\"parameters\":" + std::to_string(trainers[id]->model->num_params()) + "}";
  });
}

std::string trainer_step(int id, int steps) {
  return guarded([&] {
    auto it = trainers.find(id);
    require(it != trainers.end(), [] { return std::string("trainer: disposed"); });
    Trainer& t = *it->second;
    double loss = 0, tokens = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < steps; ++s) {
      std::vector<std::vector<int>> src(t.batch), tgt(t.batch);
      std::vector<const std::vector<int>*> ps, pt;
      for (int i = 0; i < t.batch; ++i) {
        make_example(t, t.rng, src[i], tgt[i]);
        ps.push_back(&src[i]);
        pt.push_back(&tgt[i]);
      }
      const Batch b = make_batch(ps, pt);
      t.tp.clear();
      T l = t.model->loss(t.tp, b, t.rng, true);
      t.tp.backward(l);
      t.adam->step();
      ++t.step;
      loss += l->v[0];
      tokens += static_cast<double>(b.target_tokens());
    }
    t.tp.clear();
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return "{\"step\":" + std::to_string(t.step) + ",\"loss\":" + jnum(steps ? loss / steps : 0) + ",\"tokensPerSecond\":" + jnum(sec > 0 ? tokens / sec : 0) + "}";
  });
}

// Exact-match accuracy on n fresh examples (fixed seed), plus one example with its attention.
std::string trainer_evaluate(int id, int n, int seed) {
  return guarded([&] {
    auto it = trainers.find(id);
    require(it != trainers.end(), [] { return std::string("trainer: disposed"); });
    Trainer& t = *it->second;
    std::mt19937 rng(static_cast<uint32_t>(seed));
    int correct = 0;
    std::string example;
    for (int i = 0; i < n; ++i) {
      std::vector<int> src, tgt;
      make_example(t, rng, src, tgt);
      DecodeOptions o;
      o.max_len = static_cast<int>(tgt.size()) + 4;
      const auto hyps = beam_search(*t.model, src, o);
      std::vector<int> out = hyps.empty() ? std::vector<int>{} : hyps[0].ids;
      if (!out.empty() && out.back() == Bpe::kEos) out.pop_back();
      correct += out == tgt;
      if (i == 0) {
        auto str = [](const std::vector<int>& v) {
          std::vector<std::string> s;
          for (int x : v) s.push_back(std::string(1, static_cast<char>(x - Bpe::kByte0)));
          return s;
        };
        std::vector<float> att;
        const auto lay = t.model->layout();
        const int64_t S = static_cast<int64_t>(src.size()), Tn = hyps.empty() ? 0 : static_cast<int64_t>(hyps[0].ids.size());
        // head-averaged, last layer cross-attention [T, S]
        for (int64_t s = 0; s < Tn; ++s)
          for (int64_t k = 0; k < S; ++k) {
            float a = 0;
            for (int64_t h = 0; h < lay.heads; ++h) a += hyps[0].cross[s][((lay.layers - 1) * lay.heads + h) * S + k];
            att.push_back(a / static_cast<float>(lay.heads));
          }
        auto tt = str(out);
        if (Tn > static_cast<int64_t>(out.size())) tt.push_back("</s>");
        example = "{\"source\":" + jarr(str(src)) + ",\"target\":" + jarr(str(tgt)) + ",\"output\":" + jarr(tt) +
                  ",\"attention\":" + jfloats(att.begin(), att.end()) + "}";
      }
    }
    return "{\"exactMatch\":" + jnum(n ? static_cast<double>(correct) / n : 0) + ",\"example\":" + (example.empty() ? "null" : example) + "}";
  });
}

void trainer_dispose(int id) { trainers.erase(id); }

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_translate) {
  emscripten::function("translatorCreate", &translator_create);
  emscripten::function("translatorTranslate", &translator_translate);
  emscripten::function("translatorDispose", &translator_dispose);
  emscripten::function("trainerCreate", &trainer_create);
  emscripten::function("trainerStep", &trainer_step);
  emscripten::function("trainerEvaluate", &trainer_evaluate);
  emscripten::function("trainerDispose", &trainer_dispose);
}
