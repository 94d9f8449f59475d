// One small pool of worker threads that the caller sizes. Ops take a ThreadPool* (null = run on the
// calling thread). Work is split into independent tasks, so results do not depend on the count.
#pragma once
#include <atomic>
#include <condition_variable>
#include <exception>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace attnlab {

class ThreadPool {
 public:
  // `num_threads` counts the calling thread: 1 means no workers. Does not wait for workers to
  // start (a browser main thread must return to its event loop first); see started().
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  int started() const { return started_.load() + 1; }

  // Calls task(i) for every i in [0, n) across the pool and the calling thread; returns when all
  // are done. A call from inside a task runs serially (no nested oversubscription). If tasks
  // throw, tasks not yet started are skipped and the first exception is rethrown here.
  void run(int64_t n, const std::function<void(int64_t)>& task);

  // Wakes sleeping workers ahead of a job, so that their wake-up (hundreds of microseconds on a
  // virtual machine) overlaps the caller's own preparation, such as copying inputs in. They poll
  // for the next job for a while and go back to sleep if none comes.
  void wake();

 private:
  void worker_loop();
  void drain();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  // The current job. A worker joins it (active_) only while it is open; run() closes it once every
  // task is claimed and then waits just for the workers inside, never for one still waking up.
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t task_count_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<uint64_t> generation_{0};  // bumped per job so waiting workers know there is new work
  bool open_ = false;                     // guarded by mutex_
  // Guarded by mutex_: workers blocked on wake_, and whether run() is blocked on done_. Nobody is
  // notified who is not waiting (each notify is a futex call, out to JavaScript in WebAssembly).
  int sleepers_ = 0;
  bool caller_waiting_ = false;
  // Workers inside the current job: changed under mutex_, read without it by run()'s spin.
  std::atomic<int> active_{0};
  std::atomic<bool> stopping_{false};
  std::exception_ptr error_;  // first exception a task threw in the current job
  std::atomic<int> started_{0};
};

// Throws and catches once, so the calling thread's exception state exists: libc++abi allocates it
// at a thread's first throw (the wasm builds' heap use counts it), and keeps it until the thread ends.
void init_exception_state();

// Replaces `pool` by a pool of n threads, or by none for n <= 1. The old pool's workers are joined
// first: a WebAssembly build's pthread pool holds only the n - 1 workers the new one needs.
void resize_pool(std::unique_ptr<ThreadPool>& pool, int n);

// Runs task(i) for i in [0, n): on the pool when given, else inline.
void parallel_for(ThreadPool* pool, int64_t n, const std::function<void(int64_t)>& task);

}  // namespace attnlab
