#include "json.hpp"

#include <cstdlib>

#include "attnlab/error.hpp"

namespace attnlab::pretrained {
namespace {

constexpr int kMaxDepth = 64;

struct Parser {
  const char* s;
  size_t n, i = 0;
  const std::string& what;

  [[noreturn]] void fail(const std::string& msg) const {
    throw Error(what + ": invalid JSON at byte " + std::to_string(i) + ": " + msg);
  }
  void ws() {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  bool lit(const char* w) {
    size_t k = 0;
    while (w[k]) {
      if (i + k >= n || s[i + k] != w[k]) return false;
      ++k;
    }
    i += k;
    return true;
  }
  static void utf8(std::string& o, uint32_t c) {
    if (c < 0x80) o.push_back(static_cast<char>(c));
    else if (c < 0x800) { o.push_back(static_cast<char>(0xC0 | (c >> 6))); o.push_back(static_cast<char>(0x80 | (c & 63))); }
    else if (c < 0x10000) {
      o.push_back(static_cast<char>(0xE0 | (c >> 12)));
      o.push_back(static_cast<char>(0x80 | ((c >> 6) & 63)));
      o.push_back(static_cast<char>(0x80 | (c & 63)));
    } else {
      o.push_back(static_cast<char>(0xF0 | (c >> 18)));
      o.push_back(static_cast<char>(0x80 | ((c >> 12) & 63)));
      o.push_back(static_cast<char>(0x80 | ((c >> 6) & 63)));
      o.push_back(static_cast<char>(0x80 | (c & 63)));
    }
  }
  uint32_t hex4() {
    if (n - i < 4) fail("truncated \\u escape");
    uint32_t c = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = s[i++];
      c <<= 4;
      if (h >= '0' && h <= '9') c |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') c |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') c |= static_cast<uint32_t>(h - 'A' + 10);
      else fail("bad \\u escape");
    }
    return c;
  }
  std::string string() {
    if (i >= n || s[i] != '"') fail("expected a string");
    ++i;
    std::string o;
    for (;;) {
      if (i >= n) fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(s[i++]);
      if (c == '"') return o;
      if (c < 0x20) fail("control character in string");
      if (c != '\\') { o.push_back(static_cast<char>(c)); continue; }
      if (i >= n) fail("unterminated escape");
      const char e = s[i++];
      switch (e) {
        case '"': o.push_back('"'); break;
        case '\\': o.push_back('\\'); break;
        case '/': o.push_back('/'); break;
        case 'b': o.push_back('\b'); break;
        case 'f': o.push_back('\f'); break;
        case 'n': o.push_back('\n'); break;
        case 'r': o.push_back('\r'); break;
        case 't': o.push_back('\t'); break;
        case 'u': {
          uint32_t c1 = hex4();
          if (c1 >= 0xD800 && c1 < 0xDC00 && n - i >= 6 && s[i] == '\\' && s[i + 1] == 'u') {
            i += 2;
            const uint32_t c2 = hex4();
            if (c2 < 0xDC00 || c2 >= 0xE000) fail("unpaired surrogate");
            c1 = 0x10000 + ((c1 - 0xD800) << 10) + (c2 - 0xDC00);
          } else if (c1 >= 0xD800 && c1 < 0xE000) {
            fail("unpaired surrogate");
          }
          utf8(o, c1);
          break;
        }
        default: fail("bad escape");
      }
    }
  }
  Json value(int depth) {
    if (depth > kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth));
    ws();
    if (i >= n) fail("unexpected end");
    Json v;
    const char c = s[i];
    if (c == '{') {
      v.kind = Json::Object;
      ++i;
      ws();
      if (i < n && s[i] == '}') { ++i; return v; }
      for (;;) {
        ws();
        std::string k = string();
        ws();
        if (i >= n || s[i] != ':') fail("expected ':'");
        ++i;
        v.members.emplace_back(std::move(k), value(depth + 1));
        ws();
        if (i < n && s[i] == ',') { ++i; continue; }
        if (i < n && s[i] == '}') { ++i; return v; }
        fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v.kind = Json::Array;
      ++i;
      ws();
      if (i < n && s[i] == ']') { ++i; return v; }
      for (;;) {
        v.items.push_back(value(depth + 1));
        ws();
        if (i < n && s[i] == ',') { ++i; continue; }
        if (i < n && s[i] == ']') { ++i; return v; }
        fail("expected ',' or ']'");
      }
    }
    if (c == '"') { v.kind = Json::String; v.str = string(); return v; }
    if (lit("true")) { v.kind = Json::Bool; v.b = true; return v; }
    if (lit("false")) { v.kind = Json::Bool; return v; }
    if (lit("null")) return v;
    if (c == '-' || (c >= '0' && c <= '9')) {
      const size_t b = i;
      if (s[i] == '-') ++i;
      while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == 'e' || s[i] == 'E' || s[i] == '+' || s[i] == '-')) ++i;
      v.kind = Json::Number;
      v.str.assign(s + b, i - b);
      char* end = nullptr;
      v.num = std::strtod(v.str.c_str(), &end);
      if (end != v.str.c_str() + v.str.size()) fail("bad number '" + v.str + "'");
      return v;
    }
    fail(std::string("unexpected character '") + c + "'");
  }
};

}  // namespace

const Json* Json::get(const std::string& key) const {
  if (kind != Object) return nullptr;
  for (const auto& m : members)
    if (m.first == key) return &m.second;
  return nullptr;
}

bool Json::is_uint() const {
  if (kind != Number || str.empty() || str.size() > 18) return false;
  for (char c : str)
    if (c < '0' || c > '9') return false;
  return true;
}

uint64_t Json::as_uint() const {
  uint64_t v = 0;
  for (char c : str) v = v * 10 + static_cast<uint64_t>(c - '0');
  return v;
}

Json parse_json(const char* text, size_t n, const std::string& what) {
  Parser p{text, n, 0, what};
  Json v = p.value(0);
  p.ws();
  if (p.i != n) p.fail("trailing characters");
  return v;
}

}  // namespace attnlab::pretrained
