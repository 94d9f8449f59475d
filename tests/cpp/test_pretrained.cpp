// Pretrained checkpoints (cpp/src/pretrained): the tiny GPT-2 / GPT-Neo / BERT fixtures of
// tests/pretrained/make_fixtures.py against their PyTorch reference outputs, the KV cache against
// the full forward, and the loader's refusals of bad files and configs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "attnlab/error.hpp"
#include "attnlab/pretrained.hpp"
#include "attnlab/thread_pool.hpp"

using namespace attnlab;
using namespace attnlab::pretrained;

namespace {

std::string fixture_dir(const std::string& name) {
  return std::string(ATTNLAB_SOURCE_DIR) + "/tests/pretrained/fixtures/" + name + "/";
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << path;
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

std::string read_text(const std::string& path) {
  const auto b = read_bytes(path);
  return std::string(b.begin(), b.end());
}

struct Reference {
  std::vector<int32_t> ids, types;
  std::vector<float> logits, attentions;
  Shape logits_shape, att_shape;
};

// The reference outputs are a safetensors file too (I32 ids and types, F32 logits and attentions).
Reference read_reference(const std::string& name) {
  const auto b = read_bytes(fixture_dir(name) + "reference.safetensors");
  const uint64_t n = safetensors_header_length(b.data(), b.size());
  const SafetensorsIndex ix = parse_safetensors_header(reinterpret_cast<const char*>(b.data()) + 8, n, b.size());
  Reference r;
  auto copy = [&](const char* key, auto& out, Shape* shape) {
    const TensorEntry* e = ix.find(key);
    EXPECT_NE(e, nullptr) << key;
    out.resize((e->end - e->begin) / 4);
    std::memcpy(out.data(), b.data() + ix.data_start + e->begin, e->end - e->begin);
    if (shape) *shape = e->shape;
  };
  copy("ids", r.ids, nullptr);
  copy("types", r.types, nullptr);
  copy("logits", r.logits, &r.logits_shape);
  copy("attentions", r.attentions, &r.att_shape);
  return r;
}

std::unique_ptr<Model> load_fixture(const std::string& name) {
  const auto file = read_bytes(fixture_dir(name) + "model.safetensors");
  return load(read_text(fixture_dir(name) + "config.json"), file.data(), file.size());
}

int64_t argmax(const float* x, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}

constexpr double kTol = 1e-4;

void expect_matches(const std::string& name) {
  SCOPED_TRACE(name);
  const Reference r = read_reference(name);
  auto m = load_fixture(name);
  const bool bert = m->config().family == Family::BERT;
  const Output o = m->forward(r.ids, bert ? &r.types : nullptr, true);
  ASSERT_EQ(o.rows, r.logits_shape[0]);
  ASSERT_EQ(o.cols, r.logits_shape[1]);
  ASSERT_EQ(o.logits.size(), r.logits.size());
  ASSERT_EQ(o.attention.size(), r.attentions.size());
  double worst = 0, worst_att = 0;
  for (size_t i = 0; i < r.logits.size(); ++i) worst = std::max(worst, std::fabs(double(o.logits[i]) - r.logits[i]));
  for (size_t i = 0; i < r.attentions.size(); ++i)
    worst_att = std::max(worst_att, std::fabs(double(o.attention[i]) - r.attentions[i]));
  EXPECT_LT(worst, kTol) << "largest logit error";
  EXPECT_LT(worst_att, kTol) << "largest attention error";
  if (m->outputs_logits())
    for (int64_t i = 0; i < o.rows; ++i)
      EXPECT_EQ(argmax(o.logits.data() + i * o.cols, o.cols), argmax(r.logits.data() + i * o.cols, o.cols)) << "row " << i;
}

}  // namespace

TEST(Pretrained, Gpt2MatchesReference) { expect_matches("gpt2-f32"); }
TEST(Pretrained, Gpt2PrefixedF16MatchesReference) { expect_matches("gpt2-prefixed-f16"); }
TEST(Pretrained, GptNeoLocalAttentionMatchesReference) { expect_matches("gpt-neo-f32"); }
TEST(Pretrained, BertMlmBf16MatchesReference) { expect_matches("bert-mlm-bf16"); }
TEST(Pretrained, BertModelHiddenStatesMatchReference) { expect_matches("bert-model-f32"); }

// Generation's path: a prompt, then one token at a time through the KV cache, gives the full
// forward's logits and attention rows (GPT-Neo's window of 4 is crossed at position 4).
TEST(Pretrained, KvCacheStepsMatchFullForward) {
  for (const char* name : {"gpt2-f32", "gpt-neo-f32"}) {
    SCOPED_TRACE(name);
    const Reference r = read_reference(name);
    auto m = load_fixture(name);
    const int64_t S = static_cast<int64_t>(r.ids.size()), V = r.logits_shape[1], L = r.att_shape[0], H = r.att_shape[1];
    const int64_t P = 5;
    Output o = m->forward(std::vector<int32_t>(r.ids.begin(), r.ids.begin() + P), nullptr, true);
    for (int64_t t = P; t <= S; ++t) {
      const int64_t rows = o.rows, first = t - rows;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t v = 0; v < V; ++v)
          ASSERT_NEAR(o.logits[i * V + v], r.logits[(first + i) * V + v], kTol) << "position " << first + i;
      for (int64_t lh = 0; lh < L * H; ++lh)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < t; ++j)
            ASSERT_NEAR(o.attention[(lh * rows + i) * t + j], r.attentions[(lh * S + first + i) * S + j], kTol)
                << "layer-head " << lh << " position " << first + i << " key " << j;
      EXPECT_EQ(m->cached(), t);
      if (t < S) o = m->extend({r.ids[t]}, true);
    }
  }
}

