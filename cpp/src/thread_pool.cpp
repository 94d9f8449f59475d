#include "attnlab/thread_pool.hpp"

#include <chrono>
#include <exception>
#include <utility>

namespace attnlab {
namespace {
thread_local bool inside_task = false;

// How long an idle worker keeps polling for the next job before it sleeps. Waking a sleeping
// thread costs hundreds of microseconds on a virtual machine, and callers run pool jobs back to
// back: one op runs several (pack the keys, then attend), and a JS call spends 0.1-0.5 ms copying
// inputs in and results out between ops. Measured in Node, 2 threads, H8 S128 attention called
// back to back: 1.18 ms per call with a 50 us poll (the worker slept between calls), 0.69 ms
// with 1 ms. An idle page pays at most 1 ms of one core after its last call.
constexpr auto kSpin = std::chrono::microseconds(1000);

// Polls until `done` holds or kSpin has passed, before the caller blocks on a condition variable.
// The clock is read once per 256 checks: in WebAssembly it is a call out to JavaScript
// (clock_gettime, process.hrtime, the heap views they touch), and reading it on every check took
// a quarter of a translator's main thread at 2 threads (Node 20, Zen 5). Every 4096th check was
// slower still (Transformer beam 5, 2 threads: 3.6 -> 5.4 ms): a denser spin, most likely
// contending for the cache line the other threads update.
template <class Done>
void poll(Done done) {
  const auto until = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 256; ++i)
      if (done()) return;
    if (std::chrono::steady_clock::now() >= until) return;
  }
}
}  // namespace

void resize_pool(std::unique_ptr<ThreadPool>& pool, int n) {
  pool.reset();
  if (n > 1) pool = std::make_unique<ThreadPool>(n);
}

void init_exception_state() {
  try {
    throw 0;
  } catch (int) {
  }
}

ThreadPool::ThreadPool(int num_threads) {
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_.store(true);
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::drain() {
  inside_task = true;
  for (int64_t i; (i = next_.fetch_add(1)) < task_count_;) {
    try {
      (*task_)(i);
    } catch (...) {
      // Keep the first failure and stop handing out tasks; run() rethrows it once every thread
      // inside the job has left (the task object must outlive all of them).
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      next_.store(task_count_);
    }
  }
  inside_task = false;
}

void ThreadPool::worker_loop() {
  // A thread's exception state comes from the heap at its first throw (libc++abi in the wasm
  // builds): made here, a task's first error (caught in drain) leaves heap use where it was.
  init_exception_state();
  started_.fetch_add(1);
  uint64_t seen = 0;
  for (;;) {
    poll([&] { return generation_.load(std::memory_order_acquire) != seen || stopping_.load(); });
    std::unique_lock<std::mutex> lock(mutex_);
    ++sleepers_;
    wake_.wait(lock, [&] { return stopping_.load() || generation_.load() != seen; });
    --sleepers_;
    if (stopping_.load()) return;
    seen = generation_.load();
    if (!open_) continue;  // every task was claimed before this worker got here
    ++active_;
    lock.unlock();
    drain();
    lock.lock();
    if (--active_ == 0 && caller_waiting_) done_.notify_one();
  }
}

void ThreadPool::run(int64_t n, const std::function<void(int64_t)>& task) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1 || inside_task) {
    for (int64_t i = 0; i < n; ++i) task(i);
    return;
  }
  bool sleeping;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    task_count_ = n;
    next_.store(0);
    open_ = true;
    generation_.fetch_add(1, std::memory_order_release);
    sleeping = sleepers_ > 0;  // read under the lock a worker takes before it sleeps: none is missed
  }
  if (sleeping) wake_.notify_all();  // a futex wake is a call out to JavaScript in WebAssembly
  drain();
  // Every task is claimed (drain returned): close the job, so a worker that wakes only now goes
  // back to sleep instead of being waited for, and wait for those still running a task: polling
  // first, as the workers do, since a sleeping caller's wake-up would cost more than a short job.
  std::unique_lock<std::mutex> lock(mutex_);
  open_ = false;
  if (active_.load() > 0) {
    lock.unlock();
    poll([&] { return active_.load(std::memory_order_acquire) == 0; });
    lock.lock();
    caller_waiting_ = true;
    done_.wait(lock, [&] { return active_.load() == 0; });
    caller_waiting_ = false;
  }
  task_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void ThreadPool::wake() {
  if (workers_.empty()) return;
  bool sleeping;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    generation_.fetch_add(1, std::memory_order_release);  // no job: workers see open_ == false
    sleeping = sleepers_ > 0;
  }
  if (sleeping) wake_.notify_all();
}

void parallel_for(ThreadPool* pool, int64_t n, const std::function<void(int64_t)>& task) {
  if (pool) {
    pool->run(n, task);
  } else {
    for (int64_t i = 0; i < n; ++i) task(i);
  }
}

}  // namespace attnlab
