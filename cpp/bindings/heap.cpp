// heapUsed for each module that links it (the library's and the nn module's): bytes malloc has
// handed out and not had back, what a leak test and heapStats() watch.
#include <emscripten/bind.h>
#include <malloc.h>

EMSCRIPTEN_BINDINGS(attnlab_heap) {
  emscripten::function("heapUsed", +[] { return static_cast<double>(mallinfo().uordblks); });
}
