#!/usr/bin/env bash
# Do the shipped models keep their translations? Two attnlab-eval binaries (e.g. the untouched
# baseline's and this tree's) translate the whole validation split of every shipped model, greedy
# and beam 5; reports per model and beam the share of sources whose text is identical, and both
# BLEU scores.
#   bash tests/bench/translations_compare.sh BEFORE_EVAL AFTER_EVAL [out dir=build/bench-translations]
set -euo pipefail
cd "$(dirname "$0")/../.."
before=$1 after=$2 out=${3:-build/bench-translations}
mkdir -p "$out"
echo "| model | beam | sources | identical text | BLEU before | BLEU after |"
echo "|---|---|---|---|---|---|"
for m in web/models/*.atl; do
  name=$(basename "$m" .atl)
  for beam in 1 5; do
    for side in before after; do
      "${!side}" --model "$m" --beams $beam --show 1000000 > "$out/$name.$beam.$side.txt"
    done
    n=$(grep -c '^    -> ' "$out/$name.$beam.before.txt")
    same=$(paste -d '\n' <(grep '^    -> ' "$out/$name.$beam.before.txt") <(grep '^    -> ' "$out/$name.$beam.after.txt") |
           awk 'NR % 2 == 1 {a = $0} NR % 2 == 0 {s += (a == $0)} END {print s + 0}')
    bb=$(sed -n 's/^beam .*: BLEU \([0-9.]*\).*/\1/p' "$out/$name.$beam.before.txt")
    ba=$(sed -n 's/^beam .*: BLEU \([0-9.]*\).*/\1/p' "$out/$name.$beam.after.txt")
    echo "| $name | $beam | $n | $same ($(awk -v s="$same" -v n="$n" 'BEGIN {printf "%.2f", 100 * s / n}')%) | $bb | $ba |"
  done
done
