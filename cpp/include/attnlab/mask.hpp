// What may hide or bias the score of key j for query i: the masks of the attention calls,
// resolved once per call into broadcast views so the inner loop only does index arithmetic.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "attnlab/shape.hpp"

namespace attnlab {

// A boolean mask broadcast over the scores [lead..., Sq, Sk].
struct BoolMask {
  const uint8_t* data = nullptr;
  Broadcast at;
  bool true_means_blocked = false;  // torch SDPA: true = may attend; nn.MultiheadAttention: true = blocked
};

// A float mask added to the scores (-inf blocks).
struct AdditiveMask {
  const float* data = nullptr;
  Broadcast at;
};

// Per-row key counts (d2l's valid_lens): keys j >= valid_len of the row are hidden.
struct ValidLens {
  const int32_t* data = nullptr;
  std::vector<int64_t> batch_offset;  // per flat leading index
  int64_t row_stride = 0;             // 0: one length for all rows of a slice; 1: one per row
};

struct MaskSet {
  bool causal = false;  // key j visible to query i only if j <= i + query_offset
  // Key position of query row 0 (Sk - Sq for a KV-cached decoder or a chunked prefill): causal
  // and the relative positions (ALiBi, T5, Shaw) read query i as position i + query_offset.
  // 0 is top-left aligned, as torch.
  int64_t query_offset = 0;
  std::vector<BoolMask> bools;
  std::vector<AdditiveMask> additive;
  ValidLens valid_lens;  // data == nullptr when absent

  bool any() const { return causal || !bools.empty() || !additive.empty() || valid_lens.data; }
};

// validLens of length prod(lead[0..j)) for some j (one length per leading prefix, broadcast
// over the rest) or prod(lead) * Sq (one per query row). Checks the values lie in [0, Sk].
ValidLens make_valid_lens(const int32_t* data, int64_t length, const Shape& lead, int64_t Sq,
                          int64_t Sk, const std::string& name);

// Refuses a query_offset outside [0, 2^53] (the integers the bindings can pass), so positions
// such as i + query_offset + 1 never overflow; every op that reads MaskSet calls it.
void check_query_offset(int64_t query_offset);

// Number of keys visible to row i at leading index b before element-wise masks apply.
inline int64_t visible_keys(const MaskSet& m, int64_t b, int64_t i, int64_t Sk) {
  int64_t hi = Sk;
  if (m.causal && i + m.query_offset + 1 < hi) hi = i + m.query_offset + 1;
  if (m.valid_lens.data) {
    const int64_t v = m.valid_lens.data[m.valid_lens.batch_offset[b] + i * m.valid_lens.row_stride];
    if (v < hi) hi = v;
  }
  return hi;
}

// Applies the element-wise masks of row i (leading index b) to the scores of keys [j0, j0 + n),
// s[0] being key j0: blocked keys become -inf, additive masks are added. Sparse kernels score
// a row in several such spans.
void apply_element_masks_span(const MaskSet& m, int64_t b, int64_t i, int64_t j0, float* s,
                              int64_t n);
// The same in double precision, for rows the fused kernel recomputes (flash_attention.cpp).
void apply_element_masks_span(const MaskSet& m, int64_t b, int64_t i, int64_t j0, double* s,
                              int64_t n);

// The same for keys [0, hi).
inline void apply_element_masks(const MaskSet& m, int64_t b, int64_t i, float* s, int64_t hi) {
  apply_element_masks_span(m, b, i, 0, s, hi);
}

}  // namespace attnlab
