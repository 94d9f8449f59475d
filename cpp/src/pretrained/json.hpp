// A small strict JSON reader for the two texts a checkpoint brings: the safetensors header and
// config.json. Bounded (depth, size checked by callers) and throwing attnlab::Error with the byte
// offset, so a malformed header is an error message, never a crash.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attnlab::pretrained {

struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  bool b = false;
  double num = 0;
  std::string str;  // String's value; Number's source text (integers are re-read exactly from it)
  std::vector<Json> items;                            // Array
  std::vector<std::pair<std::string, Json>> members;  // Object, in file order

  const Json* get(const std::string& key) const;  // null when absent or not an object
  bool is_uint() const;                           // a non-negative integer literal below 2^63
  uint64_t as_uint() const;                       // only when is_uint()
};

// `what` names the text in errors ("safetensors header", "config.json").
Json parse_json(const char* text, size_t n, const std::string& what);

}  // namespace attnlab::pretrained
