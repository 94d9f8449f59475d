// The in-browser trainer's toy task, timed in Node on the SIMD build (same code the Worker runs):
// reverse sequences of 3-6 letters from an alphabet of 8 until exact match >= 95% on 200 held-out
// sequences, or 60 s.   node tests/bench/trainer_toy.mjs [arch=gru] [hidden=64]
import { load } from 'attnlab';

const lib = await load({ variant: 'simd' });
const arch = process.argv[2] ?? 'gru', hidden = Number(process.argv[3] ?? 64);
const s = lib.createTrainer({ task: 'reverse', arch, hidden, maxSeconds: 60, evalEvery: 50, evalSize: 200, worker: false,
  onProgress: (p) => console.log(`step ${p.step} loss ${p.loss.toFixed(3)} exact ${(100 * p.exactMatch).toFixed(1)}% ` +
    `${(p.elapsedMs / 1000).toFixed(1)} s ${Math.round(p.tokensPerSecond)} tok/s`) });
const r = await s.done;
console.log(`${arch} hidden ${hidden}: ${r.reason} after ${(r.elapsedMs / 1000).toFixed(1)} s, step ${r.step}, exact match ${(100 * r.exactMatch).toFixed(1)}%`);
console.log('example', JSON.stringify(r.example));
lib.dispose();
