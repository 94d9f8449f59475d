// ThreadPool: every index exactly once, nested runs serial, no hangs, clean shutdown, startup.
// Anything that could deadlock runs under check::WithDeadline, which ends the process on a hang.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "attnlab/thread_pool.hpp"
#include "check.hpp"

using attnlab::ThreadPool;

namespace {

constexpr double kDeadline = 20.0;  // seconds; the whole file normally takes well under one

// Runs pool.run(n) and checks each index was visited exactly once.
void ExpectEachIndexOnce(ThreadPool& pool, int64_t n) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  for (auto& h : hits) h.store(0);
  std::atomic<int64_t> calls{0};
  pool.run(n, [&](int64_t i) {
    ASSERT_GE(i, 0);
    ASSERT_LT(i, n);
    hits[static_cast<size_t>(i)].fetch_add(1);
    calls.fetch_add(1);
  });
  EXPECT_EQ(calls.load(), n);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i;
}

// Two tasks that each wait for the other: they can only finish if two threads run them at once.
void ExpectTwoThreadsJoin(ThreadPool& pool) {
  std::atomic<int> arrived{0};
  pool.run(2, [&](int64_t) {
    arrived.fetch_add(1);
    while (arrived.load() < 2) std::this_thread::yield();
  });
  EXPECT_EQ(arrived.load(), 2);
}

}  // namespace

TEST(ThreadPool, SizeCountsTheCallingThread) {
  for (int t : {1, 2, 3, 4}) {
    ThreadPool pool(t);
    EXPECT_EQ(pool.size(), t);
    EXPECT_GE(pool.started(), 1);
    EXPECT_LE(pool.started(), pool.size());
  }
  ThreadPool none(0);
  EXPECT_EQ(none.size(), 1);
}

TEST(ThreadPool, RunCoversEveryIndexExactlyOnce) {
  check::WithDeadline(kDeadline, [] {
    for (int threads = 1; threads <= 4; ++threads)
      for (int64_t n : {0, 1, 2, 7, 1000}) {
        SCOPED_TRACE("threads " + std::to_string(threads) + " n " + std::to_string(n));
        ThreadPool pool(threads);
        ExpectEachIndexOnce(pool, n);
        ExpectEachIndexOnce(pool, n);  // a second job on the same pool
      }
  }, "RunCoversEveryIndexExactlyOnce");
}

TEST(ThreadPool, ZeroOrNegativeCountRunsNothing) {
  ThreadPool pool(3);
  std::atomic<int> calls{0};
  pool.run(0, [&](int64_t) { calls.fetch_add(1); });
  pool.run(-5, [&](int64_t) { calls.fetch_add(1); });
  attnlab::parallel_for(nullptr, 0, [&](int64_t) { calls.fetch_add(1); });
  EXPECT_EQ(calls.load(), 0);
}

TEST(ThreadPool, ParallelForWithoutPoolRunsInlineInOrder) {
  std::vector<int64_t> order;
  const auto caller = std::this_thread::get_id();
  bool same_thread = true;
  attnlab::parallel_for(nullptr, 6, [&](int64_t i) {
    order.push_back(i);
    same_thread = same_thread && std::this_thread::get_id() == caller;
  });
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(same_thread);
}

TEST(ThreadPool, ParallelForWithPoolCoversEveryIndex) {
  check::WithDeadline(kDeadline, [] {
    ThreadPool pool(3);
    std::vector<std::atomic<int>> hits(257);
    for (auto& h : hits) h.store(0);
    attnlab::parallel_for(&pool, 257, [&](int64_t i) { hits[static_cast<size_t>(i)].fetch_add(1); });
    for (size_t i = 0; i < hits.size(); ++i) EXPECT_EQ(hits[i].load(), 1) << i;
  }, "ParallelForWithPoolCoversEveryIndex");
}

TEST(ThreadPool, NestedRunIsSerialOnTheCallingThread) {
  check::WithDeadline(kDeadline, [] {
    for (int threads : {2, 3, 4}) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      ThreadPool pool(threads);
      const int64_t outer = 12, inner = 9;
      std::vector<std::atomic<int>> hits(static_cast<size_t>(outer * inner));
      for (auto& h : hits) h.store(0);
      std::atomic<int> wrong_thread{0};
      pool.run(outer, [&](int64_t i) {
        const auto me = std::this_thread::get_id();
        int64_t next_expected = 0;
        bool in_order = true;
        pool.run(inner, [&](int64_t j) {
          if (std::this_thread::get_id() != me) wrong_thread.fetch_add(1);
          in_order = in_order && j == next_expected++;
          hits[static_cast<size_t>(i * inner + j)].fetch_add(1);
        });
        // Serial: the nested run finished every index, in order, before returning.
        EXPECT_EQ(next_expected, inner);
        EXPECT_TRUE(in_order);
        // parallel_for from inside a task is serial too.
        int64_t count = 0;
        attnlab::parallel_for(&pool, 4, [&](int64_t) { ++count; });
        EXPECT_EQ(count, 4);
      });
      EXPECT_EQ(wrong_thread.load(), 0);
      for (size_t x = 0; x < hits.size(); ++x) EXPECT_EQ(hits[x].load(), 1) << x;
      // The pool still works normally afterwards.
      ExpectEachIndexOnce(pool, 100);
    }
  }, "NestedRunIsSerialOnTheCallingThread");
}

