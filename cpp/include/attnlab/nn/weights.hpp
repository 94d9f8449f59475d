// The model file: one file per model, little-endian.
//
//   0  magic "ATLNMDL\0"            8 bytes
//   8  format version (u32) = 1, flags (u32) = 0
//  16  total file size (u64)
//  24  config: u32 length + UTF-8 "key=value\n" lines
//      source vocabulary, then target vocabulary: u32 token count, per token u16 length + bytes;
//        u32 merge count, per merge u32 left id + u32 right id (rank order)
//      tensor table: u32 count, per tensor u16 name length + name, u8 dtype (0 fp32, 1 fp16,
//        2 int8 with per-row fp32 scales), u8 ndim (1 or 2), u32 dims[ndim], u64 offset, u64 bytes
//      tensor data (each 16-byte aligned; int8: rows fp32 scales, then rows x cols int8)
//  end-4  CRC-32 (IEEE) of every preceding byte
//
// load_model() checks size, magic, version, declared size, checksum, every table entry (dtype,
// dims, byte counts, offsets inside the data area, no overlap, names unique) and that the table
// matches the shapes the config implies, all before allocating any parameter.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attnlab/nn/model.hpp"
#include "attnlab/nn/tokenizer.hpp"

namespace attnlab::nn {

constexpr uint32_t kFormatVersion = 1;
enum class DType : uint8_t { F32 = 0, F16 = 1, I8 = 2 };

struct LoadedModel {
  std::unique_ptr<Model> model;
  Bpe src, tgt;
};

// dtype applies to 2-D tensors; vectors (biases, norms) are always fp32.
std::vector<uint8_t> save_model(const Model& m, const Bpe& src, const Bpe& tgt, DType dtype);
LoadedModel load_model(const uint8_t* data, size_t size);
// Int8 weights (Tensor::q8, of equal columns and layout) stacked by rows into one, for one product
// instead of several over the same input: [wq; wk; wv] of a self-attention. Each output's integer
// sum and scale are the same, so the same bits as the separate products. No fp32 values.
Tensor stack_q8(const std::vector<const Tensor*>& ws);
uint32_t crc32(const uint8_t* data, size_t n, uint32_t crc = 0);

}  // namespace attnlab::nn
