#include "attnlab/nn/tokenizer.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "attnlab/error.hpp"

namespace attnlab::nn {

namespace {
#include "unicode_tables.inc"

constexpr char32_t kMarker = 0x2581;  // ▁

bool is_mark(char32_t c) { return (c >= 0x0300 && c <= 0x036F) || (c >= 0x1AB0 && c <= 0x1AFF) || (c >= 0x20D0 && c <= 0x20FF); }

char32_t compose(char32_t a, char32_t b) {
  const size_t n = sizeof(kCompose) / sizeof(kCompose[0]);
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    const auto& e = kCompose[mid];
    if (e[0] < a || (e[0] == a && e[1] < b)) lo = mid + 1;
    else hi = mid;
  }
  if (lo < n && kCompose[lo][0] == a && kCompose[lo][1] == b) return kCompose[lo][2];
  return 0;
}

const std::unordered_map<char32_t, std::pair<char32_t, char32_t>>& decomp_map() {
  static const auto m = [] {
    std::unordered_map<char32_t, std::pair<char32_t, char32_t>> d;
    for (const auto& e : kCompose) d[e[2]] = {e[0], e[1]};
    return d;
  }();
  return m;
}

void decompose_into(char32_t c, std::u32string& out) {
  const auto& d = decomp_map();
  auto it = d.find(c);
  if (it == d.end()) {
    out.push_back(c);
    return;
  }
  decompose_into(it->second.first, out);
  out.push_back(it->second.second);
}

char32_t lower(char32_t c) {
  if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
  const size_t n = sizeof(kLower) / sizeof(kLower[0]);
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = (lo + hi) / 2;
    if (kLower[mid][0] < c) lo = mid + 1;
    else hi = mid;
  }
  return (lo < n && kLower[lo][0] == c) ? kLower[lo][1] : c;
}

bool is_space(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == 0x00A0 || c == 0x202F ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x3000 || c == 0x205F || c == 0x1680 || c == 0x85;
}

bool is_punct(char32_t c) {
  if (c < 0x80) return (c >= 0x21 && c <= 0x2F && c != '\'' && c != '-') || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) || (c >= 0x7B && c <= 0x7E);
  return c == 0xA1 || c == 0xBF || c == 0xAB || c == 0xBB || c == 0xA7 || c == 0xB6 || c == 0xB7 || (c >= 0x2010 && c <= 0x205E) || (c >= 0x3000 && c <= 0x303F);
}
}  // namespace

std::u32string utf8_decode(const std::string& s) {
  std::u32string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    int len = 0;
    char32_t cp = 0;
    if (c < 0x80) { cp = c; len = 1; }
    else if ((c >> 5) == 6) { cp = c & 0x1F; len = 2; }
    else if ((c >> 4) == 14) { cp = c & 0x0F; len = 3; }
    else if ((c >> 3) == 30) { cp = c & 0x07; len = 4; }
    else { out.push_back(0xFFFD); ++i; continue; }
    if (i + len > s.size()) { out.push_back(0xFFFD); ++i; continue; }
    bool ok = true;
    for (int k = 1; k < len; ++k) {
      const unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 2) { ok = false; break; }
      cp = (cp << 6) | (cc & 0x3F);
    }
    const char32_t minv[] = {0, 0, 0x80, 0x800, 0x10000};
    if (!ok || cp < minv[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) { out.push_back(0xFFFD); ++i; continue; }
    out.push_back(cp);
    i += len;
  }
  return out;
}

std::string utf8_encode(char32_t c) {
  std::string o;
  if (c < 0x80) o.push_back(static_cast<char>(c));
  else if (c < 0x800) { o.push_back(static_cast<char>(0xC0 | (c >> 6))); o.push_back(static_cast<char>(0x80 | (c & 0x3F))); }
  else if (c < 0x10000) { o.push_back(static_cast<char>(0xE0 | (c >> 12))); o.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F))); o.push_back(static_cast<char>(0x80 | (c & 0x3F))); }
  else { o.push_back(static_cast<char>(0xF0 | (c >> 18))); o.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F))); o.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F))); o.push_back(static_cast<char>(0x80 | (c & 0x3F))); }
  return o;
}

std::string utf8_encode(const std::u32string& s) {
  std::string o;
  for (char32_t c : s) o += utf8_encode(c);
  return o;
}

