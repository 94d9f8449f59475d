// What every module binds (the library's, the nn and the checkpoint modules): heapUsed, the bytes
// malloc has handed out and not had back (leak tests, heapStats(), loadModel()'s budget), and the
// row groups of the fp32 register blocks, which loader.ts times and sets once per module
// (attnlab/row_groups.hpp).
#include <emscripten/bind.h>
#include <malloc.h>

#include "attnlab/row_groups.hpp"

EMSCRIPTEN_BINDINGS(attnlab_common) {
  emscripten::function("heapUsed", +[] { return static_cast<double>(mallinfo().uordblks); });
  emscripten::function("setRowGroups", &attnlab::set_row_groups);
  emscripten::function("rowGroupsProbe", &attnlab::row_groups_probe);
}
