#!/usr/bin/env bash
# `npm start`: install what is missing, build everything, then serve the demo (web/demo) with
# Vite's dev server. PORT and HOST override 5173 and 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh --if-needed
bash scripts/build.sh

# web/demo/vite.config.ts reads these; it also sets the COOP/COEP headers threads need, and CORS
# (Access-Control-Allow-Origin: *) and CORP (cross-origin) so the site works framed by a course
# page, sandboxed frames included (see README, Embedding).
export PORT="${PORT:-5173}" HOST="${HOST:-127.0.0.1}"
echo "start: serving the demo at http://$HOST:$PORT/ (Ctrl-C stops)"
exec node_modules/.bin/vite --config web/demo/vite.config.ts