std::u32string normalize(const std::string& text) {
  // 1. fold typographic variants, 2. full canonical decomposition, 3. lowercase, 4. compose.
  std::u32string d;
  for (char32_t c : utf8_decode(text)) {
    if (c == 0x200B || c == 0x200C || c == 0x200D || c == 0xFEFF || c == 0xAD) continue;
    if (is_space(c)) c = ' ';
    else if (c == 0x2018 || c == 0x2019 || c == 0x201B || c == 0x02BC || c == 0x2032 || c == 0x60 || c == 0xB4) c = '\'';
    else if (c == 0x201C || c == 0x201D || c == 0x201E || c == 0xAB || c == 0xBB || c == 0x2033) c = '"';
    else if (c == 0x2010 || c == 0x2011 || c == 0x2012 || c == 0x2013 || c == 0x2014 || c == 0x2212) c = '-';
    else if (c == 0x2026) { d += U"..."; continue; }
    decompose_into(c, d);
  }
  std::u32string out;
  out.reserve(d.size());
  for (char32_t c : d) {
    c = lower(c);
    if (is_mark(c) && !out.empty()) {
      // Compose with the last starter when no uncomposed mark sits between them.
      const char32_t last = out.back();
      const char32_t comp = is_mark(last) ? 0 : compose(last, c);
      if (comp) { out.back() = comp; continue; }
    }
    out.push_back(c);
  }
  return out;
}

std::vector<std::string> pre_tokenize(const std::string& text) {
  std::vector<std::string> words;
  std::u32string cur;
  auto flush = [&] {
    if (!cur.empty()) words.push_back(utf8_encode(cur));
    cur.clear();
  };
  for (char32_t c : normalize(text)) {
    if (c == ' ') flush();
    else if (is_punct(c)) { flush(); words.push_back(utf8_encode(c)); }
    else cur.push_back(c);
  }
  flush();
  return words;
}

std::vector<std::string> bleu_tokens(const std::string& text) {
  std::u32string d;
  for (char32_t c : normalize(text)) decompose_into(c, d);
  std::string s;
  for (char32_t c : d) {
    if (is_mark(c)) continue;
    if (c >= 'a' && c <= 'z') s.push_back(static_cast<char>(c));
    else if (c == '.' || c == '!' || c == '?') { s.push_back(' '); s.push_back(static_cast<char>(c)); s.push_back(' '); }
    else s.push_back(' ');
  }
  std::vector<std::string> out;
  std::string w;
  for (char ch : s) {
    if (ch == ' ') { if (!w.empty()) out.push_back(w); w.clear(); }
    else w.push_back(ch);
  }
  if (!w.empty()) out.push_back(w);
  return out;
}

std::string detokenize(const std::vector<std::string>& words, const std::string& lang) {
  const bool fr = lang == "fr";
  std::string out;
  bool no_space_next = true;
  for (const std::string& w : words) {
    const bool closing = w == "." || w == "," || w == ")" || w == "]" || w == "%" || w == "...";
    const bool high = w == "!" || w == "?" || w == ";" || w == ":";
    const bool opening = w == "(" || w == "[" || w == "¿" || w == "¡";
    bool space = !no_space_next && !closing && !(high && !fr);
    if (!out.empty() && out.back() == '-' && w != "-") space = false;  // keep "-" joins as typed
    if (w == "-" && !out.empty()) space = false;
    if (space) out.push_back(' ');
    out += w;
    no_space_next = opening || w == "-";
  }
  // Quotes: attach a '"' to the following word when it opens, to the previous one when it closes.
  std::string q;
  bool open = false;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '"') {
      if (!open) {
        q.push_back('"');
        if (i + 1 < out.size() && out[i + 1] == ' ') ++i;
      } else {
        if (!q.empty() && q.back() == ' ') q.pop_back();
        q.push_back('"');
      }
      open = !open;
    } else {
      q.push_back(out[i]);
    }
  }
  out = q;
  if (!fr) {  // English "i" -> "I"
    std::string r;
    for (size_t i = 0; i < out.size(); ++i) {
      const bool start = i == 0 || out[i - 1] == ' ' || out[i - 1] == '"';
      const bool end = i + 1 == out.size() || out[i + 1] == ' ' || out[i + 1] == '\'' || out[i + 1] == '.' ||
                       out[i + 1] == ',' || out[i + 1] == '!' || out[i + 1] == '?';
      r.push_back(out[i] == 'i' && start && end ? 'I' : out[i]);
    }
    out = r;
  }
  // Capitalise the first letter (accented too, via the lowercase table in reverse).
  std::u32string u = utf8_decode(out);
  for (char32_t& c : u) {
    if (c == '"' || c == '(' || c == 0xBF || c == 0xA1 || c == ' ') continue;
    if (c >= 'a' && c <= 'z') c -= 32;
    else
      for (const auto& e : kLower)
        if (e[1] == c && e[0] >= 0xC0) { c = e[0]; break; }
    break;
  }
  return utf8_encode(u);
}

