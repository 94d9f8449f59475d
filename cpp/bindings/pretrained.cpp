// embind for issue 16's pretrained checkpoints, built as a module of its own
// (attnlab-pretrained-<variant>, see CMakeLists.txt) so the home page's module stays its size.
// Marshalling only, on bindings.cpp's contract (marshal.hpp): each call returns "" or the error
// message, and fills the caller's `out` object (web/lib/pretrained/module.ts) with numbers,
// strings and the tensors as JS-owned Float32Array copies.
#include <algorithm>
#include <emscripten/bind.h>

#include "attnlab/pretrained.hpp"
#include "marshal.hpp"

using namespace attnlab;
using namespace attnlab::bindings;
using namespace attnlab::pretrained;
using emscripten::function;

namespace {

Held<Model> models;  // on the module's pool (setThreads(n), n > 1 on the -threads builds)

// def(), with the heap's message naming what outgrows it here.
template <class F>
void bind(const char* name, F f) { def(name, f, "this checkpoint"); }
Model& model(int id) { return models.at(id, "the model"); }

const char* family_name(Family f) { return f == Family::GPT2 ? "gpt2" : f == Family::BERT ? "bert" : "gpt-neo"; }

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_pretrained) {
  bind("pretrainedHeaderLength", [](double first8, double file_size, val out) {
    out.set("length", static_cast<double>(safetensors_header_length(addr<const uint8_t>(first8),
                                                                    static_cast<uint64_t>(file_size))));
  });
  bind("pretrainedOpen", [](val a, val out) {
    const ModelConfig c = read_config(str(a, "config"));
    const SafetensorsIndex ix = parse_safetensors_header(ptr<const char>(a, "header"), num(a, "headerLength"),
                                                         num(a, "fileSize"));
    auto m = Model::create(c, ix, num(a, "maxBytes"), a["quantize"].as<bool>());
    out.set("architecture", c.architecture);
    out.set("family", family_name(c.family));
    out.set("layers", static_cast<double>(c.layers));
    out.set("heads", static_cast<double>(c.heads));
    out.set("hidden", static_cast<double>(c.hidden));
    out.set("vocab", static_cast<double>(c.vocab));
    out.set("typeVocab", static_cast<double>(c.type_vocab));
    out.set("positions", static_cast<double>(c.positions));
    out.set("logits", m->outputs_logits());
    out.set("parameterBytes", static_cast<double>(m->parameter_bytes()));
    out.set("id", models.add(std::move(m)));
  });
  bind("pretrainedFeed", [](int id, double offset, double p, double n) {
    model(id).feed(static_cast<uint64_t>(offset), addr<const uint8_t>(p), static_cast<uint64_t>(n));
  });
  bind("pretrainedFinish", [](int id) { model(id).finish(); });
  // ids (and BERT's token types, or null) as int32 in the heap; extend: append to the decoder's cache.
  bind("pretrainedRun", [](val a, val out) {
    Model& m = model(a["id"].as<int>());
    const int64_t n = std::max<int64_t>(num(a, "n"), 0);  // none: the model's check names empty ids
    const int32_t* ids = ptr<const int32_t>(a, "ids");
    const int32_t* types = ptr<const int32_t>(a, "types");
    const std::vector<int32_t> id_list(ids, ids + n);
    const std::vector<int32_t> type_list = types ? std::vector<int32_t>(types, types + n) : std::vector<int32_t>();
    const bool attentions = flag(a, "attentions");
    const Output o = flag(a, "extend") ? m.extend(id_list, attentions, thread_pool())
                                       : m.forward(id_list, types ? &type_list : nullptr, attentions, thread_pool());
    out.set("rows", static_cast<double>(o.rows));
    out.set("cols", static_cast<double>(o.cols));
    out.set("ctx", static_cast<double>(o.ctx));
    out.set("logits", typed_copy(o.logits));
    if (attentions) out.set("attention", typed_copy(o.attention));
  });
  function("pretrainedDispose", +[](int id) { models.items.erase(id); });
}
