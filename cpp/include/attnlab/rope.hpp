// Rotary position embedding (Su et al., RoFormer): feature pairs of the vector at position p turn
// by angles p * base^(-2c/D), so the dot product of a rotated query and key depends on their
// positions only through the difference.
#pragma once
#include <cstdint>

namespace attnlab {

struct RopeParams {
  double base = 10000.0;    // theta of the frequencies
  int64_t offset = 0;       // position of the first row (a decoder's cache length)
  bool interleaved = true;  // pairs (2c, 2c+1), as Su et al. and Meta's LLaMA; false: (c, c + D/2),
                            // as GPT-NeoX and Hugging Face's rotate_half
};

// x [outer, S, inner, D] -> out (which may be x): the D-vector at [o, s, n] rotated for position
// offset + s. inner = 1 for [..., S, D] inputs; inner = heads for projected [B, S, H * d] ones.
// D must be even. Finite x whose rotation passes float32's range throws an Error naming `what`
// (the argument x came from).
void rope(const float* x, float* out, int64_t outer, int64_t S, int64_t inner, int64_t D,
          const RopeParams& p, const char* what = "x");

}  // namespace attnlab
