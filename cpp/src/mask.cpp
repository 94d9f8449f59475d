#include "attnlab/mask.hpp"

#include <limits>
#include <string>

#include "attnlab/error.hpp"

namespace attnlab {

ValidLens make_valid_lens(const int32_t* data, int64_t length, const Shape& lead, int64_t Sq,
                          int64_t Sk, const std::string& name) {
  ValidLens v;
  v.data = data;
  const int64_t batch = numel(lead);
  v.batch_offset.resize(static_cast<size_t>(batch));
  if (length == batch * Sq && Sq != 1) {
    v.row_stride = 1;
    for (int64_t b = 0; b < batch; ++b) v.batch_offset[b] = b * Sq;
  } else {
    // One length per prefix of the leading dims, shared by the remaining dims and all rows.
    int64_t prefix = 1;
    size_t j = 0;
    while (prefix != length && j < lead.size()) prefix *= lead[j++];
    require(prefix == length, [&] {
      std::string allowed;
      int64_t p = 1;
      for (size_t t = 0; t <= lead.size(); ++t) {
        allowed += std::to_string(p) + ", ";
        if (t < lead.size()) p *= lead[t];
      }
      return name + ": expected length " + allowed + "or " +
             std::to_string(batch * Sq) + " (one per query row), got " + std::to_string(length);
    });
    const int64_t per = prefix > 0 ? batch / prefix : 1;  // prefix 0 means batch 0: no rows
    for (int64_t b = 0; b < batch; ++b) v.batch_offset[b] = b / per;
  }
  for (int64_t i = 0; i < length; ++i) {
    require(data[i] >= 0 && data[i] <= Sk, [&] {
      return name + ": expected values in [0, " + std::to_string(Sk) +
             "] (the number of keys), got " + std::to_string(data[i]) + " at index " +
             std::to_string(i);
    });
  }
  return v;
}

void check_query_offset(int64_t query_offset) {
  require(query_offset >= 0 && query_offset <= (int64_t{1} << 53), [&] {
    return "query_offset: expected an integer from 0 to 2^53, got " + std::to_string(query_offset);
  });
}

namespace {

template <class F>
void masks_span(const MaskSet& m, int64_t b, int64_t i, int64_t j0, F* s, int64_t n) {
  constexpr F kBlocked = -std::numeric_limits<F>::infinity();
  for (const BoolMask& bm : m.bools) {
    const int64_t cs = bm.at.col_stride;
    const uint8_t* row = bm.data + bm.at.batch_offset[b] + i * bm.at.row_stride + j0 * cs;
    for (int64_t j = 0; j < n; ++j) {
      const bool blocked = (row[j * cs] != 0) == bm.true_means_blocked;
      if (blocked) s[j] = kBlocked;
    }
  }
  for (const AdditiveMask& am : m.additive) {
    const int64_t cs = am.at.col_stride;
    const float* row = am.data + am.at.batch_offset[b] + i * am.at.row_stride + j0 * cs;
    for (int64_t j = 0; j < n; ++j) s[j] += row[j * cs];
  }
}

}  // namespace

void apply_element_masks_span(const MaskSet& m, int64_t b, int64_t i, int64_t j0, float* s,
                              int64_t n) {
  masks_span(m, b, i, j0, s, n);
}

void apply_element_masks_span(const MaskSet& m, int64_t b, int64_t i, int64_t j0, double* s,
                              int64_t n) {
  masks_span(m, b, i, j0, s, n);
}

}  // namespace attnlab
