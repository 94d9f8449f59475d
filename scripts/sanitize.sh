#!/usr/bin/env bash
# The native GoogleTest suite built with AddressSanitizer and UndefinedBehaviorSanitizer (g++,
# debug). Any report fails the run (-fno-sanitize-recover=all, ASan aborts on error).
set -euo pipefail
source "$(dirname "$0")/env.sh"
cd "$ATTNLAB_ROOT"
cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=Debug -DATTNLAB_SANITIZE=ON > /dev/null
cmake --build build/sanitize -j "$ATTNLAB_JOBS" > /dev/null
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build/sanitize --output-on-failure -j "$ATTNLAB_JOBS"

# ThreadSanitizer on the thread pool (its own tests: jobs, nesting, exceptions, shutdown), which
# every threaded op goes through. Small enough to build directly; any race report fails the run.
mkdir -p build/sanitize-thread
g++ -std=c++17 -O1 -g -fsanitize=thread -Icpp/include -Itests/cpp tests/cpp/test_thread_pool.cpp \
  cpp/src/thread_pool.cpp -lgtest -lgtest_main -pthread -o build/sanitize-thread/thread_pool_tests
TSAN_OPTIONS=halt_on_error=1 build/sanitize-thread/thread_pool_tests --gtest_brief=1
