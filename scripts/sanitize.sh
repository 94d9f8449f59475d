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