TEST(ThreadPool, RepeatedRunsDoNotHang) {
  check::WithDeadline(kDeadline, [] {
    for (int threads : {2, 3, 4}) {
      ThreadPool pool(threads);
      int64_t total = 0, want = 0;
      for (int r = 0; r < 1000; ++r) {
        const int64_t n = 1 + r % 9;  // includes n == 1 (inline) and n < threads
        std::atomic<int64_t> sum{0};
        pool.run(n, [&](int64_t i) { sum.fetch_add(i + 1); });
        total += sum.load();
        want += n * (n + 1) / 2;
      }
      EXPECT_EQ(total, want) << "threads " << threads;
    }
  }, "RepeatedRunsDoNotHang");
}

TEST(ThreadPool, WorkIsSpreadWhenTasksBlock) {
  check::WithDeadline(kDeadline, [] {
    ThreadPool pool(2);
    ExpectTwoThreadsJoin(pool);
  }, "WorkIsSpreadWhenTasksBlock");
}

TEST(ThreadPool, WakeWithoutAJobRunsNothingAndJobsStillComplete) {
  // wake() between, before and instead of jobs, including after the workers have gone back to
  // sleep (their poll is 1 ms): no task runs twice or is lost, and blocking tasks still pair up,
  // so the woken worker really joins the next job.
  check::WithDeadline(kDeadline, [] {
    for (int threads : {1, 2, 4}) {
      ThreadPool pool(threads);
      pool.wake();
      for (int r = 0; r < 200; ++r) {
        if (r % 3 == 0) pool.wake();
        if (r % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(3));
        ExpectEachIndexOnce(pool, 1 + r % 17);
      }
      pool.wake();
      pool.wake();
    }
    ThreadPool pool(2);
    for (int r = 0; r < 20; ++r) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      pool.wake();
      ExpectTwoThreadsJoin(pool);
    }
  }, "WakeWithoutAJobRunsNothingAndJobsStillComplete");
}

TEST(ThreadPool, ResizeReplacesThePool) {
  std::unique_ptr<ThreadPool> pool;
  resize_pool(pool, 3);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->size(), 3);
  std::atomic<int> c{0};
  pool->run(7, [&](int64_t) { c.fetch_add(1); });
  EXPECT_EQ(c.load(), 7);
  resize_pool(pool, 2);
  EXPECT_EQ(pool->size(), 2);
  resize_pool(pool, 1);
  EXPECT_EQ(pool, nullptr);
  resize_pool(pool, 0);
  EXPECT_EQ(pool, nullptr);
}

TEST(ThreadPool, DestructionJoinsCleanly) {
  check::WithDeadline(kDeadline, [] {
    // Destroyed at once (workers may not have started yet), after one job, after many.
    for (int rep = 0; rep < 50; ++rep)
      for (int threads = 1; threads <= 4; ++threads) {
        { ThreadPool pool(threads); }
        {
          ThreadPool pool(threads);
          std::atomic<int> c{0};
          pool.run(5, [&](int64_t) { c.fetch_add(1); });
          EXPECT_EQ(c.load(), 5);
        }
      }
    ThreadPool pool(4);
    for (int r = 0; r < 100; ++r) ExpectEachIndexOnce(pool, 33);
  }, "DestructionJoinsCleanly");
}

TEST(ThreadPool, StartedReachesSize) {
  check::WithDeadline(kDeadline, [] {
    for (int threads : {1, 2, 4}) {
      ThreadPool pool(threads);
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (pool.started() < pool.size() && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      EXPECT_EQ(pool.started(), pool.size()) << "threads " << threads;
    }
  }, "StartedReachesSize");
}

TEST(ThreadPool, UsesTheCallingThreadAndWorkers) {
  // Every thread that ran a task is the caller or one of at most size() - 1 workers.
  check::WithDeadline(kDeadline, [] {
    ThreadPool pool(3);
    std::mutex mu;
    std::set<std::thread::id> ids;
    for (int r = 0; r < 20; ++r)
      pool.run(64, [&](int64_t) {
        std::lock_guard<std::mutex> lock(mu);
        ids.insert(std::this_thread::get_id());
      });
    EXPECT_GE(ids.size(), 1u);
    EXPECT_LE(ids.size(), 3u);
  }, "UsesTheCallingThreadAndWorkers");
}

TEST(ThreadPool, ExceptionInTaskIsRethrownAndPoolStaysUsable) {
  attnlab::ThreadPool pool(3);
  EXPECT_THROW(pool.run(1000,
                        [&](int64_t i) {
                          if (i == 10) throw std::runtime_error("task failed");
                        }),
               std::runtime_error);
  std::atomic<int64_t> sum{0};
  pool.run(100, [&](int64_t i) { sum.fetch_add(i); });
  EXPECT_EQ(sum.load(), 4950);
  // Nested runs are still parallel-capable from the caller (the flag was reset).
  std::atomic<int> outer{0};
  pool.run(4, [&](int64_t) { outer.fetch_add(1); });
  EXPECT_EQ(outer.load(), 4);
}
