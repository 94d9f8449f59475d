#include "attnlab/nn/weights.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "attnlab/error.hpp"
#include "attnlab/nn/gemm.hpp"
#include "kernels.hpp"

namespace attnlab::nn {

namespace {
const char kMagic[8] = {'A', 'T', 'L', 'N', 'M', 'D', 'L', '\0'};

struct Writer {
  std::vector<uint8_t> b;
  template <class U>
  void put(U x) {
    uint8_t tmp[sizeof(U)];
    std::memcpy(tmp, &x, sizeof(U));
    b.insert(b.end(), tmp, tmp + sizeof(U));
  }
  void bytes(const void* p, size_t n) { b.insert(b.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n); }
  void str16(const std::string& s) {
    put<uint16_t>(static_cast<uint16_t>(s.size()));
    bytes(s.data(), s.size());
  }
  void align(size_t a) {
    while (b.size() % a) b.push_back(0);
  }
};

struct Reader {
  const uint8_t* p;
  size_t n, pos = 0;
  std::string where;
  void need(size_t k) {
    if (k > n - pos) throw Error("model file: truncated or corrupt " + where + " (needs " + std::to_string(k) + " bytes at offset " + std::to_string(pos) + ", file has " + std::to_string(n) + ")");
  }
  template <class U>
  U get() {
    need(sizeof(U));
    U x;
    std::memcpy(&x, p + pos, sizeof(U));
    pos += sizeof(U);
    return x;
  }
  std::string str(size_t k) {
    need(k);
    std::string s(reinterpret_cast<const char*>(p + pos), k);
    pos += k;
    return s;
  }
};

uint16_t f32_to_f16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xFF) - 127 + 15;
  uint32_t mant = x & 0x7FFFFF;
  if (exp >= 31) return static_cast<uint16_t>(sign | 0x7C00);
  if (exp <= 0) {
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000;
    const int shift = 14 - exp;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(exp) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF, x;
  if (exp == 0) {
    if (mant == 0) x = sign;
    else {
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) { mant <<= 1; --exp; }
      x = sign | (exp << 23) | ((mant & 0x3FF) << 13);
    }
  } else if (exp == 31) x = sign | 0x7F800000 | (mant << 13);
  else x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

size_t tensor_bytes(DType dt, uint64_t rows, uint64_t cols) {
  switch (dt) {
    case DType::F32: return rows * cols * 4;
    case DType::F16: return rows * cols * 2;
    case DType::I8: return rows * 4 + rows * cols;
  }
  return 0;
}

void put_vocab(Writer& w, const Bpe& b) {
  w.put<uint32_t>(static_cast<uint32_t>(b.tokens().size()));
  for (const auto& t : b.tokens()) w.str16(t);
  w.put<uint32_t>(static_cast<uint32_t>(b.merges().size()));
  for (const auto& [a, c] : b.merges()) {
    w.put<uint32_t>(static_cast<uint32_t>(a));
    w.put<uint32_t>(static_cast<uint32_t>(c));
  }
}

Bpe get_vocab(Reader& r, const char* which) {
  r.where = std::string(which) + " vocabulary";
  const uint32_t n = r.get<uint32_t>();
  if (n < Bpe::kFirstSymbol || n > (1u << 20)) throw Error("model file: " + std::string(which) + " vocabulary size " + std::to_string(n) + " out of range");
  std::vector<std::string> toks;
  toks.reserve(n);
  for (uint32_t i = 0; i < n; ++i) toks.push_back(r.str(r.get<uint16_t>()));
  const uint32_t m = r.get<uint32_t>();
  r.need(static_cast<size_t>(m) * 8);
  std::vector<std::pair<int, int>> merges;
  merges.reserve(m);
  for (uint32_t i = 0; i < m; ++i) {
    const uint32_t a = r.get<uint32_t>(), b = r.get<uint32_t>();
    if (a >= n || b >= n) throw Error("model file: " + std::string(which) + " vocabulary merge refers to token " + std::to_string(std::max(a, b)) + " of " + std::to_string(n));
    merges.emplace_back(static_cast<int>(a), static_cast<int>(b));
  }
  try {
    return Bpe::from_parts(std::move(toks), std::move(merges));
  } catch (const Error& e) {
    throw Error(std::string("model file: ") + which + " vocabulary: " + e.what());
  }
}
}  // namespace

