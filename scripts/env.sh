# Sourced by the build scripts: the toolchain environment Debian's emscripten needs.
# Its acorn (and other JS deps) live in Debian's node path; node itself may come from elsewhere.
export NODE_PATH="/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}"
ATTNLAB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export ATTNLAB_ROOT
ATTNLAB_JOBS="${ATTNLAB_JOBS:-$(nproc)}"
export ATTNLAB_JOBS
