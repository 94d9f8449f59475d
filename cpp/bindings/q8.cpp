// What the modules with the int8 product bind (the nn and the checkpoint modules): its rows per
// pass over the weights, which loader.ts times and sets once per module, and the weights' layout:
// quads (relaxed SIMD's byte dot product) where the engine computes it right (attnlab/nn/gemm.hpp).
#include <emscripten/bind.h>

#include "attnlab/nn/gemm.hpp"

EMSCRIPTEN_BINDINGS(attnlab_q8) {
  emscripten::function("setQ8RowGroups", &attnlab::nn::set_q8_row_groups);
  emscripten::function("q8RowGroupsProbe", &attnlab::nn::q8_row_groups_probe);
  emscripten::function("setQ8Quads", &attnlab::nn::set_q8_quads);
  emscripten::function("q8Quads", &attnlab::nn::q8_quads);
}
