// embind for issue 16's pretrained checkpoints, built as a module of its own
// (attnlab-pretrained-<variant>, see CMakeLists.txt) so the home page's module stays its size.
// Same contract as bindings.cpp; results go into the caller's `out` (web/lib/pretrained/module.ts).
#include "attnlab/pretrained.hpp"
#include "marshal.hpp"

using namespace attnlab;
using namespace attnlab::bindings;
using namespace attnlab::pretrained;
using emscripten::function;

namespace {

Handles<Model> models;  // on the module's pool (setThreads(n), n > 1 on the -threads builds)

// def(), with the heap's message naming what outgrows it here.
template <class F>
void bind(const char* name, F f) { def(name, f, "this checkpoint"); }
Model& model(int id) { return models.at(id, "the model"); }

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
  // ids and BERT's token types (or null) as arrays of integers; extend: append to the decoder's cache.
  bind("pretrainedRun", [](val a, val out) {
    Model& m = model(a["id"].as<int>());
    const std::vector<int32_t> ids = ints(a["ids"]), types = given(a["types"]) ? ints(a["types"]) : std::vector<int32_t>();
    const bool attentions = flag(a, "attentions");
    const Output o = flag(a, "extend") ? m.extend(ids, attentions, thread_pool())
                                       : m.forward(ids, given(a["types"]) ? &types : nullptr, attentions, thread_pool());
    out.set("rows", static_cast<double>(o.rows));
    out.set("cols", static_cast<double>(o.cols));
    out.set("ctx", static_cast<double>(o.ctx));
    out.set("logits", typed_copy(o.logits));
    if (attentions) out.set("attention", typed_copy(o.attention));
  });
  function("pretrainedDispose", +[](int id) { models.dispose(id); });
}
