#include "attnlab/thread_pool.hpp"

#include <exception>
#include <utility>

namespace attnlab {
namespace {
thread_local bool inside_task = false;
}

ThreadPool::ThreadPool(int num_threads) {
  for (int i = 1; i < num_threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
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
      // Keep the first failure, stop handing out tasks, and let run() rethrow it once every
      // thread has left the job (the task object must outlive all of them).
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      next_.store(task_count_);
    }
  }
  inside_task = false;
}

void ThreadPool::worker_loop() {
  started_.fetch_add(1);
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    drain();
    std::lock_guard<std::mutex> lock(mutex_);
    if (--busy_ == 0) done_.notify_one();
  }
}

void ThreadPool::run(int64_t n, const std::function<void(int64_t)>& task) {
  if (n <= 0) return;
  if (workers_.empty() || n == 1 || inside_task) {
    for (int64_t i = 0; i < n; ++i) task(i);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    task_ = &task;
    task_count_ = n;
    next_.store(0);
    busy_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  drain();
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return busy_ == 0; });
  task_ = nullptr;
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void parallel_for(ThreadPool* pool, int64_t n, const std::function<void(int64_t)>& task) {
  if (pool) {
    pool->run(n, task);
  } else {
    for (int64_t i = 0; i < n; ++i) task(i);
  }
}

}  // namespace attnlab
