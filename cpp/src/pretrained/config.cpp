// config.json of the three families, read with the defaults of Hugging Face transformers'
// configuration classes (models/gpt2/configuration_gpt2.py, models/bert/configuration_bert.py,
// models/gpt_neo/configuration_gpt_neo.py), and bounds that refuse absurd sizes before anything
// is allocated.
#include <cmath>

#include "attnlab/error.hpp"
#include "attnlab/pretrained.hpp"
#include "json.hpp"

namespace attnlab::pretrained {
namespace {

int64_t int_field(const Json& c, const char* key, int64_t def, int64_t lo, int64_t hi) {
  const Json* v = c.get(key);
  if (!v || v->kind == Json::Null) {
    require(def >= 0, [&] { return std::string("config.json: missing ") + key; });
    return def;
  }
  require(v->is_uint() && v->as_uint() >= static_cast<uint64_t>(lo) && v->as_uint() <= static_cast<uint64_t>(hi), [&] {
    return std::string("config.json: ") + key + " must be an integer in [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "], got " + (v->kind == Json::Number ? v->str : std::string("a non-number"));
  });
  return static_cast<int64_t>(v->as_uint());
}

double num_field(const Json& c, const char* key, double def) {
  const Json* v = c.get(key);
  if (!v || v->kind == Json::Null) return def;
  require(v->kind == Json::Number && v->num > 0 && v->num < 1, [&] {
    return std::string("config.json: ") + key + " must be a number in (0, 1)";
  });
  return v->num;
}

bool bool_field(const Json& c, const char* key, bool def) {
  const Json* v = c.get(key);
  if (!v || v->kind == Json::Null) return def;
  require(v->kind == Json::Bool, [&] { return std::string("config.json: ") + key + " must be true or false"; });
  return v->b;
}

// transformers' ACT2FN names we implement: "gelu" is erf's, the others tanh's approximation.
bool gelu_exact(const Json& c, const char* key, const char* def) {
  const Json* v = c.get(key);
  const std::string a = v && v->kind == Json::String ? v->str : def;
  if (a == "gelu") return true;
  require(a == "gelu_new" || a == "gelu_pytorch_tanh" || a == "gelu_fast", [&] {
    return std::string("config.json: ") + key + " '" + a + "' is not supported (gelu, gelu_new, gelu_pytorch_tanh, gelu_fast)";
  });
  return false;
}

// Hard bounds: far above gpt2-xl / bert-large / gpt-neo-2.7B, far below what overflows.
constexpr int64_t kMaxHidden = 8192, kMaxLayers = 128, kMaxHeads = 256, kMaxVocab = 1 << 20, kMaxPositions = 1 << 16;

}  // namespace

const char* family_name(Family f) { return f == Family::GPT2 ? "gpt2" : f == Family::BERT ? "bert" : "gpt-neo"; }

const char* supported_architectures() {
  return "GPT2LMHeadModel, BertModel, BertForMaskedLM, BertForPreTraining, GPTNeoForCausalLM";
}

