#!/usr/bin/env bash
# BLEU of the shipped models (and of their fp32 / fp16 twins re-encoded from the final fp32
# checkpoints, for the quantisation cost), written to tests/bench/results/.
#   bash tests/bench/eval_translation.sh [checkpoint dir = build/runs]
set -euo pipefail
cd "$(dirname "$0")/../.."
ck=${1:-build/runs}
out=tests/bench/results
mkdir -p "$out" build/quant
ev=build/native/attnlab-eval
for dir in fra-eng eng-fra; do
  for arch in gru transformer; do
    m=web/models/$dir-$arch.atl
    [ -f "$m" ] || continue
    # Validation split, unfiltered: greedy and beam 5, int8 (shipped).
    $ev --model "$m" --beams 1,5 --show 8 > "$out/$dir-$arch.val.txt"
    # Quantisation: fp32 and fp16 re-encodings of the same final checkpoint, greedy.
    if [ -f "$ck/$dir-$arch.atl" ]; then
      for dt in fp32 fp16; do
        $ev --model "$ck/$dir-$arch.atl" --convert "build/quant/$dir-$arch-$dt.atl" --dtype $dt > /dev/null
        $ev --model "build/quant/$dir-$arch-$dt.atl" --beams 1 > "$out/$dir-$arch.val.$dt.txt"
      done
    fi
  done
  # The PyTorch tutorial's subset (eng_prefixes, < 10 words) of the validation split, French -> English.
  if [ $dir = fra-eng ]; then
    for arch in gru transformer; do
      [ -f web/models/$dir-$arch.atl ] && $ev --model web/models/$dir-$arch.atl --filter tutorial --beams 1,5 --show 5 > "$out/$dir-$arch.tutorial-val.txt"
    done
  fi
done
grep -H "BLEU" "$out"/*.txt
