// attention_maps(): the best hypothesis's per-step attention laid out as [L, H, T, S] and
// [L, H, T, T] tensors, the layout translate() hands to JavaScript.
#include <gtest/gtest.h>

#include "attnlab/nn/translation_views.hpp"

using namespace attnlab::nn;

TEST(NnTranslationViews, AttentionMapsLayOutEveryLayerHeadAndStep) {
  const int64_t L = 2, H = 3, S = 4, Tn = 3, LH = L * H;
  Translation t;
  t.layout = {L, H, true};
  t.src_tokens.assign(S, "x");
  t.tgt_tokens.assign(Tn, "y");
  Hypothesis h;
  // Value 1000 lh + 100 step + key: each entry says where it must land.
  for (int64_t s = 0; s < Tn; ++s) {
    std::vector<float> cross, self;
    for (int64_t lh = 0; lh < LH; ++lh) {
      for (int64_t k = 0; k < S; ++k) cross.push_back(static_cast<float>(1000 * lh + 100 * s + k));
      for (int64_t k = 0; k <= s; ++k) self.push_back(static_cast<float>(1000 * lh + 100 * s + k));
    }
    h.cross.push_back(cross);
    h.self.push_back(self);
  }
  t.beams = {h};
  const AttentionMaps m = attention_maps(t);
  ASSERT_EQ(m.cross.size(), static_cast<size_t>(LH * Tn * S));
  ASSERT_EQ(m.decoder_self.size(), static_cast<size_t>(LH * Tn * Tn));
  for (int64_t lh = 0; lh < LH; ++lh)
    for (int64_t s = 0; s < Tn; ++s) {
      for (int64_t k = 0; k < S; ++k) EXPECT_EQ(m.cross[(lh * Tn + s) * S + k], 1000 * lh + 100 * s + k);
      for (int64_t k = 0; k < Tn; ++k)
        EXPECT_EQ(m.decoder_self[(lh * Tn + s) * Tn + k], k <= s ? 1000 * lh + 100 * s + k : 0.0f);
    }
  // The GRU's alignment has no self-attention; no beams gives zeros of the right size.
  t.layout = {1, 1, false};
  t.beams.clear();
  const AttentionMaps g = attention_maps(t);
  EXPECT_EQ(g.cross, std::vector<float>(static_cast<size_t>(Tn * S), 0.0f));
  EXPECT_TRUE(g.decoder_self.empty());
}

// PackedStrings: one UTF-8 text and each string's UTF-16 length, as JavaScript slices them:
// ASCII, two- and three-byte characters, one past the BMP (two code units), an empty string, and
// bytes that are not UTF-8 (a lone continuation byte, a truncated sequence, an encoded surrogate),
// each of which becomes one U+FFFD.
TEST(NnTranslationViews, PackedStringsGiveUtf16LengthsOfValidUtf8) {
  PackedStrings p;
  for (const char* s : {"je", "\xC3\xA9t\xC3\xA9", "\xE2\x96\x81que", "\xF0\x9F\x98\x80!", "", "a\x80" "b", "\xE2\x96", "\xED\xA0\x80"})
    p.add(s);
  EXPECT_EQ(p.units, (std::vector<int32_t>{2, 3, 4, 3, 0, 3, 2, 3}));
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(p.text, "je\xC3\xA9t\xC3\xA9\xE2\x96\x81que\xF0\x9F\x98\x80!a" + fffd + "b" + fffd + fffd + fffd + fffd + fffd);
}
