#include "attnlab/nn/translate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "attnlab/error.hpp"
#include "kernels.hpp"

namespace attnlab::nn {

std::unique_ptr<Translator> Translator::load(const uint8_t* data, size_t size) {
  return std::make_unique<Translator>(load_model(data, size));
}

static std::string display(const Bpe& b, int id) {
  if (id == Bpe::kEos) return "</s>";
  std::string s = b.piece(id);
  const std::string marker = "\xE2\x96\x81";
  if (s.compare(0, marker.size(), marker) == 0) s = s.substr(marker.size());
  return s;
}

std::vector<Hypothesis> beam_search(const Model& m, const std::vector<int>& src, const DecodeOptions& opt, std::vector<float>* enc_self) {
  require(opt.beam >= 1 && opt.beam <= 64, [&] { return "translate: beam must be in [1, 64], got " + std::to_string(opt.beam); });
  require(opt.max_len >= 0 && opt.max_len <= 512, [&] { return "translate: maxLength must be in [0, 512], got " + std::to_string(opt.max_len); });
  const int max_len = opt.max_len > 0 ? opt.max_len : std::min<int>(100, 2 * static_cast<int>(src.size()) + 10);
  const int K = opt.beam;
  const int64_t V = m.tgt_vocab();
  DecodeLimits lim;
  lim.rows = K;
  lim.steps = max_len + 1;
  lim.attention = opt.attention && enc_self;
  lim.pool = opt.pool;
  auto st = m.start(src, lim);
  if (enc_self) *enc_self = st->enc_self;
  auto lp = [&](size_t len) { return std::pow((5.f + static_cast<float>(len)) / 6.f, opt.length_penalty); };
  std::vector<Hypothesis> live(1), done;
  StepOutput out;
  // Each step's attention rows, kept once here; a hypothesis remembers its row per step and
  // gathers its attention only when it is returned.
  std::vector<std::vector<float>> step_cross, step_self;
  std::vector<int> idx;
  for (int t = 0; t < max_len + 1 && !live.empty(); ++t) {
    std::vector<int> last;
    for (const auto& h : live) last.push_back(h.ids.empty() ? Bpe::kBos : h.ids.back());
    m.step(*st, last, opt.attention, out);
    if (opt.attention) {
      step_cross.push_back(std::move(out.cross));
      step_self.push_back(std::move(out.self));
    }
    const std::vector<float>& logp = out.logp;
    const bool must_end = t == max_len;
    struct Cand {
      float logp;
      int row, tok;
    };
    std::vector<Cand> cands;
    for (size_t r = 0; r < live.size(); ++r) {
      const float* row = logp.data() + r * V;
      if (must_end) {
        cands.push_back({live[r].logp + row[Bpe::kEos], static_cast<int>(r), Bpe::kEos});
        continue;
      }
      // The k best tokens (higher log-prob first, then lower id): one pass with a small sorted
      // list, where a partial sort would touch an index array of the whole vocabulary. Once the
      // list is full, kernels::find_above skips to the next token above its last entry.
      const int k = static_cast<int>(std::min<int64_t>(K + 1, V));
      idx.clear();
      auto enter = [&](int j) {
        auto at = idx.end();
        while (at != idx.begin() && row[*(at - 1)] < row[j]) --at;
        idx.insert(at, j);
      };
      int64_t j = 0;
      for (; j < k; ++j) enter(static_cast<int>(j));
      for (;;) {
        j += kernels::find_above(row + j, V - j, row[idx.back()]);  // ties keep the lower id
        if (j >= V) break;
        idx.pop_back();
        enter(static_cast<int>(j++));
      }
      for (int i = 0; i < k; ++i)
        if (idx[i] >= Bpe::kEos && idx[i] != Bpe::kUnk) cands.push_back({live[r].logp + row[idx[i]], static_cast<int>(r), idx[i]});
    }
    std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) { return a.logp > b.logp; });
    std::vector<Hypothesis> next;
    std::vector<int> parent;
    for (const Cand& c : cands) {
      if (static_cast<int>(next.size()) >= K) break;
      Hypothesis h = live[c.row];
      h.ids.push_back(c.tok);
      h.logp = c.logp;
      h.rows.push_back(c.row);
      if (c.tok == Bpe::kEos) {
        h.finished = true;
        h.score = h.logp / lp(h.ids.size());
        done.push_back(std::move(h));
        if (static_cast<int>(done.size()) >= K) break;
      } else {
        next.push_back(std::move(h));
        parent.push_back(c.row);
      }
    }
    live = std::move(next);
    if (static_cast<int>(done.size()) >= K) break;
    if (!live.empty()) m.reorder(*st, parent);
  }
  if (!done.empty()) live.clear();
  for (auto& h : live) {  // unfinished: only when nothing finished
    h.score = h.logp / lp(h.ids.size());
    done.push_back(std::move(h));
  }
  std::stable_sort(done.begin(), done.end(), [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  if (static_cast<int>(done.size()) > K) done.resize(K);
  if (opt.attention) {
    const AttentionLayout lay = m.layout();
    const int64_t LH = lay.layers * lay.heads, n = static_cast<int64_t>(src.size());
    for (auto& h : done)
      for (size_t s = 0; s < h.rows.size(); ++s) {
        const int64_t wc = LH * n, ws = lay.has_self ? LH * static_cast<int64_t>(s + 1) : 0;
        h.cross.emplace_back(step_cross[s].begin() + h.rows[s] * wc, step_cross[s].begin() + (h.rows[s] + 1) * wc);
        h.self.emplace_back(step_self[s].begin() + h.rows[s] * ws, step_self[s].begin() + (h.rows[s] + 1) * ws);
      }
  }
  return done;
}

std::vector<Hypothesis> Translator::search(const std::vector<int>& src, const DecodeOptions& opt, DecodeState*) const {
  return beam_search(*m_.model, src, opt);
}

Translation Translator::translate(const std::string& text, const DecodeOptions& opt) const {
  Translation tr;
  tr.src_ids = m_.src.encode(text);
  tr.src_pieces = tr.src_ids.size();
  const int64_t maxlen = m_.model->cfg.geti("max_len", 0);
  if (maxlen > 0 && static_cast<int64_t>(tr.src_ids.size()) > maxlen) tr.src_ids.resize(maxlen);
  DecodeOptions o = opt;
  if (maxlen > 0 && (o.max_len == 0 ? std::min<int64_t>(100, 2 * tr.src_ids.size() + 10) : o.max_len) >= maxlen)
    o.max_len = static_cast<int>(maxlen - 1);
  tr.beams = beam_search(*m_.model, tr.src_ids, o, &tr.enc_self);
  tr.layout = m_.model->layout();
  for (int id : tr.src_ids) tr.src_tokens.push_back(display(m_.src, id));
  if (!tr.beams.empty()) {
    for (int id : tr.beams[0].ids) tr.tgt_tokens.push_back(display(m_.tgt, id));
    tr.text = m_.tgt.decode(tr.beams[0].ids, tgt_lang());
  }
  return tr;
}

double corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::vector<std::string>>& refs) {
  require(hyps.size() == refs.size(), [] { return std::string("corpus_bleu: hyps and refs differ in length"); });
  double match[4] = {0, 0, 0, 0}, total[4] = {0, 0, 0, 0};
  double hyp_len = 0, ref_len = 0;
  for (size_t i = 0; i < hyps.size(); ++i) {
    const auto h = bleu_tokens(hyps[i]);
    std::vector<std::vector<std::string>> rs;
    for (const auto& r : refs[i]) rs.push_back(bleu_tokens(r));
    hyp_len += h.size();
    // Closest reference length (shorter wins ties), as in NLTK / sacrebleu.
    size_t best = 0;
    long bestd = -1;
    for (const auto& r : rs) {
      const long d = std::labs(static_cast<long>(r.size()) - static_cast<long>(h.size()));
      if (bestd < 0 || d < bestd || (d == bestd && r.size() < best)) { bestd = d; best = r.size(); }
    }
    ref_len += best;
    for (int n = 1; n <= 4; ++n) {
      std::map<std::vector<std::string>, int> hc, maxrc;
      for (size_t k = 0; k + n <= h.size(); ++k) hc[std::vector<std::string>(h.begin() + k, h.begin() + k + n)]++;
      for (const auto& r : rs) {
        std::map<std::vector<std::string>, int> rc;
        for (size_t k = 0; k + n <= r.size(); ++k) rc[std::vector<std::string>(r.begin() + k, r.begin() + k + n)]++;
        for (const auto& [g, c] : rc) maxrc[g] = std::max(maxrc[g], c);
      }
      for (const auto& [g, c] : hc) {
        auto it = maxrc.find(g);
        match[n - 1] += std::min(c, it == maxrc.end() ? 0 : it->second);
        total[n - 1] += c;
      }
    }
  }
  double logp = 0;
  for (int n = 0; n < 4; ++n) {
    if (match[n] == 0 || total[n] == 0) return 0.0;
    logp += 0.25 * std::log(match[n] / total[n]);
  }
  const double bp = hyp_len >= ref_len ? 1.0 : std::exp(1.0 - ref_len / std::max(hyp_len, 1.0));
  return 100.0 * bp * std::exp(logp);
}

}  // namespace attnlab::nn