ModelConfig read_config(const std::string& text) {
  const Json c = parse_json(text.data(), text.size(), "config.json");
  require(c.kind == Json::Object, [] { return std::string("config.json: expected a JSON object"); });
  ModelConfig m;
  const Json* archs = c.get("architectures");
  if (archs && archs->kind == Json::Array && !archs->items.empty() && archs->items[0].kind == Json::String) {
    m.architecture = archs->items[0].str;
  } else {
    const Json* mt = c.get("model_type");
    const std::string t = mt && mt->kind == Json::String ? mt->str : "";
    m.architecture = t == "gpt2" ? "GPT2LMHeadModel" : t == "bert" ? "BertModel" : t == "gpt_neo" ? "GPTNeoForCausalLM" : "";
    require(!m.architecture.empty(), [&] {
      return "config.json: no architectures and model_type '" + t + "' is not one of gpt2, bert, gpt_neo";
    });
  }
  const std::string& a = m.architecture;
  if (a == "GPT2LMHeadModel") {
    // configuration_gpt2.py: n_embd 768, n_layer 12, n_head 12, n_positions 1024, n_inner None (4 n_embd).
    m.family = Family::GPT2;
    m.vocab = int_field(c, "vocab_size", 50257, 1, kMaxVocab);
    m.positions = int_field(c, "n_positions", 1024, 1, kMaxPositions);
    m.hidden = int_field(c, "n_embd", 768, 1, kMaxHidden);
    m.layers = int_field(c, "n_layer", 12, 1, kMaxLayers);
    m.heads = int_field(c, "n_head", 12, 1, kMaxHeads);
    m.inner = int_field(c, "n_inner", 4 * m.hidden, 1, 4 * kMaxHidden);
    m.eps = num_field(c, "layer_norm_epsilon", 1e-5);
    m.gelu_exact = gelu_exact(c, "activation_function", "gelu_new");
    m.tie_embeddings = bool_field(c, "tie_word_embeddings", true);
    m.scaled = bool_field(c, "scale_attn_weights", true);
    m.scale_by_layer = bool_field(c, "scale_attn_by_inverse_layer_idx", false);
  } else if (a == "BertModel" || a == "BertForMaskedLM" || a == "BertForPreTraining") {
    // configuration_bert.py: hidden 768, 12 layers, 12 heads, intermediate 3072, 512 positions, 2 types, eps 1e-12.
    m.family = Family::BERT;
    m.vocab = int_field(c, "vocab_size", 30522, 1, kMaxVocab);
    m.positions = int_field(c, "max_position_embeddings", 512, 1, kMaxPositions);
    m.hidden = int_field(c, "hidden_size", 768, 1, kMaxHidden);
    m.layers = int_field(c, "num_hidden_layers", 12, 1, kMaxLayers);
    m.heads = int_field(c, "num_attention_heads", 12, 1, kMaxHeads);
    m.inner = int_field(c, "intermediate_size", 3072, 1, 4 * kMaxHidden);
    m.type_vocab = int_field(c, "type_vocab_size", 2, 1, 1024);
    m.eps = num_field(c, "layer_norm_eps", 1e-12);
    m.gelu_exact = gelu_exact(c, "hidden_act", "gelu");
    m.tie_embeddings = bool_field(c, "tie_word_embeddings", true);
    const Json* pe = c.get("position_embedding_type");
    require(!pe || pe->kind != Json::String || pe->str == "absolute", [&] {
      return "config.json: position_embedding_type '" + pe->str + "' is not supported (absolute)";
    });
    m.pad_token = int_field(c, "pad_token_id", 0, 0, kMaxVocab);
  } else if (a == "GPTNeoForCausalLM") {
    // configuration_gpt_neo.py: attention_types [[["global", "local"], 12]] expands to one type per
    // layer; window_size 256; intermediate_size None (4 hidden).
    m.family = Family::GPTNeo;
    m.scaled = false;  // modeling_gpt_neo.py: GPTNeoSelfAttention._attn does not divide by sqrt(head_dim)
    m.vocab = int_field(c, "vocab_size", 50257, 1, kMaxVocab);
    m.positions = int_field(c, "max_position_embeddings", 2048, 1, kMaxPositions);
    m.hidden = int_field(c, "hidden_size", 2048, 1, kMaxHidden);
    m.layers = int_field(c, "num_layers", 24, 1, kMaxLayers);
    m.heads = int_field(c, "num_heads", 16, 1, kMaxHeads);
    m.inner = int_field(c, "intermediate_size", 4 * m.hidden, 1, 4 * kMaxHidden);
    m.eps = num_field(c, "layer_norm_epsilon", 1e-5);
    m.gelu_exact = gelu_exact(c, "activation_function", "gelu_new");
    m.tie_embeddings = bool_field(c, "tie_word_embeddings", true);
    m.window = int_field(c, "window_size", 256, 1, kMaxPositions);
    const Json* types = c.get("attention_types");
    const Json* layers = c.get("attention_layers");
    std::vector<std::string> kinds;
    if (types && types->kind == Json::Array) {
      for (const Json& g : types->items) {
        require(g.kind == Json::Array && g.items.size() == 2 && g.items[0].kind == Json::Array && g.items[1].is_uint() &&
                    g.items[1].as_uint() <= kMaxLayers,
                [] { return std::string("config.json: attention_types must be [[[\"global\", \"local\"], n], ...]"); });
        for (uint64_t r = 0; r < g.items[1].as_uint(); ++r)
          for (const Json& k : g.items[0].items) kinds.push_back(k.kind == Json::String ? k.str : "?");
      }
    } else if (layers && layers->kind == Json::Array) {
      for (const Json& k : layers->items) kinds.push_back(k.kind == Json::String ? k.str : "?");
    } else {
      for (int64_t l = 0; l < m.layers; ++l) kinds.push_back(l % 2 ? "local" : "global");
    }
    require(static_cast<int64_t>(kinds.size()) == m.layers, [&] {
      return "config.json: attention_types give " + std::to_string(kinds.size()) + " layers, num_layers is " +
             std::to_string(m.layers);
    });
    for (const auto& k : kinds) {
      require(k == "global" || k == "local",
              [&] { return "config.json: attention type '" + k + "' is not supported (global, local)"; });
      m.local.push_back(k == "local");
    }
  } else {
    throw Error("config.json: architecture '" + a + "' is not supported; supported: " + supported_architectures());
  }
  require(m.hidden % m.heads == 0, [&] {
    return "config.json: hidden size " + std::to_string(m.hidden) + " is not a multiple of the " +
           std::to_string(m.heads) + " heads";
  });
  if (m.local.empty()) m.local.assign(static_cast<size_t>(m.layers), 0);
  return m;
}

}  // namespace attnlab::pretrained
