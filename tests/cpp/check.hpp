// GoogleTest helpers shared by the op tests: closeness against float64 references, bitwise
// equality, error messages, and a deadline for code that could hang.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "attnlab/error.hpp"

namespace check {

// max |got - want| <= rtol * max(1, |want|) element-wise; NaN or inf in `got` always fails.
inline ::testing::AssertionResult AllClose(const std::vector<float>& got,
                                           const std::vector<double>& want,
                                           double rtol = 1e-5) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure()
           << "size " << got.size() << " != expected " << want.size();
  size_t bad = 0, first = 0;
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::abs(static_cast<double>(got[i]) - want[i]);
    const double tol = rtol * std::max(1.0, std::abs(want[i]));
    if (!std::isfinite(got[i]) || !(err <= tol)) {
      if (bad++ == 0) first = i;
    }
    if (err > worst || std::isnan(err)) worst = err;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << got.size() << " elements off; first at index " << first
         << ": got " << got[first] << ", want " << want[first] << "; worst abs error " << worst;
}

// Exactly equal bytes (memcmp): the thread-count invariance promise.
inline ::testing::AssertionResult BitwiseEqual(const std::vector<float>& a,
                                               const std::vector<float>& b) {
  if (a.size() != b.size())
    return ::testing::AssertionFailure() << "size " << a.size() << " != " << b.size();
  if (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0)
    return ::testing::AssertionSuccess();
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0)
      return ::testing::AssertionFailure()
             << "first difference at index " << i << ": " << a[i] << " vs " << b[i];
  return ::testing::AssertionFailure() << "memcmp differs";
}

// Every element exactly +0 or -0 (not merely small), and never NaN.
inline ::testing::AssertionResult AllZero(const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!(x[i] == 0.0f))
      return ::testing::AssertionFailure() << "element " << i << " is " << x[i] << ", not 0";
  return ::testing::AssertionSuccess();
}

// fn() throws attnlab::Error whose message contains `needle`.
inline ::testing::AssertionResult ThrowsError(const std::function<void()>& fn,
                                              const std::string& needle = "") {
  try {
    fn();
  } catch (const attnlab::Error& e) {
    if (std::string(e.what()).find(needle) == std::string::npos)
      return ::testing::AssertionFailure()
             << "message \"" << e.what() << "\" does not mention \"" << needle << "\"";
    return ::testing::AssertionSuccess();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw another exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw attnlab::Error";
}

// Runs fn on another thread; if it is not done within `seconds`, reports and ends the process
// (a hung test cannot be cancelled, and ctest's default timeout is far too long).
inline void WithDeadline(double seconds, const std::function<void()>& fn, const char* what) {
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> f = done->get_future();
  std::thread t([fn, done] {
    fn();
    done->set_value();
  });
  if (f.wait_for(std::chrono::duration<double>(seconds)) != std::future_status::ready) {
    std::fprintf(stderr, "DEADLINE: %s did not finish within %.1f s (hang or deadlock)\n", what,
                 seconds);
    std::fflush(stderr);
    std::_Exit(1);
  }
  // Joined, not detached: a detached thread could still be freeing its thread-locals (gtest's
  // trace stack, from an EXPECT inside fn) when the process exits, which LeakSanitizer reported
  // as a leak (ThreadPool.NestedRunIsSerialOnTheCallingThread, once).
  t.join();
}

}  // namespace check
