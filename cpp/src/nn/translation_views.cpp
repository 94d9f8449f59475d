#include "attnlab/nn/translation_views.hpp"

#include "attnlab/nn/tokenizer.hpp"

namespace attnlab::nn {

AttentionMaps attention_maps(const Translation& t) {
  const int64_t S = static_cast<int64_t>(t.src_tokens.size());
  const int64_t Tn = static_cast<int64_t>(t.tgt_tokens.size());
  const int64_t LH = t.layout.layers * t.layout.heads;
  const Hypothesis* best = t.beams.empty() ? nullptr : &t.beams[0];
  AttentionMaps m;
  // The hypothesis keeps per step [layers * heads, S] (and [layers * heads, step + 1]).
  m.cross.assign(static_cast<size_t>(LH * Tn * S), 0.f);
  if (best)
    for (int64_t s = 0; s < Tn; ++s)
      for (int64_t lh = 0; lh < LH; ++lh)
        for (int64_t k = 0; k < S; ++k) m.cross[(lh * Tn + s) * S + k] = best->cross[s][lh * S + k];
  if (!t.layout.has_self) return m;
  m.decoder_self.assign(static_cast<size_t>(LH * Tn * Tn), 0.f);
  if (best)
    for (int64_t s = 0; s < Tn; ++s)
      for (int64_t lh = 0; lh < LH; ++lh)
        for (int64_t k = 0; k <= s; ++k) m.decoder_self[(lh * Tn + s) * Tn + k] = best->self[s][lh * (s + 1) + k];
  return m;
}

std::vector<std::string> beam_pieces(const Translator& tr, const Hypothesis& h) {
  std::vector<std::string> pieces;
  for (int id : h.ids) pieces.push_back(id == Bpe::kEos ? "</s>" : tr.tgt_vocab().piece(id));
  return pieces;
}

std::string beam_text(const Translator& tr, const Hypothesis& h) {
  return tr.tgt_vocab().decode(h.ids, tr.tgt_lang());
}

void PackedStrings::add(const std::string& s) {
  const std::u32string cps = utf8_decode(s);
  int32_t n = 0;
  for (char32_t c : cps) n += c > 0xFFFF ? 2 : 1;  // a surrogate pair past the BMP
  units.push_back(n);
  text += utf8_encode(cps);
}

TranslationView translation_view(const Translator& tr, const Translation& t) {
  TranslationView v;
  v.counts = {static_cast<int32_t>(t.src_tokens.size()), static_cast<int32_t>(t.tgt_tokens.size()),
              static_cast<int32_t>(t.beams.size())};
  v.strings.add(t.text);
  for (const std::string& s : t.src_tokens) v.strings.add(s);
  for (const std::string& s : t.tgt_tokens) v.strings.add(s);
  for (const Hypothesis& b : t.beams) {
    v.strings.add(beam_text(tr, b));
    const std::vector<std::string> pieces = beam_pieces(tr, b);
    v.counts.push_back(static_cast<int32_t>(pieces.size()));
    for (const std::string& s : pieces) v.strings.add(s);
    v.scores.push_back(b.score);
    v.cut.push_back(b.cut ? 1 : 0);
  }
  for (const Hypothesis& b : t.beams) v.scores.push_back(b.logp);
  v.maps = attention_maps(t);
  v.source_pieces = t.src_pieces;
  v.layout = t.layout;
  v.encoder_self = t.enc_self;
  return v;
}

}  // namespace attnlab::nn
