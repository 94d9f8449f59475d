#!/usr/bin/env bash
# Training speed, before and after: two attnlab-train binaries (e.g. the untouched baseline's and
# this tree's) run the same recipe for a fixed number of steps, one after the other, ROUNDS
# times, so machine load hits both alike; reports each run's CPU seconds for those steps (the
# trainer's own "epoch ... stopped in X s (Y s CPU)" line) and the medians' ratio. One thread.
#   bash tests/bench/train_compare.sh BEFORE_BIN AFTER_BIN [rounds=3]
# Recipes: the PyTorch tutorial's (GRU + Bahdanau, hidden 128, batch 32; 120 steps of its 262-step
# epoch) and the shipped Transformer's (d 256, 2+2 layers, batch 64; 40 steps of ~1,040).
set -euo pipefail
cd "$(dirname "$0")/../.."
before=$1 after=$2 rounds=${3:-3}
data=/work/shared/data/tatoeba-fra-eng/pairs.tsv
gru="--direction fra-eng --filter tutorial --val-per-mille 0 --arch gru --d 128 --batch 32 --lr 1e-3 --dropout 0.1
  --label-smoothing 0 --clip 0 --epochs 1 --eval-limit 0 --src-vocab 4400 --tgt-vocab 2900 --log-every 1000000 --stop-at 120"
trf="--direction fra-eng --arch transformer --d 256 --layers 2 --heads 4 --ffn 1024 --src-vocab 3000 --tgt-vocab 3000
  --epochs 12 --batch 64 --lr 1e-3 --warmup 400 --decay linear --clip 1 --dropout 0.1 --label-smoothing 0.1 --seed 1
  --eval-limit 0 --log-every 1000000 --stop-at 40"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); load $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for recipe in gru trf; do
  args=${!recipe}
  : > "build/bench-train-$recipe-before.txt"
  : > "build/bench-train-$recipe-after.txt"
  for r in $(seq "$rounds"); do
    for side in before after; do
      bin=${!side}
      # shellcheck disable=SC2086
      cpu=$("$bin" --data "$data" $args | sed -n 's/^epoch 1 stopped in .* s (\(.*\) s CPU).*/\1/p')
      echo "$cpu" >> "build/bench-train-$recipe-$side.txt"
      echo "$recipe round $r $side: $cpu CPU s"
    done
  done
  b=$(median < "build/bench-train-$recipe-before.txt") a=$(median < "build/bench-train-$recipe-after.txt")
  echo "$recipe: median CPU s before $b, after $a, speed-up $(awk -v b="$b" -v a="$a" 'BEGIN {printf "%.2f", b / a}')x"
done