// ---------------------------------------------------------------- BPE

namespace {
std::string byte_token(int b) {
  static const char* hex = "0123456789ABCDEF";
  std::string s = "<0x";
  s.push_back(hex[b >> 4]);
  s.push_back(hex[b & 15]);
  s.push_back('>');
  return s;
}
uint64_t key(int a, int b) { return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b); }
}  // namespace

void Bpe::index() {
  tok2id_.clear();
  rank_.clear();
  for (int i = 0; i < size(); ++i) tok2id_.emplace(tokens_[i], i);
  // encode_word starts a word whose first character has no "▁c" token with the bare marker.
  const auto marker = tok2id_.find(utf8_encode(kMarker));
  require(marker != tok2id_.end(), [] { return std::string("BPE: vocabulary lacks the word-start marker token"); });
  marker_id_ = marker->second;
  for (int r = 0; r < static_cast<int>(merges_.size()); ++r) {
    const auto [a, b] = merges_[r];
    auto it = tok2id_.find(tokens_[a] + tokens_[b]);
    require(it != tok2id_.end(), [&] { return "BPE: merge " + std::to_string(r) + " makes a token the vocabulary lacks"; });
    rank_.emplace(key(a, b), std::make_pair(r, it->second));
  }
}

Bpe Bpe::from_parts(std::vector<std::string> tokens, std::vector<std::pair<int, int>> merges) {
  require(tokens.size() >= kFirstSymbol, [] { return std::string("BPE: vocabulary smaller than its reserved tokens"); });
  for (int i = 0; i < 256; ++i)
    require(tokens[kByte0 + i] == byte_token(i), [] { return std::string("BPE: byte tokens out of place"); });
  for (const auto& [a, b] : merges)
    require(a >= kFirstSymbol && b >= kFirstSymbol && a < static_cast<int>(tokens.size()) && b < static_cast<int>(tokens.size()),
            [] { return std::string("BPE: merge refers to a token out of range"); });
  Bpe bpe;
  bpe.tokens_ = std::move(tokens);
  bpe.merges_ = std::move(merges);
  bpe.index();
  return bpe;
}

std::vector<int> Bpe::encode_word(const std::u32string& word) const {
  // Initial symbols: "▁c0", c1, c2, ...; characters outside the vocabulary become byte tokens.
  std::vector<int> ids;
  for (size_t i = 0; i < word.size(); ++i) {
    std::string s = (i == 0 ? utf8_encode(kMarker) : std::string()) + utf8_encode(word[i]);
    auto it = tok2id_.find(s);
    if (it != tok2id_.end()) { ids.push_back(it->second); continue; }
    if (i == 0) ids.push_back(marker_id_);
    const std::string bytes = utf8_encode(word[i]);
    auto it2 = tok2id_.find(bytes);
    if (it2 != tok2id_.end()) { ids.push_back(it2->second); continue; }
    for (unsigned char b : bytes) ids.push_back(kByte0 + b);
  }
  while (ids.size() > 1) {
    int best = -1, best_rank = 0, best_id = 0;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      auto it = rank_.find(key(ids[i], ids[i + 1]));
      if (it != rank_.end() && (best < 0 || it->second.first < best_rank)) {
        best = static_cast<int>(i);
        best_rank = it->second.first;
        best_id = it->second.second;
      }
    }
    if (best < 0) break;
    ids[best] = best_id;
    ids.erase(ids.begin() + best + 1);
  }
  return ids;
}

std::vector<int> Bpe::encode(const std::string& text) const {
  std::vector<int> out;
  for (const std::string& w : pre_tokenize(text)) {
    const auto ids = encode_word(utf8_decode(w));
    out.insert(out.end(), ids.begin(), ids.end());
  }
  return out;
}

std::string Bpe::piece(int id) const {
  if (id < 0 || id >= size()) return "<?>";
  return tokens_[id];
}

