// Pretrained Hugging Face checkpoints (config.json + model.safetensors) on the engine's kernels:
// GPT-2 (GPT2LMHeadModel), BERT (BertModel, BertForMaskedLM) and GPT-Neo (GPTNeoForCausalLM, the
// TinyStories models). Loading is validate-then-allocate-then-stream: the safetensors header and
// the config are checked against each other (every name, dtype, shape, offset) before any tensor
// memory exists, then the data section arrives in chunks of any size straight into the model's
// own buffers (no second copy of the file), F16/BF16 widened in place at the end.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnlab/shape.hpp"
#include "attnlab/thread_pool.hpp"

namespace attnlab::pretrained {

enum class Dtype { F32, F16, BF16, Other };

struct TensorEntry {
  std::string name, dtype;  // dtype as written ("F32", "I64", ...)
  Dtype dt = Dtype::Other;
  Shape shape;
  uint64_t begin = 0, end = 0;  // byte offsets in the data section (after the header)
};

struct SafetensorsIndex {
  uint64_t data_start = 0;  // 8 + header length: where the data section begins in the file
  uint64_t data_size = 0;   // file size - data_start
  std::vector<TensorEntry> tensors;
  const TensorEntry* find(const std::string& name) const;
};

// The 8-byte little-endian header length, checked against the file's size and a 100 MB cap.
uint64_t safetensors_header_length(const uint8_t* first8, uint64_t file_size);
// Parses and validates header bytes [8, 8 + n) of a file of `file_size` bytes: JSON, dtypes, shapes,
// byte counts matching dtype x shape, offsets inside the data section and not overlapping.
SafetensorsIndex parse_safetensors_header(const char* header, uint64_t n, uint64_t file_size);

enum class Family { GPT2, BERT, GPTNeo };
const char* family_name(Family f);  // "gpt2", "bert", "gpt-neo": the API's (web/lib/pretrained)

struct ModelConfig {
  Family family = Family::GPT2;
  std::string architecture;  // as named in config.json
  int64_t vocab = 0, positions = 0, hidden = 0, layers = 0, heads = 0, inner = 0, type_vocab = 0;
  double eps = 1e-5;
  bool gelu_exact = false;       // BERT's "gelu" (erf); GPT-2 / GPT-Neo's "gelu_new" (tanh)
  bool tie_embeddings = true;    // output projection = the token embedding (transposed)
  bool scale_by_layer = false;   // GPT-2's scale_attn_by_inverse_layer_idx
  bool scaled = true;            // GPT-Neo: false (scores are not divided by sqrt(head dim))
  int64_t window = 0;            // GPT-Neo's local layers: keys i - window < j <= i
  std::vector<uint8_t> local;    // per layer: 1 = local (GPT-Neo), 0 = global
  int64_t pad_token = -1, mask_token = -1;
};

// Reads config.json; unknown `architectures` and absurd sizes are Errors.
ModelConfig read_config(const std::string& json);
// The architectures read_config accepts, for messages and the API.
const char* supported_architectures();

// What a forward or decoding step hands back.
struct Output {
  int64_t rows = 0, cols = 0;      // logits [rows, vocab] (hidden states [rows, hidden] for BertModel)
  std::vector<float> logits;
  int64_t ctx = 0;                 // attention [layers, heads, rows, ctx] when asked for
  std::vector<float> attention;
};

class Model {
 public:
  // Checks `index` against `cfg` (every tensor the architecture reads: present, F32/F16/BF16,
  // the shape the config implies) and that the parameters fit in `max_bytes`, then allocates.
  // `quantize`: the dense layers' and output projection's weights as int8 rows with one scale
  // each (about a quarter of the memory), quantised as they arrive.
  static std::unique_ptr<Model> create(const ModelConfig& cfg, const SafetensorsIndex& index,
                                       uint64_t max_bytes, bool quantize = false);
  ~Model();

  // Bytes [offset, offset + n) of the data section, in any order and any chunking (quantised
  // [out, in] tensors: each tensor's bytes in order).
  void feed(uint64_t offset, const uint8_t* bytes, uint64_t n);
  // After every byte: widens half-precision tensors, checks all arrived and are finite.
  void finish();

  const ModelConfig& config() const;
  uint64_t parameter_bytes() const;
  bool outputs_logits() const;  // false: BertModel without the MLM head gives hidden states

  // The whole sequence from position 0 (decoders: also restarts the KV cache with these tokens).
  // `types`: BERT's token types, or null for all zero.
  Output forward(const std::vector<int32_t>& ids, const std::vector<int32_t>* types, bool attentions,
                 ThreadPool* pool = nullptr);
  // Decoders only: appends tokens to the cache and returns their logits and their attention
  // over the whole context so far ([layers, heads, n, ctx]).
  Output extend(const std::vector<int32_t>& ids, bool attentions, ThreadPool* pool = nullptr);
  int64_t cached() const;  // tokens in the KV cache

  struct Impl;

 private:
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Convenience for native tools and tests: a whole file in memory.
std::unique_ptr<Model> load(const std::string& config_json, const uint8_t* file, uint64_t size,
                            uint64_t max_bytes = uint64_t(1) << 34, bool quantize = false);

}  // namespace attnlab::pretrained
