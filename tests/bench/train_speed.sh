#!/usr/bin/env bash
# Speed anchor, side by side: the PyTorch seq2seq tutorial recipe (tests/bench/pytorch_seq2seq_tutorial.py)
# and attnlab-train with the same recipe (GRU + Bahdanau, hidden 128, batch 32, Adam 1e-3, dropout 0.1,
# the tutorial's filter, French -> English), both 1 thread, started together so they share the
# machine's load. Reports wall seconds per epoch (what each prints) and CPU seconds (from
# /usr/bin/time) so a busy machine does not skew the ratio.
#   bash tests/bench/train_speed.sh [epochs=1]
set -euo pipefail
cd "$(dirname "$0")/../.."
E=${1:-1}
out=build/bench
mkdir -p "$out"
OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 /usr/bin/time -f "pytorch cpu_user %U s, wall %e s" \
  nice -n 10 /usr/bin/python3 tests/bench/pytorch_seq2seq_tutorial.py --epochs "$E" > "$out/speed-pytorch.log" 2>&1 &
p1=$!
/usr/bin/time -f "attnlab cpu_user %U s, wall %e s" \
  nice -n 10 ./build/native/attnlab-train --direction fra-eng --filter tutorial --val-per-mille 0 --arch gru --d 128 \
  --batch 32 --lr 1e-3 --dropout 0.1 --label-smoothing 0 --clip 0 --epochs "$E" --eval-limit 0 \
  --src-vocab 4400 --tgt-vocab 2900 --log-every 1000000 > "$out/speed-attnlab.log" 2>&1 &
p2=$!
wait $p1 $p2
grep -E "epoch|filtered|cpu_user" "$out/speed-pytorch.log"
grep -E "^data|^encoded|BPE|epoch .* in|cpu_user" "$out/speed-attnlab.log"
