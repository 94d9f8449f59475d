// What every module binds (the library's, the nn and the checkpoint modules): its one thread
// pool; heapUsed, the bytes malloc has handed out and not had back (leak tests, heapStats(),
// loadModel()'s budget); and the row groups of the fp32 register blocks, which loader.ts times and
// sets once per module (attnlab/row_groups.hpp).
#include <malloc.h>

#include "attnlab/row_groups.hpp"
#include "marshal.hpp"

namespace {
std::unique_ptr<attnlab::ThreadPool> pool;  // null: the calling thread only
// The main thread's exception state, made as the module starts: its first Error then leaves
// heapUsed where it was (16 bytes in the -threads builds otherwise).
[[maybe_unused]] const bool exceptions_ready = (attnlab::init_exception_state(), true);
}  // namespace

attnlab::ThreadPool* attnlab::bindings::thread_pool() { return pool.get(); }

EMSCRIPTEN_BINDINGS(attnlab_common) {
  using emscripten::function;
  // In a browser the new pool's workers start asynchronously (threadsStarted, below).
  attnlab::bindings::def("setThreads", [](int n) { attnlab::resize_pool(pool, n); });
  function("threadCount", +[] { return pool ? pool->size() : 1; });
  // The threads running so far, the caller's included: loader.ts's startThreads waits for all.
  function("threadsStarted", +[] { return pool ? pool->started() : 1; });
  // Called as a JS op starts, before it checks and copies its inputs (see ThreadPool::wake).
  function("wakeThreads", +[] { if (pool) pool->wake(); });
  function("heapUsed", +[] { return static_cast<double>(mallinfo().uordblks); });
  function("setRowGroups", &attnlab::set_row_groups);
  function("rowGroupsProbe", &attnlab::row_groups_probe);
}
