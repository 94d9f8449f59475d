// The three architectures' forward passes over flat arrays (llm.c's style: plain functions, one
// buffer of parameters), following Hugging Face transformers' modeling files:
//   GPT-2   models/gpt2/modeling_gpt2.py (GPT2Block: ln_1, attn (Conv1D c_attn [E, 3E], c_proj),
//           ln_2, mlp (c_fc, gelu_new, c_proj)), and karpathy/llm.c train_gpt2.c's loader, which
//           reads the same tensors; Conv1D stores [in, out] (y = x W + b), transposed here at load
//           into the [out, in] of attnlab::linear.
//   BERT    models/bert/modeling_bert.py (BertEmbeddings: word + position + token type, LayerNorm;
//           BertLayer: self-attention, BertSelfOutput (dense, residual, LayerNorm), intermediate
//           (gelu), BertOutput; BertLMPredictionHead: transform (dense, act, LayerNorm), decoder
//           tied to the word embeddings plus cls.predictions.bias).
//   GPT-Neo models/gpt_neo/modeling_gpt_neo.py (GPTNeoSelfAttention: q/k/v without bias, scores
//           not scaled, local layers see keys i - window < j <= i; nn.Linear MLP).
// Attention runs on the engine's fused kernel (attend_slices over a prompt, attend_slice per new
// token against the KV cache, whose keys are kept as the kernel's 8-key panels as in
// nn/model.cpp's Transformer decoder), the dense layers on attnlab::linear's kernels with the
// weights packed once at load (attnlab::linear_panels), or, when asked to quantise, as int8 rows with
// one scale each (as the .atl models' int8, nn/weights.cpp) on the translators' int8 product
// (nn::gemm_nt_q8), quantised while they stream in so the fp32 weights never all exist at once.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

#include "attnlab/attention.hpp"
#include "attnlab/error.hpp"
#include "attnlab/linear.hpp"
#include "attnlab/nn/gemm.hpp"
#include "attnlab/pretrained.hpp"
#include "kernels.hpp"

