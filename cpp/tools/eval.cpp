// attnlab-eval: corpus BLEU-4 of a model on a pairs TSV (English<TAB>French), every reference of a
// source together, greedy and/or beam.
//
//   attnlab-eval --model web/models/fra-eng-gru.atl [--data pairs.tsv] [--split val|all]
//                [--filter none|tutorial] [--beams 1,5] [--limit N] [--show N]
//   attnlab-eval --model ckpt.atl --convert out.atl --dtype int8|fp16|fp32   (re-encode, no eval)
//
// --split val (default) keeps the pairs the model held out (its val_per_mille and direction);
// --data with --split all scores any TSV, e.g. an external held-out set.
#include <cstdio>
#include <sstream>

#include "attnlab/nn/weights.hpp"
#include "common_eval.hpp"
#include "data.hpp"

using namespace attnlab;
using namespace attnlab::tools;

int main(int argc, char** argv) {
  try {
    Flags F;
    F.parse(argc, argv);
    if (F.usage_or_check(
            "attnlab-eval: corpus BLEU-4 of a model on a pairs TSV\n"
            "  --model FILE.atl  [--data pairs.tsv] [--split val|all] [--filter none|tutorial]\n"
            "  [--beams 1,5] [--length-penalty 0.6] [--limit N] [--show N]\n"
            "  --convert OUT.atl --dtype int8|fp16|fp32   (re-encode, no evaluation)\n",
            {"model", "data", "split", "filter", "beams", "length-penalty", "limit", "show", "convert", "dtype"}))
      return 0;
    if (!F.has("model")) throw std::runtime_error("--model FILE is required");
    const auto bytes = read_file(F.s("model", ""));
    nn::LoadedModel lm = nn::load_model(bytes.data(), bytes.size());
    if (F.has("convert")) {
      const std::string d = F.s("dtype", "int8");
      const nn::DType dt = d == "fp32" ? nn::DType::F32 : d == "fp16" ? nn::DType::F16 : nn::DType::I8;
      const auto out = nn::save_model(*lm.model, lm.src, lm.tgt, dt);
      write_file(F.s("convert", ""), out);
      std::printf("wrote %s (%s, %zu bytes)\n", F.s("convert", "").c_str(), d.c_str(), out.size());
      return 0;
    }
    const auto& cfg = lm.model->cfg;
    const std::string direction = cfg.get("src_lang") == "fr" ? "fra-eng" : "eng-fra";
    const std::string split = F.s("split", "val"), filter = F.s("filter", "none");
    const int per_mille = static_cast<int>(cfg.geti("val_per_mille", 30));
    std::vector<Pair> pairs;
    for (const auto& p : read_pairs(F.s("data", "/work/shared/data/tatoeba-fra-eng/pairs.tsv"), direction)) {
      if (split == "val" && !is_validation(p.src, per_mille)) continue;
      if (filter == "tutorial") {
        const std::string& en = direction == "fra-eng" ? p.tgt : p.src;
        const std::string& fr = direction == "fra-eng" ? p.src : p.tgt;
        if (!tutorial_filter(en, fr)) continue;
      }
      pairs.push_back(p);
    }
    const Grouped g = group_by_source(pairs);
    std::printf("model %s (%s, %lld parameters, %zu bytes): %zu pairs, %zu sources (split %s, filter %s)\n",
                F.s("model", "").c_str(), cfg.get("arch").c_str(), static_cast<long long>(lm.model->num_params()), bytes.size(),
                pairs.size(), g.srcs.size(), split.c_str(), filter.c_str());
    std::stringstream beams(F.s("beams", "1,5"));
    std::string b;
    while (std::getline(beams, b, ',')) {
      nn::DecodeOptions o;
      o.beam = std::stoi(b);
      if (F.has("length-penalty")) o.length_penalty = static_cast<float>(F.f("length-penalty", 0.6));
      const auto r = eval_bleu(*lm.model, lm.src, lm.tgt, g, o, static_cast<size_t>(F.i("limit", 0)), static_cast<int>(F.i("show", 0)));
      std::printf("beam %d: BLEU %.2f on %zu sources, %.2f ms/sentence\n", o.beam, r.bleu, r.sources, r.ms_per_sentence);
      std::fflush(stdout);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "attnlab-eval: %s\n", e.what());
    return 1;
  }
}
