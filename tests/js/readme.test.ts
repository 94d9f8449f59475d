// Every ```ts example in README.md runs as written, as a new user would run it: in a scratch
// project outside the checkout that installed the packed tarballs (`npm pack` of attnlab and of
// the attnlab-models workspace), as an ES module, printing what its `// comments` promise; and
// type-checks there under `tsc --strict`. Also: the core tarball stays within 4 MB, and without
// attnlab-models installed, loadTranslator('fra-eng') says which package to install.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);

// Runs before the example: records the arguments of every console.log call (as JSON, typed arrays
// as plain arrays) and prints them as one JSON line when the process exits.
const recorder = `
const __logs = [];
console.log = (...args) => __logs.push(JSON.parse(JSON.stringify(args, (_k, v) => ArrayBuffer.isView(v) ? Array.from(v) : v)));
process.on('exit', () => process.stdout.write(JSON.stringify(__logs) + '\\n'));
`;

type Logs = unknown[][];

/** What each example's comments promise, found by a line of its code. */
const promises: { marker: string; check: (logs: Logs) => void }[] = [
  {
    // "Using it": console.log(output.shape, weights.shape); // [2, 4, 8] [2, 4, 4]
    marker: 'console.log(output.shape, weights.shape); // [2, 4, 8] [2, 4, 4]',
    check: (logs) => expect(logs).toEqual([[[2, 4, 8], [2, 4, 4]]]),
  },
  {
    // WebGPU: console.log(lib.backend, output.shape); // 'webgpu' or 'wasm', [2, 64, 32]
    marker: "console.log(lib.backend, output.shape); // 'webgpu' or 'wasm', [2, 64, 32]",
    check: (logs) => {
      expect(logs).toHaveLength(1);
      expect(['webgpu', 'wasm']).toContain(logs[0][0]);
      expect(logs[0][1]).toEqual([2, 64, 32]);
    },
  },
  {
    // Translation: text "I'm tired.", subword pieces, pieces ending with '</s>', attention kind
    // 'transformer' (arch: 'transformer'), every hypothesis best first.
    marker: 'console.log(r.text);                   // "I\'m tired."',
    check: (logs) => {
      expect(logs).toHaveLength(5);
      const [[text], [source], [target], [kind], [beams]] = logs as [[string], [string[]], [string[]], [string], [string[]]];
      expect(text).toBe("I'm tired.");
      expect(source.length).toBeGreaterThan(0);
      source.forEach((piece) => expect(typeof piece).toBe('string'));
      expect(target.at(-1)).toBe('</s>');
      expect(kind).toBe('transformer');
      expect(beams.length).toBeGreaterThan(1);
      expect(beams[0]).toBe(text);
    },
  },
  {
    // Translation, bundled apps: the model's URL from attnlab-models.
    marker: "console.log(tr.translate('Je suis fatigué.').text); // \"I'm tired.\"",
    check: (logs) => expect(logs).toEqual([["I'm tired."]]),
  },
];

interface Packed { name: string; filename: string; size: number; unpackedSize: number; files: { path: string }[] }

const npm = (args: string[], cwd: string) => execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8', timeout: 180_000 });

