// The translation models: GRU encoder + attention GRU decoder (Bahdanau additive, or Luong
// general), and a d2l-style Transformer encoder-decoder (post-norm, sinusoidal positions).
// Training runs `loss` on a padded batch; inference runs `start` / `step` / `reorder`, one row per
// beam hypothesis, and reports each step's attention when asked.
#pragma once
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "attnlab/nn/random.hpp"
#include "attnlab/nn/tape.hpp"

namespace attnlab::nn {

// Key/value configuration stored verbatim in the weights file.
struct ModelConfig {
  std::map<std::string, std::string> kv;
  std::string get(const std::string& k, const std::string& def = "") const;
  int64_t geti(const std::string& k, int64_t def = 0) const;
  float getf(const std::string& k, float def = 0.f) const;
  void set(const std::string& k, const std::string& v) { kv[k] = v; }
  std::string serialize() const;
  static ModelConfig parse(const std::string& text);
};

struct Batch {
  int64_t B = 0, S = 0, T = 0;
  std::vector<int> src;      // [B, S], -1 padding
  std::vector<int> src_len;  // [B]
  std::vector<int> tgt_in;   // [B, T]: BOS y1 .. y_{n}, -1 padding
  std::vector<int> tgt_out;  // [B, T]: y1 .. y_n EOS, -1 padding
  int64_t target_tokens() const;
};
// Pads pairs of id sequences into a batch (adds BOS / EOS).
Batch make_batch(const std::vector<const std::vector<int>*>& src, const std::vector<const std::vector<int>*>& tgt);

// What decoding needs to know about each step's attention.
struct AttentionLayout {
  // GRU: "alignment" with 1 layer x 1 head over the source. Transformer: cross-attention per
  // layer and head, decoder self-attention per layer and head.
  int64_t layers = 1, heads = 1;
  bool has_self = false;
};

// What a decoder keeps between steps: the encoder's output and, for the Transformer, the
// self-attention keys and values of every step so far (an in-place cache whose capacity is
// reserved by start(): a step appends one row per layer, reorder() moves beams by index).
struct DecodeState {
  virtual ~DecodeState() = default;
  int64_t src_len = 0;
  int64_t rows = 1;  // live hypotheses
  int64_t t = 0;     // steps taken
  // Encoder self-attention [layers, heads, S, S] (Transformer; only when start() was asked).
  std::vector<float> enc_self;
  ThreadPool* pool = nullptr;  // DecodeLimits::pool
  std::deque<Tape> tapes;      // a step's tapes, one per part of the rows (Model::row_parts)
};

// One decoding step's results. The attention is filled only when step() is asked for it.
struct StepOutput {
  std::vector<float> logp;   // [rows, V] log-probabilities
  std::vector<float> cross;  // [rows, layers * heads * src_len] (GRU: the alignment over the source)
  std::vector<float> self;   // [rows, layers * heads * (t + 1)] decoder self-attention (Transformer)
};

// How much a decode may hold: live rows (the beam) and steps; start() reserves this once.
struct DecodeLimits {
  int64_t rows = 8;
  int64_t steps = 128;
  bool attention = true;  // collect the encoder's self-attention (Transformer)
  ThreadPool* pool = nullptr;  // threads for the decode's steps (Model::row_parts)
};

class Model {
 public:
  virtual ~Model() = default;
  ModelConfig cfg;
  std::vector<std::unique_ptr<Param>> params;
  std::vector<Param*> param_ptrs() const;
  Param* find(const std::string& name) const;
  int64_t num_params() const;

  // Mean token cross-entropy of a batch (label smoothing from cfg "label_smoothing").
  virtual T loss(Tape& tp, const Batch& b, Mt19937& rng, bool train) = 0;
  virtual std::unique_ptr<DecodeState> start(const std::vector<int>& src, const DecodeLimits& lim = {}) const = 0;
  // One step for every live row (last: each row's previous token; at most lim.rows of them).
  // With `attention`, out.cross and out.self get this step's weights.
  virtual void step(DecodeState& st, const std::vector<int>& last, bool attention, StepOutput& out) const = 0;
  // Row i of the next step continues row parent[i] of this one.
  virtual void reorder(DecodeState& st, const std::vector<int>& parent) const = 0;
  virtual AttentionLayout layout() const = 0;
  // After load_model() has filled the parameters: derived inference weights (the Transformer's
  // stacked int8 q/k/v).
  virtual void weights_loaded() {}
  int64_t tgt_vocab() const { return cfg.geti("tgt_vocab"); }

 protected:
  Param* add_param(const std::string& name, std::vector<int64_t> shape);
  // Runs f(tape, r0, r1) for a step's rows [0, R) split into parts, one per thread of st.pool,
  // each part every layer of its rows on its own thread and tape. A row's result never depends
  // on the other rows (every op of a step is row by row), so any split gives the same bits; a
  // step is one hand-off to the pool instead of one per product and attention (22 for the
  // shipped Transformer). A single row (greedy) keeps the pool for its products instead.
  void row_parts(DecodeState& st, int64_t R, const std::function<void(Tape&, int64_t, int64_t)>& f) const;
};

// Builds the model named by cfg "arch" ("gru" | "gru-luong" | "transformer") with zero-filled
// parameters of the right shapes; init() fills them randomly from `seed`.
std::unique_ptr<Model> make_model(const ModelConfig& cfg);
void init_params(Model& m, uint64_t seed);

}  // namespace attnlab::nn