namespace attnlab::pretrained {
namespace {

// Int8 weights [out, in]: rows padded to ldw (a multiple of 16), in kernels::Q8Layout's tiles.
struct Q8 { const int8_t* q = nullptr; const float* scale = nullptr; kernels::Q8Layout L; };
struct Lin { const float* w = nullptr; const float* b = nullptr; int64_t in = 0, out = 0; Q8 q8; };
struct Norm { const float* w = nullptr; const float* b = nullptr; };
struct Layer {
  Norm ln1, ln2;
  Lin qkv, q, k, v, o, fc, proj;  // qkv: GPT-2's fused c_attn; q, k, v: BERT's and GPT-Neo's
};

// One tensor the architecture reads: where it lands in the parameter buffer and how it arrives.
struct Slot {
  std::string name;
  TensorEntry e;  // a copy: the index it came from is the caller's (the bindings' is gone after open)
  uint64_t at = 0, count = 0;           // offset and length (elements) in floats
  int64_t rows = 0, cols = 0;   // Conv1D [in, out] to transpose at finish (rows = in), else 0
  int64_t pack_out = 0, pack_in = 0;  // a dense layer's [out, in], packed into panels at finish
  Q8* q8 = nullptr;                    // quantised instead: int8 tiles at q_at, scales at s_at
  uint64_t q_at = 0, s_at = 0;
  int64_t ldw = 0;
  kernels::Q8Layout layout;
  std::vector<uint8_t> stage;          // raw bytes not yet quantised (a row; Conv1D: the tensor)
  uint64_t alloc() const {
    return q8 ? 0 : pack_out ? static_cast<uint64_t>(kernels::panels_size(pack_out, pack_in)) : count;
  }
  const float** target = nullptr;
  uint64_t received = 0;
};

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 31, man = h & 1023, bits;
  if (exp == 0) {
    if (man == 0) bits = sign;
    else {  // subnormal: renormalise
      exp = 113;
      while (!(man & 1024)) { man <<= 1; --exp; }
      bits = sign | (exp << 23) | ((man & 1023) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7F800000u | (man << 13);
  } else {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bf16_to_float(uint16_t h) {
  const uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void layer_norm(const float* x, int64_t n, int64_t E, const Norm& nm, double eps, float* y) {
  for (int64_t r = 0; r < n; ++r) {
    const float* xr = x + r * E;
    double mean = 0, var = 0;
    for (int64_t c = 0; c < E; ++c) mean += xr[c];
    mean /= static_cast<double>(E);
    for (int64_t c = 0; c < E; ++c) var += (xr[c] - mean) * (xr[c] - mean);
    const double inv = 1.0 / std::sqrt(var / static_cast<double>(E) + eps);
    float* yr = y + r * E;
    for (int64_t c = 0; c < E; ++c) yr[c] = static_cast<float>((xr[c] - mean) * inv) * nm.w[c] + nm.b[c];
  }
}

// transformers' activations.py: GELUActivation (erf) and NewGELUActivation (tanh approximation).
void gelu(float* x, int64_t n, bool exact) {
  if (exact)
    kernels::gelu_erf_inplace(x, n);
  else
    kernels::gelu_tanh_inplace(x, n);
}

void dense(const float* x, int64_t n, const Lin& l, float* y, ThreadPool* pool) {
  if (!l.q8.q) return linear_panels(x, l.in, n, l.in, l.w, l.b, l.out, y, l.out, pool);
  nn::gemm_nt_q8(x, n, l.in, l.q8.L, l.q8.q, l.q8.scale, y, pool, nullptr, l.b);
}

float raw_value(const uint8_t* p, Dtype dt) {
  if (dt == Dtype::F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, p, 2);
  return dt == Dtype::F16 ? half_to_float(h) : bf16_to_float(h);
}

}  // namespace

struct Model::Impl {
  ModelConfig cfg;
  std::vector<Slot> slots;
  std::vector<float> params;
  bool quantize = false;
  std::vector<int8_t> q8;         // the quantised weights' tiles
  std::vector<float> q8_scales;   // and their rows' scales
  bool ready = false;
  // Parameters by role.
  const float *wte = nullptr, *wpe = nullptr, *wtt = nullptr, *head_w = nullptr, *head_b = nullptr;
  Q8 wte_q8, head_q8;
  Norm emb_ln, ln_f, mlm_ln;
  Lin mlm_dense;
  bool mlm = false;
  std::vector<Layer> layers;
  // The KV cache of the decoders: keys [L][H][panels of cap rows], values [L][cap][E].
  int64_t cap = 0, len = 0;
  std::vector<float> kc, vc;

  void need(const SafetensorsIndex& ix, const std::string& name, Shape shape, const float** target,
            bool conv1d = false, bool pack = false, Q8* q8 = nullptr) {
    const TensorEntry* e = ix.find(name);
    require(e != nullptr, [&] { return "checkpoint: missing tensor '" + name + "' " + to_string(shape) + " for " + cfg.architecture; });
    require(e->dt != Dtype::Other, [&] {
      return "checkpoint: tensor '" + name + "' has dtype " + e->dtype + " (supported: F32, F16, BF16)";
    });
    require(e->shape == shape, [&] {
      return "checkpoint: tensor '" + name + "' has shape " + to_string(e->shape) + ", the config implies " + to_string(shape);
    });
    Slot s;
    s.name = name;
    s.e = *e;
    s.count = static_cast<uint64_t>(numel(shape));
    s.target = target;
    if (conv1d) { s.rows = shape[0]; s.cols = shape[1]; }
    if (pack) {
      s.pack_out = conv1d ? shape[1] : shape[0];
      s.pack_in = conv1d ? shape[0] : shape[1];
      if (quantize) {
        s.q8 = q8;
        s.ldw = (s.pack_in + 15) / 16 * 16;
      }
    }
    slots.push_back(s);
  }
  // An alternative spelling (older BERT checkpoints: LayerNorm.gamma / .beta).
  std::string pick(const SafetensorsIndex& ix, const std::string& a, const std::string& b) {
    return ix.find(a) || !ix.find(b) ? a : b;
  }
  void need_lin(const SafetensorsIndex& ix, const std::string& p, int64_t in, int64_t out, Lin& l, bool bias, bool conv1d) {
    l.in = in;
    l.out = out;
    need(ix, p + ".weight", conv1d ? Shape{in, out} : Shape{out, in}, &l.w, conv1d, true, &l.q8);
    if (bias) need(ix, p + ".bias", {out}, &l.b);
  }
  void need_norm(const SafetensorsIndex& ix, const std::string& p, Norm& n) {
    const int64_t E = cfg.hidden;
    need(ix, pick(ix, p + ".weight", p + ".gamma"), {E}, &n.w);
    need(ix, pick(ix, p + ".bias", p + ".beta"), {E}, &n.b);
  }

  void plan(const SafetensorsIndex& ix) {
    const int64_t E = cfg.hidden, I = cfg.inner, V = cfg.vocab, P = cfg.positions;
    layers.resize(static_cast<size_t>(cfg.layers));
    if (cfg.family == Family::GPT2) {
      // Both layouts in the wild: GPT2LMHeadModel.save_pretrained writes transformer.h.0...,
      // openai-community/gpt2's own file has GPT2Model's names (h.0..., wte.weight).
      const std::string p = ix.find("transformer.wte.weight") ? "transformer." : "";
      need(ix, p + "wte.weight", {V, E}, &wte, false, cfg.tie_embeddings, &wte_q8);
      need(ix, p + "wpe.weight", {P, E}, &wpe);
      for (int64_t l = 0; l < cfg.layers; ++l) {
        const std::string h = p + "h." + std::to_string(l) + ".";
        Layer& y = layers[l];
        need_norm(ix, h + "ln_1", y.ln1);
        need_lin(ix, h + "attn.c_attn", E, 3 * E, y.qkv, true, true);
        need_lin(ix, h + "attn.c_proj", E, E, y.o, true, true);
        need_norm(ix, h + "ln_2", y.ln2);
        need_lin(ix, h + "mlp.c_fc", E, I, y.fc, true, true);
        need_lin(ix, h + "mlp.c_proj", I, E, y.proj, true, true);
      }
      need_norm(ix, p + "ln_f", ln_f);
      if (!cfg.tie_embeddings) need(ix, "lm_head.weight", {V, E}, &head_w, false, true, &head_q8);
    } else if (cfg.family == Family::GPTNeo) {
      need(ix, "transformer.wte.weight", {V, E}, &wte, false, cfg.tie_embeddings, &wte_q8);
      need(ix, "transformer.wpe.weight", {P, E}, &wpe);
      for (int64_t l = 0; l < cfg.layers; ++l) {
        const std::string h = "transformer.h." + std::to_string(l) + ".";
        Layer& y = layers[l];
        need_norm(ix, h + "ln_1", y.ln1);
        need_lin(ix, h + "attn.attention.q_proj", E, E, y.q, false, false);
        need_lin(ix, h + "attn.attention.k_proj", E, E, y.k, false, false);
        need_lin(ix, h + "attn.attention.v_proj", E, E, y.v, false, false);
        need_lin(ix, h + "attn.attention.out_proj", E, E, y.o, true, false);
        need_norm(ix, h + "ln_2", y.ln2);
        need_lin(ix, h + "mlp.c_fc", E, I, y.fc, true, false);
        need_lin(ix, h + "mlp.c_proj", I, E, y.proj, true, false);
      }
      need_norm(ix, "transformer.ln_f", ln_f);
      if (!cfg.tie_embeddings) need(ix, "lm_head.weight", {V, E}, &head_w, false, true, &head_q8);
    } else {
      // BertForMaskedLM / BertForPreTraining prefix the encoder with "bert."; BertModel does not.
      const std::string p = ix.find("bert.embeddings.word_embeddings.weight") ? "bert." : "";
      mlm = cfg.architecture != "BertModel";
      need(ix, p + "embeddings.word_embeddings.weight", {V, E}, &wte, false, mlm && cfg.tie_embeddings, &wte_q8);
      need(ix, p + "embeddings.position_embeddings.weight", {P, E}, &wpe);
      need(ix, p + "embeddings.token_type_embeddings.weight", {cfg.type_vocab, E}, &wtt);
      need_norm(ix, p + "embeddings.LayerNorm", emb_ln);
      for (int64_t l = 0; l < cfg.layers; ++l) {
        const std::string h = p + "encoder.layer." + std::to_string(l) + ".";
        Layer& y = layers[l];
        need_lin(ix, h + "attention.self.query", E, E, y.q, true, false);
        need_lin(ix, h + "attention.self.key", E, E, y.k, true, false);
        need_lin(ix, h + "attention.self.value", E, E, y.v, true, false);
        need_lin(ix, h + "attention.output.dense", E, E, y.o, true, false);
        need_norm(ix, h + "attention.output.LayerNorm", y.ln1);
        need_lin(ix, h + "intermediate.dense", E, I, y.fc, true, false);
        need_lin(ix, h + "output.dense", I, E, y.proj, true, false);
        need_norm(ix, h + "output.LayerNorm", y.ln2);
      }
      if (mlm) {
        need_lin(ix, "cls.predictions.transform.dense", E, E, mlm_dense, true, false);
        need_norm(ix, "cls.predictions.transform.LayerNorm", mlm_ln);
        need(ix, ix.find("cls.predictions.bias") ? "cls.predictions.bias" : "cls.predictions.decoder.bias", {V}, &head_b);
        if (!cfg.tie_embeddings) need(ix, "cls.predictions.decoder.weight", {V, E}, &head_w, false, true, &head_q8);
      }
    }
  }

  bool decoder() const { return cfg.family != Family::BERT; }
  bool wte_packed = false;  // the token embedding doubles as the (packed) output projection
  // Row r of the token embedding into `row`.
  void embedding(int64_t r, float* row) const {
    if (wte_q8.q) {
      for (int64_t c = 0; c < cfg.hidden; ++c) row[c] = wte_q8.scale[r] * wte_q8.L.at(wte_q8.q, r, c);
      return;
    }
    if (wte_packed) {  // a row of the packed (tied) output matrix: column r % 8 of its panel
      const float* p = wte + (r / 8) * 8 * cfg.hidden + r % 8;
      for (int64_t c = 0; c < cfg.hidden; ++c) row[c] = p[c * 8];
      return;
    }
    std::copy_n(wte + r * cfg.hidden, cfg.hidden, row);
  }

  void check_ids(const std::vector<int32_t>& ids, int64_t start, const char* call) const {
    require(!ids.empty(), [&] { return std::string(call) + ": ids must not be empty"; });
    require(start + static_cast<int64_t>(ids.size()) <= cfg.positions, [&] {
      return std::string(call) + ": " + std::to_string(start + static_cast<int64_t>(ids.size())) +
             " tokens exceed the model's " + std::to_string(cfg.positions) + " positions";
    });
    for (size_t i = 0; i < ids.size(); ++i)
      require(ids[i] >= 0 && ids[i] < cfg.vocab, [&] {
        return std::string(call) + ": token id " + std::to_string(ids[i]) + " at index " + std::to_string(i) +
               " is outside the vocabulary [0, " + std::to_string(cfg.vocab) + ")";
      });
  }

  // Bytes [b, b + n) of a quantised tensor. [out, in] rows are quantised as each completes (in
  // order: the loader streams the file front to back), so only a row is staged; a Conv1D's rows
  // are columns of the file's [in, out], so its whole tensor is staged, then quantised.
  void feed_quantised(Slot& s, uint64_t b, const uint8_t* src, uint64_t n) {
    const uint64_t size = s.e.end - s.e.begin, es = s.e.dt == Dtype::F32 ? 4 : 2;
    std::vector<float> tmp;
    std::vector<int8_t> q;
    if (s.rows) {
      if (s.stage.empty()) s.stage.resize(static_cast<size_t>(size));
      std::memcpy(s.stage.data() + (b - s.e.begin), src, static_cast<size_t>(n));
      s.received += n;
      if (s.received == size) {
        for (int64_t r = 0; r < s.pack_out; ++r)
          quantize_row(s, r, s.stage.data() + r * es, static_cast<int64_t>(es) * s.pack_out, tmp, q);
        std::vector<uint8_t>().swap(s.stage);
      }
      return;
    }
    require(b == s.e.begin + s.received, [&] {
      return "checkpoint: tensor '" + s.name + "' must arrive in order to be quantised (byte " +
             std::to_string(b - s.e.begin) + " came after " + std::to_string(s.received) + ")";
    });
    const uint64_t row_bytes = es * static_cast<uint64_t>(s.pack_in);
    while (n > 0) {
      const uint64_t r = s.received / row_bytes, at = s.received % row_bytes, take = std::min(n, row_bytes - at);
      const uint8_t* row = src;
      if (at != 0 || take < row_bytes) {  // a row split across chunks: staged
        if (s.stage.empty()) s.stage.resize(static_cast<size_t>(row_bytes));
        std::memcpy(s.stage.data() + at, src, static_cast<size_t>(take));
        row = s.stage.data();
      }
      if (at + take == row_bytes) quantize_row(s, static_cast<int64_t>(r), row, static_cast<int64_t>(es), tmp, q);
      s.received += take;
      src += take;
      n -= take;
    }
    if (s.received == size) std::vector<uint8_t>().swap(s.stage);
  }

  // Logits: the output projection (its own weights, or the token embedding's when tied).
  void output_layer(const float* x, int64_t n, const float* bias, float* y, ThreadPool* pool) const {
    Lin l;
    l.in = cfg.hidden;
    l.out = cfg.vocab;
    l.w = head_w ? head_w : wte;
    l.b = bias;
    l.q8 = head_w || head_q8.q ? head_q8 : wte_q8;
    dense(x, n, l, y, pool);
  }

  // One row of a quantised weight, `in` raw values of the tensor's dtype (stride `step` bytes
  // apart: a Conv1D's row is a column of what the file stores): scale max|w| / 127, int8 into the tiles.
  void quantize_row(Slot& s, int64_t r, const uint8_t* raw, int64_t step, std::vector<float>& tmp, std::vector<int8_t>& q) {
    tmp.resize(static_cast<size_t>(s.pack_in));
    q.assign(static_cast<size_t>(s.ldw), 0);
    float amax = 0.f;
    for (int64_t c = 0; c < s.pack_in; ++c) {
      tmp[c] = raw_value(raw + c * step, s.e.dt);
      require(std::isfinite(tmp[c]), [&] {
        return "checkpoint: tensor '" + s.name + "' has a NaN or infinity at index " +
               std::to_string(s.rows ? c * s.pack_out + r : r * s.pack_in + c);
      });
      amax = std::max(amax, std::fabs(tmp[c]));
    }
    const float scale = amax > 0.f ? amax / 127.f : 1.f;
    for (int64_t c = 0; c < s.pack_in; ++c)
      q[c] = static_cast<int8_t>(std::lround(std::clamp(tmp[c] / scale, -127.f, 127.f)));
    q8_scales[s.s_at + r] = scale;
    s.layout.pack_row(q.data(), r, q8.data() + s.q_at);
  }

  float* keys(int64_t l, int64_t h) { return kc.data() + (l * cfg.heads + h) * kernels::panels_size(cap, cfg.hidden / cfg.heads); }
  float* values(int64_t l) { return vc.data() + l * cap * cfg.hidden; }

  // Decoder tokens ids at positions start.. (start == 0 restarts the cache).
  Output decode(const std::vector<int32_t>& ids, int64_t start, bool want_attn, ThreadPool* pool) {
    const int64_t n = static_cast<int64_t>(ids.size()), E = cfg.hidden, H = cfg.heads, dh = E / H, L = cfg.layers;
    const int64_t I = cfg.inner, V = cfg.vocab, ctx = start + n;
    if (cap == 0) {
      cap = cfg.positions;
      try {
        kc.assign(static_cast<size_t>(L * H * kernels::panels_size(cap, dh)), 0.f);
        vc.assign(static_cast<size_t>(L * cap * E), 0.f);
      } catch (const std::bad_alloc&) {
        cap = 0;
        throw Error("forward: no memory for the KV cache of " + std::to_string(cfg.positions) + " positions");
      }
    }
    Output out;
    out.rows = n;
    out.cols = V;
    out.ctx = ctx;
    if (want_attn) out.attention.assign(static_cast<size_t>(L * H * n * ctx), 0.f);
    std::vector<float> x(n * E), h(n * E), a(n * E), t(n * E), f(n * I);
    std::vector<float> qkv(n * 3 * E);
    for (int64_t i = 0; i < n; ++i) {
      embedding(ids[i], x.data() + i * E);
      for (int64_t c = 0; c < E; ++c) x[i * E + c] += wpe[(start + i) * E + c];
    }
    std::vector<uint8_t> band;  // GPT-Neo's local layers: 1 = key outside the window
    for (int64_t l = 0; l < L; ++l) {
      const Layer& y = layers[l];
      layer_norm(x.data(), n, E, y.ln1, cfg.eps, h.data());
      const float *q, *k, *v;
      int64_t ld;
      if (y.qkv.out) {  // GPT-2's fused c_attn
        dense(h.data(), n, y.qkv, qkv.data(), pool);
        q = qkv.data(), k = q + E, v = q + 2 * E, ld = 3 * E;
      } else {
        dense(h.data(), n, y.q, qkv.data(), pool);
        dense(h.data(), n, y.k, qkv.data() + n * E, pool);
        dense(h.data(), n, y.v, qkv.data() + 2 * n * E, pool);
        q = qkv.data(), k = q + n * E, v = q + 2 * n * E, ld = E;
      }
      float scale = cfg.scaled ? 1.0f / std::sqrt(static_cast<float>(dh)) : 1.0f;
      if (cfg.scale_by_layer) scale /= static_cast<float>(l + 1);
      const bool local = cfg.local[l] && cfg.window < ctx;
      for (int64_t i = 0; i < n; ++i) std::copy_n(v + i * ld, E, values(l) + (start + i) * E);
      if (start == 0) {
        for (int64_t hd = 0; hd < H; ++hd) kernels::pack_panels(k + hd * dh, ld, n, dh, keys(l, hd));
        MaskSet m;
        m.causal = true;
        if (local) {
          band.assign(n * n, 0);
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j + cfg.window <= i; ++j) band[i * n + j] = 1;
          m.bools.push_back({band.data(), Broadcast{{0}, n, 1}, true});
        }
        float* w = want_attn ? out.attention.data() + l * H * n * n : nullptr;
        attend_slices(H, [&](int64_t hd) {
          return AttentionSlice{q + hd * dh, ld, k + hd * dh, ld, values(l) + hd * dh, E, a.data() + hd * dh, E,
                                w ? w + hd * n * n : nullptr, 0};
        }, n, n, dh, dh, scale, m, pool);
      } else {
        for (int64_t i = 0; i < n; ++i) {
          const int64_t p = start + i;
          MaskSet m;
          if (local && p >= cfg.window) {
            band.assign(p + 1, 0);
            std::fill_n(band.begin(), p - cfg.window + 1, uint8_t(1));
            m.bools.push_back({band.data(), Broadcast{{0}, 0, 1}, true});
          }
          for (int64_t hd = 0; hd < H; ++hd) {
            float* panel = keys(l, hd) + (p / 8) * 8 * dh + p % 8;
            const float* kr = k + i * ld + hd * dh;
            for (int64_t c = 0; c < dh; ++c) panel[c * 8] = kr[c];
            const AttentionSlice s{q + i * ld + hd * dh, ld, nullptr, 0, values(l) + hd * dh, E,
                                   a.data() + i * E + hd * dh, E,
                                   want_attn ? out.attention.data() + ((l * H + hd) * n + i) * ctx : nullptr, 0};
            attend_slice(s, 0, 1, p + 1, dh, dh, scale, m, keys(l, hd));
          }
        }
      }
      dense(a.data(), n, y.o, t.data(), pool);
      for (int64_t i = 0; i < n * E; ++i) x[i] += t[i];
      layer_norm(x.data(), n, E, y.ln2, cfg.eps, h.data());
      dense(h.data(), n, y.fc, f.data(), pool);
      gelu(f.data(), n * I, cfg.gelu_exact);
      dense(f.data(), n, y.proj, t.data(), pool);
      for (int64_t i = 0; i < n * E; ++i) x[i] += t[i];
    }
    layer_norm(x.data(), n, E, ln_f, cfg.eps, h.data());
    out.logits.resize(static_cast<size_t>(n * V));
    output_layer(h.data(), n, nullptr, out.logits.data(), pool);
    len = ctx;
    return out;
  }

  Output encode(const std::vector<int32_t>& ids, const std::vector<int32_t>* types, bool want_attn, ThreadPool* pool) {
    const int64_t n = static_cast<int64_t>(ids.size()), E = cfg.hidden, H = cfg.heads, dh = E / H, L = cfg.layers;
    const int64_t I = cfg.inner, V = cfg.vocab;
    if (types) {
      require(types->size() == ids.size(), [&] {
        return "forward: tokenTypes has " + std::to_string(types->size()) + " entries for " + std::to_string(n) + " ids";
      });
      for (size_t i = 0; i < types->size(); ++i)
        require((*types)[i] >= 0 && (*types)[i] < cfg.type_vocab, [&] {
          return "forward: token type " + std::to_string((*types)[i]) + " at index " + std::to_string(i) +
                 " is outside [0, " + std::to_string(cfg.type_vocab) + ")";
        });
    }
    Output out;
    out.rows = n;
    out.ctx = n;
    if (want_attn) out.attention.assign(static_cast<size_t>(L * H * n * n), 0.f);
    std::vector<float> x(n * E), q(n * E), k(n * E), v(n * E), a(n * E), t(n * E), f(n * I);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t ty = types ? (*types)[i] : 0;
      embedding(ids[i], t.data() + i * E);
      for (int64_t c = 0; c < E; ++c) t[i * E + c] += wpe[i * E + c] + wtt[ty * E + c];
    }
    layer_norm(t.data(), n, E, emb_ln, cfg.eps, x.data());
    const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
    const MaskSet none;
    for (int64_t l = 0; l < L; ++l) {
      const Layer& y = layers[l];
      dense(x.data(), n, y.q, q.data(), pool);
      dense(x.data(), n, y.k, k.data(), pool);
      dense(x.data(), n, y.v, v.data(), pool);
      float* w = want_attn ? out.attention.data() + l * H * n * n : nullptr;
      attend_slices(H, [&](int64_t hd) {
        return AttentionSlice{q.data() + hd * dh, E, k.data() + hd * dh, E, v.data() + hd * dh, E, a.data() + hd * dh, E,
                              w ? w + hd * n * n : nullptr, 0};
      }, n, n, dh, dh, scale, none, pool);
      dense(a.data(), n, y.o, t.data(), pool);
      for (int64_t i = 0; i < n * E; ++i) t[i] += x[i];
      layer_norm(t.data(), n, E, y.ln1, cfg.eps, x.data());
      dense(x.data(), n, y.fc, f.data(), pool);
      gelu(f.data(), n * I, cfg.gelu_exact);
      dense(f.data(), n, y.proj, t.data(), pool);
      for (int64_t i = 0; i < n * E; ++i) t[i] += x[i];
      layer_norm(t.data(), n, E, y.ln2, cfg.eps, x.data());
    }
    if (!mlm) {
      out.cols = E;
      out.logits = std::move(x);
      return out;
    }
    dense(x.data(), n, mlm_dense, t.data(), pool);
    gelu(t.data(), n * E, cfg.gelu_exact);
    layer_norm(t.data(), n, E, mlm_ln, cfg.eps, x.data());
    out.cols = V;
    out.logits.resize(static_cast<size_t>(n * V));
    output_layer(x.data(), n, head_b, out.logits.data(), pool);
    return out;
  }
};

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

std::unique_ptr<Model> Model::create(const ModelConfig& cfg, const SafetensorsIndex& index, uint64_t max_bytes,
                                     bool quantize) {
  auto impl = std::make_unique<Impl>();
  impl->cfg = cfg;
  impl->quantize = quantize;
  impl->plan(index);
  uint64_t total = 0, q_total = 0, s_total = 0;
  for (Slot& s : impl->slots) {
    s.at = total;
    total += s.alloc();
    if (s.q8) {
      s.q_at = q_total;
      s.s_at = s_total;
      s.layout = {s.pack_out, s.ldw, nn::q8_quads()};
      q_total += static_cast<uint64_t>(s.layout.size());
      s_total += static_cast<uint64_t>(s.pack_out);
    }
    if (s.target == &impl->wte && s.pack_out) impl->wte_packed = true;
  }
  // The parameters plus the decoders' KV cache at full context, against what the heap can reach.
  const uint64_t dh = static_cast<uint64_t>(cfg.hidden / cfg.heads);
  const uint64_t cache = cfg.family == Family::BERT ? 0
      : 2 * static_cast<uint64_t>(cfg.layers * cfg.heads) * ((static_cast<uint64_t>(cfg.positions) + 7) / 8 * 8) * dh;
  // Quantising stages one Conv1D tensor at a time (the largest, raw).
  uint64_t stage = 0;
  for (const Slot& s : impl->slots)
    if (s.q8 && s.rows) stage = std::max(stage, s.e.end - s.e.begin);
  const uint64_t bytes = 4 * (total + cache + s_total) + q_total + stage;
  require(bytes <= max_bytes, [&] {
    return "checkpoint: " + cfg.architecture + " needs " + std::to_string(bytes >> 20) + " MB (parameters and KV cache), above the " +
           std::to_string(max_bytes >> 20) + " MB available";
  });
  try {
    impl->params.assign(static_cast<size_t>(total), 0.f);
    impl->q8.assign(static_cast<size_t>(q_total), 0);
    impl->q8_scales.assign(static_cast<size_t>(s_total), 0.f);
  } catch (const std::bad_alloc&) {
    throw Error("checkpoint: no memory for " + std::to_string((total * 4 + q_total) >> 20) + " MB of parameters");
  }
  for (Slot& s : impl->slots) {
    if (!s.q8) {
      *s.target = impl->params.data() + s.at;
      continue;
    }
    s.q8->q = impl->q8.data() + s.q_at;
    s.q8->scale = impl->q8_scales.data() + s.s_at;
    s.q8->L = s.layout;
  }
  return std::unique_ptr<Model>(new Model(std::move(impl)));
}

void Model::feed(uint64_t offset, const uint8_t* bytes, uint64_t n) {
  require(!impl_->ready, [] { return std::string("checkpoint: data fed after finish()"); });
  for (Slot& s : impl_->slots) {
    const uint64_t b = std::max(offset, s.e.begin), e = std::min(offset + n, s.e.end);
    if (b >= e) continue;
    if (s.q8) {
      impl_->feed_quantised(s, b, bytes + (b - offset), e - b);
      continue;
    }
    // F32 lands in place; 16-bit values land in the upper half of the tensor's floats, widened
    // front to back by finish() (element i's float never overwrites a half not yet read).
    uint8_t* dst = reinterpret_cast<uint8_t*>(impl_->params.data() + s.at) + (s.e.dt == Dtype::F32 ? 0 : 2 * s.count);
    std::memcpy(dst + (b - s.e.begin), bytes + (b - offset), static_cast<size_t>(e - b));
    s.received += e - b;
  }
}

void Model::finish() {
  Impl& m = *impl_;
  if (m.ready) return;
  std::vector<float> tmp;
  for (Slot& s : m.slots) {
    require(s.received == s.e.end - s.e.begin, [&] {
      return "checkpoint: tensor '" + s.name + "' received " + std::to_string(s.received) + " of " +
             std::to_string(s.e.end - s.e.begin) + " bytes (truncated download?)";
    });
    if (s.q8) continue;  // quantised as it arrived
    float* f = m.params.data() + s.at;
    if (s.e.dt != Dtype::F32) {
      const uint16_t* h = reinterpret_cast<const uint16_t*>(f) + s.count;
      for (uint64_t i = 0; i < s.count; ++i) {
        uint16_t v;
        std::memcpy(&v, h + i, 2);
        f[i] = s.e.dt == Dtype::F16 ? half_to_float(v) : bf16_to_float(v);
      }
    }
    const int64_t bad = kernels::find_nonfinite(f, static_cast<int64_t>(s.count), false);
    require(bad < 0, [&] { return "checkpoint: tensor '" + s.name + "' has a NaN or infinity at index " + std::to_string(bad); });
    if (s.rows) {  // Conv1D [in, out] -> [out, in]
      tmp.assign(f, f + s.count);
      for (int64_t r = 0; r < s.rows; ++r)
        for (int64_t c = 0; c < s.cols; ++c) f[c * s.rows + r] = tmp[r * s.cols + c];
    }
    if (s.pack_out) {
      tmp.assign(f, f + s.count);
      kernels::pack_panels(tmp.data(), s.pack_in, s.pack_out, s.pack_in, f);
    }
  }
  m.ready = true;
}

const ModelConfig& Model::config() const { return impl_->cfg; }
uint64_t Model::parameter_bytes() const {
  return 4 * (impl_->params.size() + impl_->q8_scales.size()) + impl_->q8.size();
}
bool Model::outputs_logits() const { return impl_->decoder() || impl_->mlm; }
int64_t Model::cached() const { return impl_->len; }

Output Model::forward(const std::vector<int32_t>& ids, const std::vector<int32_t>* types, bool attentions, ThreadPool* pool) {
  require(impl_->ready, [] { return std::string("forward: the checkpoint has not finished loading"); });
  impl_->check_ids(ids, 0, "forward");
  if (!impl_->decoder()) return impl_->encode(ids, types, attentions, pool);
  require(!types, [] { return std::string("forward: tokenTypes are for BERT models only"); });
  impl_->len = 0;
  return impl_->decode(ids, 0, attentions, pool);
}

Output Model::extend(const std::vector<int32_t>& ids, bool attentions, ThreadPool* pool) {
  require(impl_->ready, [] { return std::string("extend: the checkpoint has not finished loading"); });
  require(impl_->decoder(), [] { return std::string("extend: BERT is not a decoder (use forward)"); });
  impl_->check_ids(ids, impl_->len, "extend");
  return impl_->decode(ids, impl_->len, attentions, pool);
}

std::unique_ptr<Model> load(const std::string& config_json, const uint8_t* file, uint64_t size, uint64_t max_bytes,
                            bool quantize) {
  const ModelConfig cfg = read_config(config_json);
  const uint64_t n = safetensors_header_length(file, size);
  const SafetensorsIndex ix = parse_safetensors_header(reinterpret_cast<const char*>(file) + 8, n, size);
  auto m = Model::create(cfg, ix, max_bytes, quantize);
  m->feed(0, file + ix.data_start, ix.data_size);
  m->finish();
  return m;
}

}  // namespace attnlab::pretrained