let dir = '';
let packed: Packed[] = [];
/** A scratch project (outside the checkout, so nothing resolves into it) with these tarballs installed. */
function project(name: string, tarballs: string[]): string {
  const p = join(dir, name);
  mkdirSync(p);
  writeFileSync(join(p, 'package.json'), JSON.stringify({ name: `scratch-${name}`, private: true, type: 'module' }));
  npm(['install', '--offline', '--no-package-lock', ...tarballs.map((t) => join(dir, t))], p);
  return p;
}
let full = '', coreOnly = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'attnlab-readme-'));
  packed = JSON.parse(npm(['pack', '--json', '--pack-destination', dir, '--workspaces', '--include-workspace-root'], root)) as Packed[];
  const file = (n: string) => packed.find((p) => p.name === n)!.filename;
  full = project('full', [file('attnlab'), file('attnlab-models')]);
  coreOnly = project('core', [file('attnlab')]);
  // The WebGPU example imports the npm 'webgpu' package (Dawn), which its users install too.
  symlinkSync(join(root, 'node_modules/webgpu'), join(full, 'node_modules/webgpu'), 'dir');
}, 300_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the packages', () => {
  it('attnlab packs within 4 MB, without the models; attnlab-models holds the four', () => {
    const core = packed.find((p) => p.name === 'attnlab')!, models = packed.find((p) => p.name === 'attnlab-models')!;
    expect(core.size).toBeLessThanOrEqual(4 * 1024 * 1024);
    expect(core.files.filter((f) => f.path.endsWith('.atl'))).toEqual([]);
    expect(models.files.filter((f) => f.path.endsWith('.atl')).map((f) => f.path).sort())
      .toEqual(['eng-fra-gru.atl', 'eng-fra-transformer.atl', 'fra-eng-gru.atl', 'fra-eng-transformer.atl']);
    for (const f of ['README.md', 'NOTICE', 'index.js', 'index.d.ts']) expect(models.files.map((x) => x.path)).toContain(f);
  });

  it("without attnlab-models, loadTranslator('fra-eng') names the package to install", () => {
    writeFileSync(join(coreOnly, 'try.mjs'), `
      import { load } from 'attnlab';
      const lib = await load({ variant: 'simd' });
      try { await lib.loadTranslator('fra-eng'); console.log('loaded'); } catch (e) { console.log(e.message); }
      lib.dispose();`);
    const out = execFileSync(process.execPath, ['try.mjs'], { cwd: coreOnly, encoding: 'utf8', timeout: 60_000 });
    expect(out).toMatch(/^loadTranslator: model 'fra-eng' \(transformer\) is in the package attnlab-models, not found \(.*\): npm install attnlab-models, or pass the file's URL, models\['fra-eng'\]\.transformer from it$/m);
  });
});

describe('README examples', () => {
  it('has examples', () => expect(examples.length).toBeGreaterThan(0));

  it('every promise above still matches an example (a README edit must update this test)', () => {
    for (const { marker } of promises) expect(examples.some((code) => code.includes(marker)), marker).toBe(true);
  });

  it.each(examples.map((code, i) => [i, code]))('example %i runs from the installed tarballs and prints what its comments say', (i, code) => {
    const file = join(full, `example-${i}.mjs`);
    writeFileSync(file, recorder + (code as string));
    const out = execFileSync(process.execPath, [file], { cwd: full, encoding: 'utf8', timeout: 60_000 });
    const logs = JSON.parse(out.trim().split('\n').at(-1)!) as Logs;
    expect(logs.length).toBeGreaterThan(0);
    for (const { marker, check } of promises) if ((code as string).includes(marker)) check(logs);
  });

  // Under each moduleResolution a project may have: nodenext and node16 (Node), bundler (Vite, webpack).
  it.each([['nodenext', 'nodenext'], ['node16', 'node16'], ['esnext', 'bundler']])('every example type-checks under tsc --strict against the installed packages (module %s, moduleResolution %s)', (module, moduleResolution) => {
    examples.forEach((code, i) => writeFileSync(join(full, `example-${i}.ts`), code));
    // The overloads that narrow a result when its option asks for a part (as returnWeights does in
    // the README): under strict these would be "possibly undefined" without them.
    writeFileSync(join(full, 'example-overloads.ts'), `
      import { load, type Int32Tensor, type Tensor } from 'attnlab';
      const lib = await load();
      const t = { data: new Float32Array(8), shape: [4, 2] };
      const w: Tensor = lib.synthesizer(null, t, { kind: 'random', returnWeights: true }).weights;
      const b: Int32Tensor = lib.lshAttention(t, t, { nBuckets: 2, returnBuckets: true }).buckets;
      const a: Int32Tensor = lib.lshAttention(t, t, { nBuckets: 2, returnAttended: true }).attended;
      const both = lib.lshAttention(t, t, { nBuckets: 2, returnBuckets: true, returnAttended: true });
      const pair: [Int32Tensor, Int32Tensor] = [both.buckets, both.attended];
      const plain: Tensor | undefined = lib.synthesizer(null, t, { kind: 'random' }).weights;
      console.log(w, b, a, pair, plain);
    `);
    writeFileSync(join(full, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'es2022', module, moduleResolution, lib: ['es2022', 'dom'], types: [] },
      include: ['example-*.ts'],
    }));
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    let out = '';
    try {
      out = execFileSync(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: full, encoding: 'utf8', timeout: 120_000 });
    } catch (e) {
      out = String((e as { stdout?: string }).stdout ?? e);
    }
    expect(out).toBe('');
  }, 120_000);
});