uint32_t crc32(const uint8_t* data, size_t n, uint32_t crc) {
  static const auto table = [] {
    std::vector<uint32_t> t(256);
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

std::vector<uint8_t> save_model(const Model& m, const Bpe& src, const Bpe& tgt, DType dtype) {
  Writer w;
  w.bytes(kMagic, 8);
  w.put<uint32_t>(kFormatVersion);
  w.put<uint32_t>(0);
  w.put<uint64_t>(0);  // patched below
  const std::string cfg = m.cfg.serialize();
  w.put<uint32_t>(static_cast<uint32_t>(cfg.size()));
  w.bytes(cfg.data(), cfg.size());
  put_vocab(w, src);
  put_vocab(w, tgt);
  struct Entry {
    const Param* p;
    DType dt;
    size_t off_pos, nbytes;
  };
  std::vector<Entry> es;
  w.put<uint32_t>(static_cast<uint32_t>(m.params.size()));
  for (const auto& p : m.params) {
    w.str16(p->name);
    const DType dt = p->shape.size() == 2 ? dtype : DType::F32;
    w.put<uint8_t>(static_cast<uint8_t>(dt));
    w.put<uint8_t>(static_cast<uint8_t>(p->shape.size()));
    for (int64_t d : p->shape) w.put<uint32_t>(static_cast<uint32_t>(d));
    const size_t off_pos = w.b.size();
    w.put<uint64_t>(0);
    const size_t nb = tensor_bytes(dt, p->t.r, p->t.c);
    w.put<uint64_t>(nb);
    es.push_back({p.get(), dt, off_pos, nb});
  }
  for (auto& e : es) {
    w.align(16);
    const uint64_t off = w.b.size();
    std::memcpy(w.b.data() + e.off_pos, &off, 8);
    const auto& v = e.p->t.v;
    const int64_t R = e.p->t.r, C = e.p->t.c;
    if (e.dt == DType::F32) w.bytes(v.data(), v.size() * 4);
    else if (e.dt == DType::F16)
      for (float x : v) w.put<uint16_t>(f32_to_f16(x));
    else {
      std::vector<float> scales(R);
      for (int64_t r = 0; r < R; ++r) {
        float mx = 0.f;
        for (int64_t c = 0; c < C; ++c) mx = std::max(mx, std::fabs(v[r * C + c]));
        scales[r] = mx > 0.f ? mx / 127.f : 1.f;
      }
      w.bytes(scales.data(), scales.size() * 4);
      for (int64_t r = 0; r < R; ++r)
        for (int64_t c = 0; c < C; ++c)
          w.put<int8_t>(static_cast<int8_t>(std::lround(std::clamp(v[r * C + c] / scales[r], -127.f, 127.f))));
    }
  }
  const uint64_t total = w.b.size() + 4;
  std::memcpy(w.b.data() + 16, &total, 8);
  w.put<uint32_t>(crc32(w.b.data(), w.b.size()));
  return w.b;
}

LoadedModel load_model(const uint8_t* data, size_t size) {
  if (!data || size < 32) throw Error("model file: too small to be an attnlab model (" + std::to_string(size) + " bytes)");
  if (std::memcmp(data, kMagic, 8) != 0) throw Error("model file: bad magic number (not an attnlab model file)");
  Reader r{data, size - 4, 8, "header"};
  const uint32_t version = r.get<uint32_t>();
  if (version != kFormatVersion)
    throw Error("model file: format version " + std::to_string(version) + " is not supported (this build reads version " + std::to_string(kFormatVersion) + ")");
  r.get<uint32_t>();  // flags
  const uint64_t declared = r.get<uint64_t>();
  if (declared != size) throw Error("model file: truncated or padded: header says " + std::to_string(declared) + " bytes, got " + std::to_string(size));
  uint32_t stored;
  std::memcpy(&stored, data + size - 4, 4);
  const uint32_t actual = crc32(data, size - 4);
  if (stored != actual) throw Error("model file: checksum mismatch (stored " + std::to_string(stored) + ", computed " + std::to_string(actual) + "): the file is corrupt");
  r.where = "config";
  const uint32_t clen = r.get<uint32_t>();
  if (clen > 65536) throw Error("model file: config length " + std::to_string(clen) + " out of range");
  ModelConfig cfg = ModelConfig::parse(r.str(clen));
  Bpe src = get_vocab(r, "source");
  Bpe tgt = get_vocab(r, "target");
  if (cfg.geti("src_vocab") != src.size() || cfg.geti("tgt_vocab") != tgt.size())
    throw Error("model file: config vocabulary sizes do not match the stored vocabularies");

  r.where = "tensor table";
  const uint32_t nt = r.get<uint32_t>();
  if (nt > 4096) throw Error("model file: " + std::to_string(nt) + " tensors is out of range");
  struct Entry {
    std::string name;
    DType dt;
    std::vector<int64_t> dims;
    uint64_t off, nbytes;
  };
  std::vector<Entry> es;
  std::set<std::string> names;
  const uint64_t data_end = size - 4;
  for (uint32_t i = 0; i < nt; ++i) {
    Entry e;
    e.name = r.str(r.get<uint16_t>());
    const uint8_t dt = r.get<uint8_t>(), nd = r.get<uint8_t>();
    if (dt > 2) throw Error("model file: tensor '" + e.name + "': unknown dtype " + std::to_string(dt));
    e.dt = static_cast<DType>(dt);
    if (nd < 1 || nd > 2) throw Error("model file: tensor '" + e.name + "': " + std::to_string(nd) + " dimensions (expected 1 or 2)");
    uint64_t numel = 1;
    for (int k = 0; k < nd; ++k) {
      const uint32_t d = r.get<uint32_t>();
      if (d == 0 || d > (1u << 24)) throw Error("model file: tensor '" + e.name + "': dimension " + std::to_string(d) + " out of range");
      numel *= d;
      if (numel > (1ull << 28)) throw Error("model file: tensor '" + e.name + "': too many elements");
      e.dims.push_back(d);
    }
    e.off = r.get<uint64_t>();
    e.nbytes = r.get<uint64_t>();
    const uint64_t rows = nd == 1 ? 1 : e.dims[0], cols = nd == 1 ? e.dims[0] : e.dims[1];
    if (e.nbytes != tensor_bytes(e.dt, rows, cols))
      throw Error("model file: tensor '" + e.name + "': " + std::to_string(e.nbytes) + " bytes does not match its shape and dtype");
    if (!names.insert(e.name).second) throw Error("model file: tensor '" + e.name + "' appears twice");
    es.push_back(std::move(e));
  }
  const uint64_t header_end = r.pos;
  std::vector<std::pair<uint64_t, uint64_t>> spans;
  for (const auto& e : es) {
    if (e.off < header_end || e.off > data_end || e.nbytes > data_end - e.off || e.off % 4)
      throw Error("model file: tensor '" + e.name + "': data [" + std::to_string(e.off) + ", +" + std::to_string(e.nbytes) + ") outside the data area");
    spans.emplace_back(e.off, e.off + e.nbytes);
  }
  std::sort(spans.begin(), spans.end());
  for (size_t i = 1; i < spans.size(); ++i)
    if (spans[i].first < spans[i - 1].second) throw Error("model file: tensor data overlaps");

  // The config must imply exactly this table. Building the model allocates; check the config's
  // sizes first so a forged config cannot ask for huge allocations.
  const int64_t d = cfg.geti("d"), ffn = cfg.geti("ffn", 0), layers = cfg.geti("layers", 1);
  if (d <= 0 || d > 4096 || ffn < 0 || ffn > 16384 || layers <= 0 || layers > 32 || cfg.geti("heads", 1) <= 0 || cfg.geti("max_len", 64) > 4096)
    throw Error("model file: config dimensions out of range");
  uint64_t stored_elems = 0;
  for (const auto& e : es) stored_elems += e.dims.size() == 1 ? e.dims[0] : e.dims[0] * e.dims[1];
  LoadedModel lm;
  try {
    lm.model = make_model(cfg);
  } catch (const Error& e) {
    throw Error(std::string("model file: ") + e.what());
  }
  if (static_cast<uint64_t>(lm.model->num_params()) != stored_elems || lm.model->params.size() != es.size())
    throw Error("model file: the tensor table does not match the model the config describes");
  for (const auto& e : es) {
    Param* p = lm.model->find(e.name);
    if (!p) throw Error("model file: unexpected tensor '" + e.name + "' for arch " + cfg.get("arch"));
    if (p->shape != e.dims) throw Error("model file: tensor '" + e.name + "' has the wrong shape for this config");
    const uint8_t* src_p = data + e.off;
    auto& v = p->t.v;
    const int64_t R = p->t.r, C = p->t.c;
    if (e.dt == DType::F32) std::memcpy(v.data(), src_p, v.size() * 4);
    else if (e.dt == DType::F16)
      for (size_t i = 0; i < v.size(); ++i) {
        uint16_t h;
        std::memcpy(&h, src_p + 2 * i, 2);
        v[i] = f16_to_f32(h);
      }
    else {
      Tensor& t = p->t;
      t.q8_stride = (C + 15) / 16 * 16;
      std::vector<int8_t> rows(static_cast<size_t>(R * t.q8_stride), 0);
      t.q8_scale.resize(static_cast<size_t>(R));
      for (int64_t row = 0; row < R; ++row) {
        float s;
        std::memcpy(&s, src_p + 4 * row, 4);
        const int8_t* q = reinterpret_cast<const int8_t*>(src_p + 4 * R + row * C);
        for (int64_t c = 0; c < C; ++c) v[row * C + c] = s * static_cast<float>(q[c]);
        std::memcpy(rows.data() + row * t.q8_stride, q, static_cast<size_t>(C));
        t.q8_scale[row] = s;
      }
      t.q8_quads = q8_quads();
      const kernels::Q8Layout layout{R, t.q8_stride, t.q8_quads};
      t.q8.resize(static_cast<size_t>(layout.size()));
      layout.pack(rows.data(), t.q8.data());
    }
    for (float x : v)
      if (!std::isfinite(x)) throw Error("model file: tensor '" + e.name + "' holds a non-finite value");
  }
  lm.model->weights_loaded();
  lm.src = std::move(src);
  lm.tgt = std::move(tgt);
  return lm;
}

Tensor stack_q8(const std::vector<const Tensor*>& ws) {
  require(!ws.empty(), [] { return std::string("stack_q8: no weights"); });
  const Tensor& w0 = *ws[0];
  Tensor s;
  s.c = w0.c;
  s.q8_stride = w0.q8_stride;
  s.q8_quads = w0.q8_quads;
  for (const Tensor* w : ws) {
    require(!w->q8.empty() && w->c == s.c && w->q8_stride == s.q8_stride && w->q8_quads == s.q8_quads,
            [] { return std::string("stack_q8: weights of different columns or layouts"); });
    s.r += w->r;
  }
  std::vector<int8_t> rows(static_cast<size_t>(s.r * s.q8_stride));
  int64_t m = 0;
  for (const Tensor* w : ws) {
    const kernels::Q8Layout from{w->r, w->q8_stride, w->q8_quads};
    for (int64_t i = 0; i < w->r; ++i, ++m)
      for (int64_t k = 0; k < s.q8_stride; ++k) rows[m * s.q8_stride + k] = from.at(w->q8.data(), i, k);
    s.q8_scale.insert(s.q8_scale.end(), w->q8_scale.begin(), w->q8_scale.end());
  }
  const kernels::Q8Layout layout{s.r, s.q8_stride, s.q8_quads};
  s.q8.resize(static_cast<size_t>(layout.size()));
  layout.pack(rows.data(), s.q8.data());
  return s;
}

}  // namespace attnlab::nn