// ---- bad inputs: each an Error with a message naming the problem, before tensor allocation ----

namespace {

struct FakeTensor { std::string name, dtype; Shape shape; uint64_t begin, end; };

std::vector<uint8_t> make_file(const std::vector<FakeTensor>& ts, uint64_t data_bytes, const std::string& extra = "") {
  std::string h = "{";
  for (size_t i = 0; i < ts.size(); ++i) {
    const auto& t = ts[i];
    h += (i ? "," : "") + std::string("\"") + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[";
    for (size_t d = 0; d < t.shape.size(); ++d) h += (d ? "," : "") + std::to_string(t.shape[d]);
    h += "],\"data_offsets\":[" + std::to_string(t.begin) + "," + std::to_string(t.end) + "]}";
  }
  h += extra + "}";
  std::vector<uint8_t> f(8 + h.size() + data_bytes, 0);
  uint64_t n = h.size();
  for (int i = 0; i < 8; ++i) f[i] = static_cast<uint8_t>(n >> (8 * i));
  std::memcpy(f.data() + 8, h.data(), h.size());
  return f;
}

SafetensorsIndex parse(const std::vector<uint8_t>& f) {
  const uint64_t n = safetensors_header_length(f.data(), f.size());
  return parse_safetensors_header(reinterpret_cast<const char*>(f.data()) + 8, n, f.size());
}

void expect_error(const std::function<void()>& fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one mentioning '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(PretrainedSafetensors, ValidatesHeaderAndOffsets) {
  expect_error([] { parse(std::vector<uint8_t>(5, 0)); }, "fewer than the 8-byte");
  auto big = make_file({}, 0);
  big[6] = 1;  // header length ~ 2^48
  expect_error([&] { parse(big); }, "header length");
  auto bad_json = make_file({}, 0);
  bad_json[9] = '[';
  expect_error([&] { parse(bad_json); }, "invalid JSON");
  expect_error([] { parse(make_file({{"a", "F32", {2, 2}, 0, 16}}, 8)); }, "run past the data section");
  expect_error([] { parse(make_file({{"a", "F32", {2, 2}, 0, 12}}, 16)); }, "12 bytes for F32 [2, 2]");
  expect_error([] { parse(make_file({{"a", "F32", {2}, 0, 8}, {"b", "F32", {2}, 4, 12}}, 16)); }, "overlap");
  expect_error([] { parse(make_file({{"a", "Q4", {2}, 0, 8}}, 8)); }, "unknown dtype 'Q4'");
  expect_error([] { parse(make_file({{"a", "F32", {4294967296, 4294967296}, 0, 8}}, 8)); }, "shape larger than the file");
  expect_error([] { parse(make_file({{"a", "F32", {2}, 0, 8}, {"a", "F32", {2}, 8, 16}}, 16)); }, "named twice");
  const auto ok = parse(make_file({{"a", "F16", {2, 3}, 0, 12}, {"b", "BF16", {}, 12, 14}}, 14, ",\"__metadata__\":{\"format\":\"pt\"}"));
  ASSERT_EQ(ok.tensors.size(), 2u);
  EXPECT_EQ(ok.find("b")->dt, Dtype::BF16);
}

TEST(PretrainedConfig, RefusesUnknownArchitecturesAndAbsurdSizes) {
  expect_error([] { read_config("{\"architectures\": [\"LlamaForCausalLM\"]}"); },
               "'LlamaForCausalLM' is not supported; supported: GPT2LMHeadModel, BertModel");
  expect_error([] { read_config("{\"architectures\": [\"GPT2LMHeadModel\"], \"n_embd\": 1000000000}"); }, "n_embd must be an integer in [1, 8192]");
  expect_error([] { read_config("{\"architectures\": [\"GPT2LMHeadModel\"], \"n_embd\": 30, \"n_head\": 4}"); }, "not a multiple of the 4 heads");
  expect_error([] { read_config("{\"architectures\": [\"GPT2LMHeadModel\"], \"activation_function\": \"relu\"}"); },
               "activation_function 'relu' is not supported (gelu, gelu_new, gelu_pytorch_tanh, gelu_fast)");
  // Each name the message offers is taken: erf's GELU for "gelu", the tanh form for the others.
  for (const char* act : {"gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast"})
    EXPECT_EQ(read_config(std::string("{\"architectures\": [\"GPT2LMHeadModel\"], \"activation_function\": \"") + act + "\"}").gelu_exact,
              std::string(act) == "gelu") << act;
  expect_error([] { read_config("{\"architectures\": [\"GPTNeoForCausalLM\"], \"num_layers\": 3, \"attention_types\": [[[\"global\", \"local\"], 1]]}"); },
               "give 2 layers, num_layers is 3");
  expect_error([] { read_config("not json"); }, "config.json: invalid JSON");
  const ModelConfig g = read_config("{\"model_type\": \"gpt2\"}");
  EXPECT_EQ(g.hidden, 768);
  EXPECT_EQ(g.inner, 3072);
}

TEST(PretrainedLoad, RefusesMismatchesAndKeepsWorking) {
  const std::string dir = fixture_dir("gpt2-f32");
  const std::string cfg = read_text(dir + "config.json");
  auto file = read_bytes(dir + "model.safetensors");
  // Truncated: the header's offsets now run past the file.
  expect_error([&] { load(cfg, file.data(), file.size() - 100); }, "run past the data section");
  // A config that disagrees with the tensors' shapes.
  std::string wide = cfg;
  wide.replace(wide.find("\"n_embd\": 32"), 12, "\"n_embd\": 64");
  expect_error([&] { load(wide, file.data(), file.size()); }, "tensor 'wte.weight' has shape [96, 32], the config implies [96, 64]");
  // A needed tensor missing, and one with an unsupported dtype.
  const auto missing = make_file({{"wte.weight", "F32", {96, 32}, 0, 96 * 32 * 4}}, 96 * 32 * 4);
  expect_error([&] { load(cfg, missing.data(), missing.size()); }, "missing tensor 'wpe.weight'");
  const auto ints = make_file({{"wte.weight", "I32", {96, 32}, 0, 96 * 32 * 4}}, 96 * 32 * 4);
  expect_error([&] { load(cfg, ints.data(), ints.size()); }, "tensor 'wte.weight' has dtype I32");
  // More than the heap can hold: refused before allocating.
  expect_error([&] { load(cfg, file.data(), file.size(), 1000); }, "above the 0 MB available");
  // Streaming: a chunk never fed is named at finish().
  {
    const ModelConfig c = read_config(cfg);
    const uint64_t n = safetensors_header_length(file.data(), file.size());
    const SafetensorsIndex ix = parse_safetensors_header(reinterpret_cast<const char*>(file.data()) + 8, n, file.size());
    auto m = Model::create(c, ix, uint64_t(1) << 30);
    m->feed(0, file.data() + ix.data_start, ix.data_size / 2);
    expect_error([&] { m->finish(); }, "bytes (truncated download?)");
  }
  // A NaN in the weights.
  {
    auto nan = file;
    const uint64_t n = safetensors_header_length(nan.data(), nan.size());
    const SafetensorsIndex ix = parse_safetensors_header(reinterpret_cast<const char*>(nan.data()) + 8, n, nan.size());
    const float q = std::nanf("");
    std::memcpy(nan.data() + ix.data_start + ix.find("ln_f.bias")->begin, &q, 4);
    expect_error([&] { load(cfg, nan.data(), nan.size()); }, "tensor 'ln_f.bias' has a NaN");
  }
  // The model's own refusals leave it usable.
  auto m = load(cfg, file.data(), file.size());
  expect_error([&] { m->forward({1, 96}, nullptr, false); }, "token id 96 at index 1 is outside the vocabulary [0, 96)");
  expect_error([&] { m->forward(std::vector<int32_t>(33, 1), nullptr, false); }, "33 tokens exceed the model's 32 positions");
  expect_error([&] { m->forward({}, nullptr, false); }, "ids must not be empty");
  m->forward(std::vector<int32_t>(30, 1), nullptr, false);
  expect_error([&] { m->extend({1, 2, 3}, false); }, "33 tokens exceed");
  const Output o = m->forward({1, 2, 3}, nullptr, false);
  EXPECT_EQ(o.rows, 3);
  EXPECT_TRUE(std::isfinite(o.logits[0]));
}

// Any chunking of the data section gives the same parameters (the JS loader streams a Response).
TEST(PretrainedLoad, StreamedChunksEqualWholeFile) {
  const std::string dir = fixture_dir("bert-mlm-bf16");
  const std::string cfg = read_text(dir + "config.json");
  const auto file = read_bytes(dir + "model.safetensors");
  const Reference r = read_reference("bert-mlm-bf16");
  auto whole = load(cfg, file.data(), file.size());
  const uint64_t n = safetensors_header_length(file.data(), file.size());
  const SafetensorsIndex ix = parse_safetensors_header(reinterpret_cast<const char*>(file.data()) + 8, n, file.size());
  auto m = Model::create(read_config(cfg), ix, uint64_t(1) << 30);
  for (uint64_t off = 0; off < ix.data_size; off += 777)
    m->feed(off, file.data() + ix.data_start + off, std::min<uint64_t>(777, ix.data_size - off));
  m->finish();
  EXPECT_EQ(whole->forward(r.ids, &r.types, false).logits, m->forward(r.ids, &r.types, false).logits);
}

// int8 at load: every fixture's logits and attention against the PyTorch reference, with the
// tolerance int8 weights allow (measured worst: see the figures in the test's messages), greedy
// next tokens compared, a quarter of the dense layers' memory.
namespace {
std::unique_ptr<Model> load_fixture_q8(const std::string& name) {
  const auto file = read_bytes(fixture_dir(name) + "model.safetensors");
  return load(read_text(fixture_dir(name) + "config.json"), file.data(), file.size(), uint64_t(1) << 34, true);
}

void expect_int8_close(const std::string& name) {
  SCOPED_TRACE(name);
  const Reference r = read_reference(name);
  auto m = load_fixture_q8(name);
  auto f = load_fixture(name);
  const bool bert = m->config().family == Family::BERT;
  const Output o = m->forward(r.ids, bert ? &r.types : nullptr, true);
  ASSERT_EQ(o.logits.size(), r.logits.size());
  ASSERT_EQ(o.attention.size(), r.attentions.size());
  double worst = 0, scale = 0, worst_att = 0;
  for (size_t i = 0; i < r.logits.size(); ++i) {
    worst = std::max(worst, std::fabs(double(o.logits[i]) - r.logits[i]));
    scale = std::max(scale, std::fabs(double(r.logits[i])));
  }
  for (size_t i = 0; i < r.attentions.size(); ++i)
    worst_att = std::max(worst_att, std::fabs(double(o.attention[i]) - r.attentions[i]));
  // Measured on these tiny random models: logits within 1.5-2.8% of the largest logit, attention
  // within 0.022-0.06 (their 32-wide rows make int8's relative error large; the test below shows
  // the arithmetic itself is exact to the activations' int16 rounding).
  EXPECT_LT(worst, 0.04 * scale) << "largest logit error " << worst << " of max |logit| " << scale;
  EXPECT_LT(worst_att, 0.08) << "largest attention error";
  std::printf("[ int8 ] %s: logits within %.3g (max |logit| %.3g), attention within %.3g; %.1f%% of the fp32 bytes\n",
              name.c_str(), worst, scale, worst_att, 100.0 * double(m->parameter_bytes()) / double(f->parameter_bytes()));
}
}  // namespace

TEST(PretrainedInt8, Gpt2) { expect_int8_close("gpt2-f32"); }
TEST(PretrainedInt8, Gpt2PrefixedF16) { expect_int8_close("gpt2-prefixed-f16"); }
TEST(PretrainedInt8, GptNeo) { expect_int8_close("gpt-neo-f32"); }
TEST(PretrainedInt8, BertMlmBf16) { expect_int8_close("bert-mlm-bf16"); }
TEST(PretrainedInt8, BertModel) { expect_int8_close("bert-model-f32"); }

// Greedy continuations of the decoders: int8 against fp32, token by token through the KV cache.
TEST(PretrainedInt8, GreedyTokensMostlyAgreeWithFp32) {
  for (const std::string name : {"gpt2-f32", "gpt-neo-f32"}) {
    auto q = load_fixture_q8(name), f = load_fixture(name);
    const Reference r = read_reference(name);
    std::vector<int32_t> tq = r.ids, tf = r.ids;
    Output oq = q->forward(tq, nullptr, false), of = f->forward(tf, nullptr, false);
    int same = 0;
    const int steps = 16;
    for (int s = 0; s < steps; ++s) {
      const int32_t a = static_cast<int32_t>(argmax(oq.logits.data() + (oq.rows - 1) * oq.cols, oq.cols));
      const int32_t b = static_cast<int32_t>(argmax(of.logits.data() + (of.rows - 1) * of.cols, of.cols));
      same += a == b;
      if (s + 1 == steps || static_cast<int64_t>(tq.size()) + 1 >= q->config().positions) break;
      tq.push_back(a);
      tf.push_back(b);
      oq = q->extend({a}, false);
      of = f->extend({b}, false);
    }
    std::printf("[ int8 ] %s: %d of %d greedy tokens equal fp32's\n", name.c_str(), same, steps);
    EXPECT_GE(same, steps * 3 / 4) << name;
  }
}

// Streamed in chunks of 777 bytes: the same quantised model as the whole file; a [out, in]
// tensor's bytes out of order are refused by name, and a fresh load still works.
TEST(PretrainedInt8, StreamedChunksEqualWholeFileAndOrderIsChecked) {
  for (const std::string name : {"gpt2-f32", "bert-mlm-bf16"}) {
    const std::string dir = fixture_dir(name);
    const std::string cfg = read_text(dir + "config.json");
    const auto file = read_bytes(dir + "model.safetensors");
    const Reference r = read_reference(name);
    const bool bert = name.rfind("bert", 0) == 0;
    auto whole = load_fixture_q8(name);
    const uint64_t n = safetensors_header_length(file.data(), file.size());
    const SafetensorsIndex ix = parse_safetensors_header(reinterpret_cast<const char*>(file.data()) + 8, n, file.size());
    auto m = Model::create(read_config(cfg), ix, uint64_t(1) << 30, true);
    for (uint64_t off = 0; off < ix.data_size; off += 777)
      m->feed(off, file.data() + ix.data_start + off, std::min<uint64_t>(777, ix.data_size - off));
    m->finish();
    EXPECT_EQ(whole->forward(r.ids, bert ? &r.types : nullptr, false).logits,
              m->forward(r.ids, bert ? &r.types : nullptr, false).logits) << name;
  }
  const std::string dir = fixture_dir("gpt2-f32");
  const auto file = read_bytes(dir + "model.safetensors");
  const uint64_t n = safetensors_header_length(file.data(), file.size());
  const SafetensorsIndex ix = parse_safetensors_header(reinterpret_cast<const char*>(file.data()) + 8, n, file.size());
  auto m = Model::create(read_config(read_text(dir + "config.json")), ix, uint64_t(1) << 30, true);
  const TensorEntry* wte = ix.find("wte.weight");
  ASSERT_NE(wte, nullptr);
  try {
    m->feed(wte->begin + 16, file.data() + ix.data_start + wte->begin + 16, 16);
    FAIL() << "out-of-order bytes were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'wte.weight' must arrive in order"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(load_fixture_q8("gpt2-f32"));
}

TEST(PretrainedInt8, ThreadCountInvariance) {
  const Reference r = read_reference("gpt2-f32");
  auto m = load_fixture_q8("gpt2-f32");
  ThreadPool pool(3);
  EXPECT_EQ(m->forward(r.ids, nullptr, true).logits, m->forward(r.ids, nullptr, true, &pool).logits);
}

// The int8 model against the fp32 model whose weights are its own dequantised ones (each row
// rounded to 127 steps of max|row| / 127, written back into the file as F32): what is left is the
// activations' int16 rounding, so the two agree to ~1e-3 where the reference differs by 1e-1.
namespace {
void dequantise_in_file(std::vector<uint8_t>& file, const TensorEntry& e, uint64_t data_start, bool conv1d) {
  const int64_t r0 = e.shape[0], c0 = e.shape[1];
  const int64_t out = conv1d ? c0 : r0, in = conv1d ? r0 : c0;
  float* w = reinterpret_cast<float*>(file.data() + data_start + e.begin);
  auto at = [&](int64_t o, int64_t i) -> float& { return conv1d ? w[i * c0 + o] : w[o * c0 + i]; };
  for (int64_t o = 0; o < out; ++o) {
    float amax = 0.f;
    for (int64_t i = 0; i < in; ++i) amax = std::max(amax, std::fabs(at(o, i)));
    const float scale = amax > 0.f ? amax / 127.f : 1.f;
    for (int64_t i = 0; i < in; ++i) at(o, i) = scale * static_cast<float>(std::lround(std::clamp(at(o, i) / scale, -127.f, 127.f)));
  }
}
}  // namespace

TEST(PretrainedInt8, EqualsFp32OfItsOwnDequantisedWeights) {
  for (const std::string name : {"gpt2-f32", "gpt-neo-f32", "bert-model-f32"}) {
    SCOPED_TRACE(name);
    const std::string dir = fixture_dir(name), cfg = read_text(dir + "config.json");
    auto file = read_bytes(dir + "model.safetensors");
    const uint64_t n = safetensors_header_length(file.data(), file.size());
    const SafetensorsIndex ix = parse_safetensors_header(reinterpret_cast<const char*>(file.data()) + 8, n, file.size());
    int quantised = 0;
    for (const TensorEntry& e : ix.tensors) {
      const std::string& key = e.name;
      const bool weight2d = e.shape.size() == 2 && key.size() > 7 && key.compare(key.size() - 7, 7, ".weight") == 0;
      const bool dense = key.find("c_attn") != std::string::npos || key.find("c_proj") != std::string::npos ||
                         key.find("c_fc") != std::string::npos || key.find("_proj.weight") != std::string::npos ||
                         key.find("query") != std::string::npos || key.find("key.") != std::string::npos ||
                         key.find("value") != std::string::npos || key.find("dense") != std::string::npos ||
                         key.find("wte") != std::string::npos;
      if (!weight2d || !dense) continue;
      dequantise_in_file(file, e, ix.data_start, name == "gpt2-f32" && key.find("wte") == std::string::npos);
      ++quantised;
    }
    EXPECT_GT(quantised, 4);
    auto f = load(cfg, file.data(), file.size());
    auto q = load_fixture_q8(name);
    const Reference r = read_reference(name);
    const bool bert = name.rfind("bert", 0) == 0;
    const Output a = f->forward(r.ids, bert ? &r.types : nullptr, true), b = q->forward(r.ids, bert ? &r.types : nullptr, true);
    double worst = 0, worst_att = 0;
    for (size_t i = 0; i < a.logits.size(); ++i) worst = std::max(worst, std::fabs(double(a.logits[i]) - b.logits[i]));
    for (size_t i = 0; i < a.attention.size(); ++i) worst_att = std::max(worst_att, std::fabs(double(a.attention[i]) - b.attention[i]));
    std::printf("[ int8 ] %s against its dequantised fp32: logits within %.3g, attention within %.3g\n", name.c_str(), worst, worst_att);
    EXPECT_LT(worst, 3e-3);
    EXPECT_LT(worst_att, 1e-3);
  }
}

// The bindings open a model from an index that is gone when the bytes arrive: the model keeps its
// own copy of each tensor's entry (it kept pointers into the index, which ASan sees as a
// use-after-free here; in WebAssembly the freed entries were reused and a dtype read as garbage).
TEST(PretrainedLoad, OutlivesTheIndexItWasOpenedWith) {
  const std::string dir = fixture_dir("gpt2-prefixed-f16");
  const auto file = read_bytes(dir + "model.safetensors");
  const Reference r = read_reference("gpt2-prefixed-f16");
  for (bool quantize : {false, true}) {
    std::unique_ptr<Model> m;
    uint64_t start = 0, size = 0;
    {
      const uint64_t n = safetensors_header_length(file.data(), file.size());
      auto ix = std::make_unique<SafetensorsIndex>(parse_safetensors_header(reinterpret_cast<const char*>(file.data()) + 8, n, file.size()));
      m = Model::create(read_config(read_text(dir + "config.json")), *ix, uint64_t(1) << 30, quantize);
      start = ix->data_start;
      size = ix->data_size;
      for (auto& e : ix->tensors) e.dt = Dtype::Other, e.begin = e.end = 0;  // what reuse might leave
    }
    m->feed(0, file.data() + start, size);
    m->finish();
    auto whole = quantize ? load_fixture_q8("gpt2-prefixed-f16") : load_fixture("gpt2-prefixed-f16");
    EXPECT_EQ(m->forward(r.ids, nullptr, false).logits, whole->forward(r.ids, nullptr, false).logits) << quantize;
  }
}