std::vector<std::string> Bpe::words(const std::vector<int>& ids) const {
  const std::string marker = utf8_encode(kMarker);
  std::string bytes;
  for (int id : ids) {
    if (id < kByte0 || id >= size()) continue;
    if (id < kFirstSymbol) bytes.push_back(static_cast<char>(id - kByte0));
    else bytes += tokens_[id];
  }
  // Split at word markers, then clean up invalid UTF-8 from stray byte tokens.
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < bytes.size()) {
    size_t next = bytes.find(marker, pos);
    if (next == pos) { pos += marker.size(); continue; }
    if (next == std::string::npos) next = bytes.size();
    out.push_back(utf8_encode(utf8_decode(bytes.substr(pos, next - pos))));
    pos = next;
  }
  return out;
}

std::string Bpe::decode(const std::vector<int>& ids, const std::string& lang) const {
  return detokenize(words(ids), lang);
}

Bpe Bpe::learn(const std::vector<std::string>& sentences, int vocab_size, int min_char_count) {
  std::map<std::u32string, int64_t> word_counts;  // ordered: deterministic
  for (const auto& s : sentences)
    for (const auto& w : pre_tokenize(s)) word_counts[utf8_decode(w)]++;
  // Initial symbol strings and their frequencies.
  std::map<std::string, int64_t> sym_count;
  for (const auto& [w, n] : word_counts)
    for (size_t i = 0; i < w.size(); ++i) {
      sym_count[(i == 0 ? utf8_encode(kMarker) : std::string()) + utf8_encode(w[i])] += n;
      sym_count[utf8_encode(w[i])] += 0;
    }
  std::vector<std::string> tokens = {"<pad>", "<bos>", "<eos>", "<unk>"};
  for (int b = 0; b < 256; ++b) tokens.push_back(byte_token(b));
  tokens.push_back(utf8_encode(kMarker));
  for (const auto& [s, n] : sym_count)
    if (n >= min_char_count) tokens.push_back(s);
  Bpe bpe;
  bpe.tokens_ = tokens;
  bpe.index();

  std::vector<std::vector<int>> words;
  std::vector<int64_t> counts;
  for (const auto& [w, n] : word_counts) {
    words.push_back(bpe.encode_word(w));
    counts.push_back(n);
  }
  std::unordered_map<uint64_t, int64_t> pc;
  std::unordered_map<uint64_t, std::vector<int>> where;
  auto add_pairs = [&](int wi, int64_t sign) {
    const auto& w = words[wi];
    for (size_t i = 0; i + 1 < w.size(); ++i) {
      if (w[i] < kFirstSymbol || w[i + 1] < kFirstSymbol) continue;
      const uint64_t k = key(w[i], w[i + 1]);
      pc[k] += sign * counts[wi];
      if (sign > 0) where[k].push_back(wi);
    }
  };
  for (int wi = 0; wi < static_cast<int>(words.size()); ++wi) add_pairs(wi, 1);
  while (static_cast<int>(bpe.tokens_.size()) < vocab_size) {
    uint64_t best = 0;
    int64_t best_n = 1;  // a pair must occur at least twice
    for (const auto& [k, n] : pc)
      if (n > best_n || (n == best_n && n > 1 && k < best)) { best = k; best_n = n; }
    if (best_n < 2) break;
    const int a = static_cast<int>(best >> 32), b = static_cast<int>(best & 0xFFFFFFFFu);
    const int id = static_cast<int>(bpe.tokens_.size());
    bpe.tokens_.push_back(bpe.tokens_[a] + bpe.tokens_[b]);
    bpe.merges_.emplace_back(a, b);
    std::vector<int> ws = std::move(where[best]);
    where.erase(best);
    std::sort(ws.begin(), ws.end());
    ws.erase(std::unique(ws.begin(), ws.end()), ws.end());
    for (int wi : ws) {
      auto& w = words[wi];
      bool has = false;
      for (size_t i = 0; i + 1 < w.size(); ++i) has = has || (w[i] == a && w[i + 1] == b);
      if (!has) continue;
      add_pairs(wi, -1);
      std::vector<int> nw;
      for (size_t i = 0; i < w.size(); ++i) {
        if (i + 1 < w.size() && w[i] == a && w[i + 1] == b) { nw.push_back(id); ++i; }
        else nw.push_back(w[i]);
      }
      w = std::move(nw);
      add_pairs(wi, 1);
    }
    pc.erase(best);
  }
  // Tokens may repeat as strings (two merge paths to one string): keep the first id for encoding.
  bpe.index();
  return bpe;
}

}  // namespace attnlab::nn
