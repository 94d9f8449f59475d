#!/usr/bin/env bash
# Installs everything the build and tests need on a Debian 12 machine (run as root), then the
# npm devDependencies. Idempotent. With --if-needed it touches neither apt nor npm when all is
# already in place, so `npm start` / `npm test` can call it every time at almost no cost.
set -euo pipefail
cd "$(dirname "$0")/.."

if_needed=0
for arg in "$@"; do
  case "$arg" in
    --if-needed) if_needed=1 ;;
    *) echo "usage: $0 [--if-needed]" >&2; exit 2 ;;
  esac
done

# emscripten: the WASM toolchain (3.1.6; pulls clang-14, lld, binaryen, node-acorn).
# libeigen3-dev: the core's only library. cmake/g++/make, libgtest/gmock, libbenchmark: native
# build, tests and benchmarks; clang-14 + libclang-rt-14-dev: libFuzzer targets. chromium: browser tests (playwright-core drives /usr/bin/chromium).
# firefox-esr: the Firefox stage (puppeteer-core drives /usr/bin/firefox-esr over WebDriver BiDi).
# python3-torch/numpy/onnx: reference values for tests/golden (run with /usr/bin/python3, since
# the `python3` on PATH may be a pyenv one without them). ca-certificates: npm over HTTPS.
# libvulkan1: the Vulkan loader that the npm `webgpu` package (Dawn) opens in Node, to reach
# chromium's SwiftShader ICD for the WebGPU tests (chromium bundles its own loader, Node does not).
packages=(
  emscripten libeigen3-dev chromium firefox-esr libvulkan1 cmake g++ make
  libgtest-dev libgmock-dev libbenchmark-dev clang-14 libclang-rt-14-dev
  python3 python3-torch python3-numpy python3-onnx ca-certificates
)

missing=()
for p in "${packages[@]}"; do
  [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)" = "ii " ] || missing+=("$p")
done

if [ "$if_needed" = 1 ] && [ ${#missing[@]} -eq 0 ]; then
  echo "setup: apt: all ${#packages[@]} packages present"
else
  echo "setup: apt: update, then install ${#packages[@]} packages (missing: ${missing[*]:-none})"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  # --no-upgrade: a package that is already there stays at its version, so a rerun changes nothing.
  apt-get install -y -qq --no-install-recommends --no-upgrade "${packages[@]}" > /dev/null
fi

# Vite 7 needs Node >= 20.19; Debian 12's own nodejs is 18, so the machine's node must be newer.
if ! node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)'; then
  echo "setup: error: Node.js >= 20.19 is required, found $(node --version 2>/dev/null || echo none)" >&2
  exit 1
fi

# npm: a stamp in node_modules/ records the hash of the package-lock.json it was installed from.
stamp=node_modules/.attnlab-lock.sha256
if [ -f package-lock.json ]; then
  want="$(sha256sum package-lock.json | cut -d' ' -f1)"
  # A tree installed by hand (no stamp yet) counts when npm's own record is newer than the lock.
  if [ "$if_needed" = 1 ] && [ ! -f "$stamp" ] && [ node_modules/.package-lock.json -nt package-lock.json ]; then
    echo "$want" > "$stamp"
  fi
  if [ "$if_needed" = 1 ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
    echo "setup: npm: node_modules matches package-lock.json"
  else
    echo "setup: npm ci"
    log="$(mktemp)"
    if ! npm ci --no-audit --no-fund --loglevel=error > "$log" 2>&1; then
      # The registry reachable here lacks other platforms' optional packages (e.g. rollup's
      # android/darwin/win32 binaries), so the lock never lists them and npm ci rejects it as
      # "not in sync" (EUSAGE). npm install accepts the same lock and leaves it unchanged.
      if grep -q 'EUSAGE' "$log"; then
        echo "setup: npm ci refused the lock (registry lacks other platforms' optional packages); npm install"
        npm install --no-audit --no-fund --loglevel=error
      else
        cat "$log" >&2; rm -f "$log"; exit 1
      fi
    fi
    rm -f "$log"
    echo "$want" > "$stamp"
  fi
else
  echo "setup: npm install (no package-lock.json)"
  npm install --no-audit --no-fund --loglevel=error
fi
echo "setup: done"
