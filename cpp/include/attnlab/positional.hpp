// Positional encodings.
#pragma once
#include <cstdint>

namespace attnlab {

// Sinusoidal encoding of Vaswani et al.: P[i, 2j] = sin(i / 10000^(2j/dim)),
// P[i, 2j+1] = cos(i / 10000^(2j/dim)); out is [length, dim]. Odd dim is allowed (last column sin).
void sinusoidal_encoding(int64_t length, int64_t dim, float* out);

}  // namespace attnlab
