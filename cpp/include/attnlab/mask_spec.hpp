// A call's masks as a caller describes them (pointers and shapes, as the bindings receive them
// from web/lib/masks.ts), resolved by make_masks() into the MaskSet the ops read.
#pragma once
#include <cstdint>
#include <vector>

#include "attnlab/mask.hpp"
#include "attnlab/relative_position.hpp"

namespace attnlab {

struct MaskSpec {
  struct Bool {
    const uint8_t* data;
    Shape shape;  // broadcast to the scores
    bool true_means_blocked;
  };
  struct Additive {
    const float* data;
    Shape shape;
  };
  struct Lengths {
    const int32_t* data = nullptr;  // null: none
    int64_t length = 0;
  };
  // Biases on the distance i + query_offset - j, over diagonal tables the caller allocates,
  // [heads, Sq + Sk - 1] floats, which must outlive the MaskSet.
  struct Alibi {
    const float* slopes = nullptr;  // null: alibi_slopes(heads)
    int64_t heads = 0;
    float* table = nullptr;  // null: no ALiBi
  };
  struct T5 {
    const float* weights = nullptr;  // null: no T5 bias
    int64_t heads = 0;
    T5Params params;
    float* table = nullptr;
  };

  bool causal = false;
  int64_t query_offset = 0;
  std::vector<Bool> bools;
  std::vector<Additive> additive;
  Lengths valid_lens;
  Alibi alibi;
  T5 t5;
};

// The MaskSet of `spec` over scores of shape [lead..., Sq, Sk]: every mask broadcast to it (an
// Error naming "mask" if one cannot be), valid_lens checked against it, and the ALiBi and T5
// tables filled (not when the scores are empty).
MaskSet make_masks(const MaskSpec& spec, const Shape& scores);

}  // namespace attnlab
