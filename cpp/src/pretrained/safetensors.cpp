// The safetensors format (huggingface/safetensors, docs/source/index.mdx "Format"): 8 bytes of
// little-endian header length N, N bytes of JSON {name: {dtype, shape, data_offsets: [begin, end]},
// "__metadata__": {...}}, then the data section; offsets are relative to its start. Everything is
// checked here before a caller allocates anything for the tensors.
#include <algorithm>

#include "attnlab/error.hpp"
#include "attnlab/pretrained.hpp"
#include "json.hpp"

namespace attnlab::pretrained {
namespace {

constexpr uint64_t kMaxHeader = 100u << 20;  // the reference implementation's own limit
constexpr int kMaxRank = 8;

uint64_t dtype_size(const std::string& d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

}  // namespace

const TensorEntry* SafetensorsIndex::find(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

uint64_t safetensors_header_length(const uint8_t* b, uint64_t file_size) {
  require(file_size >= 8, [&] {
    return "safetensors: the file has " + std::to_string(file_size) + " bytes, fewer than the 8-byte header length";
  });
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | b[i];
  require(n >= 2 && n <= kMaxHeader && n <= file_size - 8, [&] {
    return "safetensors: header length " + std::to_string(n) + " does not fit the file (" + std::to_string(file_size) +
           " bytes; at most 100 MB of header)";
  });
  return n;
}

SafetensorsIndex parse_safetensors_header(const char* header, uint64_t n, uint64_t file_size) {
  require(n + 8 <= file_size, [&] { return std::string("safetensors: header runs past the end of the file"); });
  const Json root = parse_json(header, n, "safetensors header");
  require(root.kind == Json::Object, [] { return std::string("safetensors header: expected a JSON object"); });
  SafetensorsIndex ix;
  ix.data_start = 8 + n;
  ix.data_size = file_size - ix.data_start;
  for (const auto& [name, v] : root.members) {
    if (name == "__metadata__") continue;
    const std::string at = "safetensors: tensor '" + name + "'";
    require(v.kind == Json::Object, [&] { return at + ": expected an object"; });
    require(!ix.find(name), [&] { return at + ": named twice"; });
    const Json* dt = v.get("dtype");
    const Json* sh = v.get("shape");
    const Json* off = v.get("data_offsets");
    require(dt && dt->kind == Json::String && sh && sh->kind == Json::Array && off && off->kind == Json::Array,
            [&] { return at + ": needs dtype (string), shape and data_offsets (arrays)"; });
    TensorEntry t;
    t.name = name;
    t.dtype = dt->str;
    t.dt = t.dtype == "F32" ? Dtype::F32 : t.dtype == "F16" ? Dtype::F16 : t.dtype == "BF16" ? Dtype::BF16 : Dtype::Other;
    const uint64_t esize = dtype_size(t.dtype);
    require(esize > 0, [&] { return at + ": unknown dtype '" + t.dtype + "'"; });
    require(sh->items.size() <= kMaxRank, [&] { return at + ": rank " + std::to_string(sh->items.size()) + " above 8"; });
    uint64_t count = 1;
    for (const Json& d : sh->items) {
      require(d.is_uint(), [&] { return at + ": shape entries must be non-negative integers"; });
      const uint64_t e = d.as_uint();
      // Bounded by the file: no product can overflow before it is compared.
      require(e <= file_size && (e == 0 || count <= file_size / e), [&] { return at + ": shape larger than the file"; });
      count *= e;
      t.shape.push_back(static_cast<int64_t>(e));
    }
    require(off->items.size() == 2 && off->items[0].is_uint() && off->items[1].is_uint(),
            [&] { return at + ": data_offsets must be [begin, end]"; });
    t.begin = off->items[0].as_uint();
    t.end = off->items[1].as_uint();
    require(t.begin <= t.end && t.end <= ix.data_size, [&] {
      return at + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
             "] run past the data section (" + std::to_string(ix.data_size) + " bytes): truncated file?";
    });
    require(t.end - t.begin == count * esize, [&] {
      return at + ": " + std::to_string(t.end - t.begin) + " bytes for " + t.dtype + " " + to_string(t.shape) +
             " (expected " + std::to_string(count * esize) + ")";
    });
    ix.tensors.push_back(std::move(t));
  }
  std::vector<const TensorEntry*> order;
  for (const auto& t : ix.tensors) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const TensorEntry* a, const TensorEntry* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < order.size(); ++i)
    require(order[i]->begin >= order[i - 1]->end || order[i - 1]->begin == order[i - 1]->end, [&] {
      return "safetensors: tensors '" + order[i - 1]->name + "' and '" + order[i]->name + "' overlap";
    });
  return ix;
}

}  // namespace attnlab::pretrained
