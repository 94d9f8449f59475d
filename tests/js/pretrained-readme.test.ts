// The README's loadModel example (its ```js block under "Pretrained checkpoints") runs as written
// in Node, with one change: the Hugging Face URL becomes a local server holding the tiny GPT-2
// fixture (no network here). It prints what its comments say: progress up to the file's size,
// logits [S, vocab] and attentions [layers, heads, S, S], then one line per generated token with
// the [layers, heads, context] of its attention, the context growing by one each time.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const fixture = join(root, 'tests/pretrained/fixtures/gpt2-f32');
const HF = 'https://huggingface.co/openai-community/gpt2/resolve/main/';

const readme = readFileSync(join(root, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('### Pretrained checkpoints'));
const example = /```js\n([\s\S]*?)```/.exec(section)?.[1] ?? '';

let server: Server;
let base = '';
// Inside the package's folder, so `import … from 'attnlab'` resolves to this checkout (self-reference).
const script = join(root, 'build', 'readme-load-model.mjs');

beforeAll(async () => {
  server = createServer((req, res) => {
    let body: Buffer;
    try {
      body = readFileSync(join(fixture, new URL(req.url ?? '/', 'http://x').pathname.split('/').pop()!));
    } catch {
      res.writeHead(404).end('not found');  // tokenizer.json: the fixture has vocab.json + merges.txt
      return;
    }
    res.writeHead(200, { 'Content-Length': body.length }).end(body);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const a = server.address();
  base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/gpt2/`;
});
afterAll(async () => {
  await new Promise<void>((ok) => server.close(() => ok()));
  rmSync(script, { force: true });
});

it('the README loadModel example runs as written and prints what its comments say', async () => {
  expect(example).toContain(`loadModel('${HF}'`);
  mkdirSync(join(root, 'build'), { recursive: true });
  // Records console.log's arguments and prints them as one JSON line at exit.
  const recorder = `const __logs = []; console.log = (...a) => __logs.push(a); process.on('exit', () => process.stdout.write(JSON.stringify(__logs) + '\\n'));\n`;
  writeFileSync(script, recorder + example.replace(HF, base));
  // Async: the server answers from this process.
  const out = await new Promise<string>((resolve, reject) => {
    import('node:child_process').then(({ execFile }) => execFile(process.execPath, [script], { cwd: root, timeout: 60_000 }, (e, stdout, stderr) => (e ? reject(new Error(`${e.message}\n${stderr}`)) : resolve(stdout))));
  });
  const logs = JSON.parse(out.trim().split('\n').at(-1)!) as unknown[][];
  const size = statSync(join(fixture, 'model.safetensors')).size;
  const progress = logs.filter((l) => typeof l[0] === 'number') as [number, number][];
  expect(progress.length).toBeGreaterThan(0);
  expect(progress.at(-1)).toEqual([size, size]);
  const shapes = logs.find((l) => Array.isArray(l[0])) as [number[], number[]];
  const S = shapes[0][0];
  expect(shapes).toEqual([[S, 96], [2, 4, S, S]]);
  const tokens = logs.filter((l) => typeof l[0] === 'string') as [string, number[]][];
  expect(tokens).toHaveLength(10);
  tokens.forEach(([, shape], i) => expect(shape).toEqual([2, 4, tokens[0][1][2] + i]));
});

// As the README says of its examples: plain JavaScript that type-checks under `tsc --strict`
// (forward with `attentions: true` has `attentions` in its result's type).
it('the README loadModel example type-checks under tsc --strict', () => {
  const dir = join(root, 'build', 'readme-load-model-tsc');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'example.ts'), example);
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022', 'dom'], types: [] },
    files: ['example.ts'],
  }));
  let out = '';
  try {
    out = execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  } catch (e) {
    out = String((e as { stdout?: string }).stdout ?? e);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  expect(out).toBe('');
}, 120_000);
