// Greedy and beam-search decoding with the attention of every step, and corpus BLEU-4.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "attnlab/nn/weights.hpp"

namespace attnlab::nn {

struct DecodeOptions {
  int beam = 1;              // 1 = greedy
  int max_len = 0;           // target tokens before EOS; 0 = 2 * source tokens + 10 (at most 100)
  float length_penalty = 0.6f;  // GNMT alpha: score = logp / ((5 + len) / 6)^alpha
  bool attention = true;     // collect each returned hypothesis's attention (and the encoder's)
  bool best_attention_only = false;  // with attention: beams[0]'s only (all that attention_maps reads)
  ThreadPool* pool = nullptr;  // threads for the decode (Model::row_parts; null: this thread); same results
};

struct Hypothesis {
  std::vector<int> ids;      // target ids, EOS last when finished
  float logp = 0.f, score = 0.f;
  bool finished = false;
  // Stopped by max_len: its EOS was forced there while the model's most likely next token was
  // another (or it never ended). The text is then likely incomplete.
  bool cut = false;
  // Per step, when DecodeOptions::attention: cross [layers * heads * S] (GRU: the alignment over
  // S), self [layers * heads * (t + 1)].
  std::vector<std::vector<float>> cross, self;
  std::vector<int> rows;  // the decoder row this hypothesis occupied at each step
};

struct Translation {
  std::string text;
  std::vector<int> src_ids;
  size_t src_pieces = 0;  // source ids before the model's length limit cut them to src_ids
  std::vector<std::string> src_tokens, tgt_tokens;  // display pieces ("▁" dropped; "</s>" ends)
  std::vector<Hypothesis> beams;                     // best first
  AttentionLayout layout;
  std::vector<float> enc_self;                       // [layers, heads, S, S] (Transformer)
};

class Translator {
 public:
  static std::unique_ptr<Translator> load(const uint8_t* data, size_t size);
  explicit Translator(LoadedModel m) : m_(std::move(m)) {}
  Translation translate(const std::string& text, const DecodeOptions& opt) const;
  std::vector<Hypothesis> search(const std::vector<int>& src, const DecodeOptions& opt, DecodeState* keep = nullptr) const;
  const Model& model() const { return *m_.model; }
  const Bpe& src_vocab() const { return m_.src; }
  const Bpe& tgt_vocab() const { return m_.tgt; }
  std::string tgt_lang() const { return m_.model->cfg.get("tgt_lang", "en"); }

 private:
  LoadedModel m_;
};

std::vector<Hypothesis> beam_search(const Model& m, const std::vector<int>& src, const DecodeOptions& opt,
                                    std::vector<float>* enc_self = nullptr);

// idx[0, k) = the k best of a row of V >= k log-probs (a log-softmax: NaN throughout, or nowhere),
// higher first, ties by lower id; bm: (V + 15) / 16 floats of scratch; k <= 65. beam_search's
// choice of each hypothesis's next tokens.
void top_k(const float* row, int64_t V, int k, float* bm, int* idx);

// Corpus BLEU-4 (uniform weights, brevity penalty against the closest reference length) over
// bleu_tokens(); refs[i] holds every reference of hypothesis i.
double corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::vector<std::string>>& refs);

}  // namespace attnlab::nn
