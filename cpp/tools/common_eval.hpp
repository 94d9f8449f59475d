// BLEU evaluation shared by attnlab-train and attnlab-eval: every reference of a source together.
#pragma once
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "attnlab/nn/translate.hpp"
#include "data.hpp"

namespace attnlab::tools {

struct Grouped {
  std::vector<std::string> srcs;
  std::vector<std::vector<std::string>> refs;
};
inline Grouped group_by_source(const std::vector<Pair>& pairs) {
  Grouped g;
  std::map<std::string, size_t> idx;
  for (const auto& p : pairs) {
    auto it = idx.find(p.src);
    if (it == idx.end()) {
      idx.emplace(p.src, g.srcs.size());
      g.srcs.push_back(p.src);
      g.refs.push_back({p.tgt});
    } else {
      g.refs[it->second].push_back(p.tgt);
    }
  }
  return g;
}

struct EvalResult {
  double bleu = 0, ms_per_sentence = 0;
  size_t sources = 0;
  std::vector<std::string> hyps;
};

inline EvalResult eval_bleu(const nn::Model& m, const nn::Bpe& sv, const nn::Bpe& tv, const Grouped& g,
                            const nn::DecodeOptions& opt, size_t limit, int show = 0) {
  EvalResult r;
  const size_t n = limit ? std::min(limit, g.srcs.size()) : g.srcs.size();
  std::vector<std::vector<std::string>> refs(g.refs.begin(), g.refs.begin() + n);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string lang = m.cfg.get("tgt_lang", "en");
  const int64_t maxlen = m.cfg.geti("max_len", 0);
  for (size_t i = 0; i < n; ++i) {
    auto ids = sv.encode(g.srcs[i]);
    if (maxlen > 0 && static_cast<int64_t>(ids.size()) > maxlen) ids.resize(maxlen);
    nn::DecodeOptions o = opt;
    o.attention = false;  // BLEU needs the text only
    if (maxlen > 0) o.max_len = static_cast<int>(std::min<int64_t>(maxlen - 1, 2 * ids.size() + 10));
    const auto beams = nn::beam_search(m, ids, o);
    r.hyps.push_back(beams.empty() ? "" : tv.decode(beams[0].ids, lang));
    if (static_cast<int>(i) < show) std::printf("  %s\n    -> %s\n    ref: %s\n", g.srcs[i].c_str(), r.hyps.back().c_str(), refs[i][0].c_str());
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.bleu = nn::corpus_bleu(r.hyps, refs);
  r.sources = n;
  r.ms_per_sentence = n ? 1000.0 * s / static_cast<double>(n) : 0;
  return r;
}

}  // namespace attnlab::tools
