// What every module binds (the library's, the nn and the checkpoint modules): heapUsed, the bytes
// malloc has handed out and not had back (leak tests, heapStats(), loadModel()'s budget), and the
// attention kernel's row groups, which loader.ts times and sets once per module
// (attnlab/attention.hpp).
#include <emscripten/bind.h>
#include <malloc.h>

#include "attnlab/attention.hpp"

EMSCRIPTEN_BINDINGS(attnlab_common) {
  emscripten::function("heapUsed", +[] { return static_cast<double>(mallinfo().uordblks); });
  emscripten::function("setAttentionRows", &attnlab::set_attention_rows);
  emscripten::function("attentionRowsProbe", &attnlab::attention_rows_probe);
}
