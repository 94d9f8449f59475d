// embind of the translators and the toy trainer (cpp/src/nn/), held in tables by id. Same
// contract as bindings.cpp; results go into the caller's `out` object (wasm-module.ts): text as
// strings (a translation's all in one, with lengths), tensors as typed arrays.
#include "attnlab/nn/trainer.hpp"
#include "attnlab/nn/translation_views.hpp"
#include "marshal.hpp"

using namespace attnlab;
using namespace attnlab::bindings;
using namespace attnlab::nn;
using emscripten::function;

namespace {

Handles<Translator> translators;  // on the module's pool (setThreads(n), n > 1 on the -threads builds)
Handles<ToyTrainer> trainers;     // on the calling thread

}  // namespace

EMSCRIPTEN_BINDINGS(attnlab_translate) {
  def("translatorCreate", [](double p, double len, val out) {
    auto tr = Translator::load(addr<const uint8_t>(p), static_cast<size_t>(len));
    out.set("parameters", static_cast<double>(tr->model().num_params()));
    out.set("srcVocab", static_cast<double>(tr->src_vocab().size()));
    out.set("tgtVocab", static_cast<double>(tr->tgt_vocab().size()));
    out.set("config", tr->model().cfg.serialize());
    out.set("id", translators.add(std::move(tr)));
  });
  def("translatorTranslate", [](int id, std::string text, int beam, int max_len, double lp, val out) {
    const Translator& tr = translators.at(id, "this translator");
    // Attention for beams[0] only: all that translation_view() reads.
    const DecodeOptions opt{beam, max_len, static_cast<float>(lp), true, true, thread_pool()};
    const TranslationView v = translation_view(tr, tr.translate(text, opt));
    out.set("strings", v.strings.text);
    out.set("units", typed_copy(v.strings.units));
    out.set("counts", typed_copy(v.counts));
    out.set("sourcePieces", static_cast<double>(v.source_pieces));
    out.set("kind", v.layout.has_self ? "transformer" : "alignment");
    out.set("layers", static_cast<double>(v.layout.layers));
    out.set("heads", static_cast<double>(v.layout.heads));
    out.set("cross", typed_copy(v.maps.cross));
    out.set("decoderSelf", typed_copy(v.maps.decoder_self));
    out.set("encoderSelf", typed_copy(v.encoder_self));
    out.set("scores", typed_copy(v.scores));
    out.set("cut", typed_copy(v.cut));
  });
  def("trainerCreate", [](val a, val out) {
    const auto n = [&](const char* field) { return static_cast<int>(num(a, field)); };
    const ToyTaskConfig task{parse_toy_task(str(a, "task")), n("symbols"), n("minLength"), n("maxLength")};
    auto t = std::make_unique<ToyTrainer>(ToyTrainerConfig{task, str(a, "arch"), n("hidden"), n("batch"), real(a, "lr"),
                                                           static_cast<uint32_t>(num(a, "seed"))});
    out.set("parameters", static_cast<double>(t->num_params()));
    out.set("id", trainers.add(std::move(t)));
  });
  def("trainerStep", [](int id, int steps, val out) {
    const StepReport r = trainers.at(id, "this trainer").step(steps);
    out.set("step", static_cast<double>(r.step));
    out.set("loss", r.loss);
    out.set("tokensPerSecond", r.tokens_per_second);
  });
  def("trainerEvaluate", [](int id, int n, int seed, val out) {
    const Evaluation e = trainers.at(id, "this trainer").evaluate(n, static_cast<uint32_t>(seed));
    const ToyExample& x = e.example;
    out.set("exactMatch", e.exact_match);
    val example = n > 0 ? val::object() : val::null();
    if (n > 0) {
      example.set("source", strings(x.source));
      example.set("target", strings(x.target));
      example.set("output", strings(x.output));
      example.set("attention", typed_copy(x.attention));
    }
    out.set("example", example);
  });
  // Translators and trainers share the ids.
  function("dispose", +[](int id) {
    translators.dispose(id);
    trainers.dispose(id);
  });
}
