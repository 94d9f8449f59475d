// The packed package as a Node or TypeScript user meets it: `npm pack`, installed from the tarball
// into a fresh project outside the checkout, then required from CommonJS, imported in a worker
// thread, bundled by esbuild (as README says: the packages external), imported without side
// effects, and type-checked (skipLibCheck off, no @webgpu/types)
// under every moduleResolution a consumer may have, by this checkout's TypeScript and by 4.9. tests/browser/package.browser.test.ts
// bundles it (Vite build and dev server); tests/js/readme.test.ts runs the README's examples.
import { execFile, execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const tsc = join(root, 'node_modules/typescript/bin/tsc');
// The oldest TypeScript the package's .d.ts are checked with (5.7+ prints an inferred typed array
// as Float32Array<ArrayBufferLike>, which is an error before 5.7).
const OLD_TS = '4.9.5';

interface Packed { filename: string; files: { path: string }[] }

const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', timeout: 180_000, stdio: ['ignore', 'pipe', 'pipe'] });

let dir = '';
let app = '';
let oldTsc = '';
let packed: Packed;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'attnlab-consumer-'));
  packed = (JSON.parse(run('npm', ['pack', '--json', '--loglevel=error', '--pack-destination', dir], root)) as Packed[])[0];
  app = join(dir, 'app');
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  run('npm', ['install', '--offline', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', join(dir, packed.filename)], app);
  // Node's types, as a Node project has them (not DOM's); nothing else from the checkout.
  mkdirSync(join(app, 'node_modules/@types'));
  symlinkSync(join(root, 'node_modules/@types/node'), join(app, 'node_modules/@types/node'), 'dir');
  // Beside the app, not in it: an install there would prune the @types/node link.
  const ts = join(dir, 'old-ts');
  mkdirSync(ts);
  writeFileSync(join(ts, 'package.json'), JSON.stringify({ name: 'old-ts', private: true }));
  run('npm', ['install', '--prefer-offline', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error', `typescript@${OLD_TS}`], ts);
  oldTsc = join(ts, 'node_modules/typescript/bin/tsc');
}, 300_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const node = (file: string, code: string) => {
  writeFileSync(join(app, file), code);
  return run(process.execPath, [file], app);
};

describe('the tarball', () => {
  it('holds every file its package.json points at, and no source maps', () => {
    const files = new Set(packed.files.map((f) => f.path));
    const pkg = JSON.parse(run(process.execPath, ['-p', 'JSON.stringify(require("attnlab/package.json"))'], app));
    const targets = [pkg.main, pkg.types, ...Object.values(pkg.exports as Record<string, string | Record<string, string>>)
      .flatMap((e) => typeof e === 'string' ? [e] : Object.values(e)),
    ...Object.values(pkg.typesVersions?.['*'] ?? {}).flat() as string[]];
    for (const t of targets) expect(files, t).toContain(t.replace(/^\.\//, ''));
    expect([...files].filter((f) => f.endsWith('.map'))).toEqual([]);
  });
});

describe('npm pack (prepack: scripts/check-pack.mjs)', () => {
  // A checkout of its own: package.json, the guard and NOTICE, with dist/ as given.
  const checkout = (name: string, edit: (pkg: { main: string; exports: Record<string, Record<string, string>> }) => void = () => {}, dist?: string) => {
    const co = join(dir, name);
    mkdirSync(join(co, 'scripts'), { recursive: true });
    copyFileSync(join(root, 'scripts/check-pack.mjs'), join(co, 'scripts/check-pack.mjs'));
    copyFileSync(join(root, 'NOTICE'), join(co, 'NOTICE'));
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    edit(pkg);
    writeFileSync(join(co, 'package.json'), JSON.stringify(pkg));
    if (dist) symlinkSync(dist, join(co, 'dist'), 'dir');
    return co;
  };
  const fails = (cmd: string, args: string[], cwd: string) => {
    try {
      run(cmd, args, cwd);
    } catch (e) {
      return String((e as { stderr?: string }).stderr);
    }
    return 'it did not fail';
  };

  it('refuses an unbuilt checkout (no dist/), naming what is missing and npm run build', () => {
    const err = fails('npm', ['pack', '--dry-run', '--json', '--loglevel=error'], checkout('unbuilt'));
    expect(err).toContain('points at files that are not there: ./dist/index.js, ./dist/index.d.ts, ./dist/components/index.d.ts, ./dist/components/index.js, dist/; build dist/ with npm run build, and pack again');
  });

  it('names the one missing file of a built checkout and what builds it', () => {
    const built = join(root, 'dist');
    const co = checkout('missing-types', (pkg) => (pkg.exports['./components'].types = './dist/components/gone.d.ts'), built);
    expect(fails(process.execPath, ['scripts/check-pack.mjs'], co)).toContain(
      'points at a file that is not there: ./dist/components/gone.d.ts; build dist/ with npm run build:components, and pack again');
    expect(fails(process.execPath, ['scripts/check-pack.mjs', join(checkout('main-gone', (pkg) => (pkg.main = './dist/gone.js'), built), 'package.json')], root))
      .toContain('not there: ./dist/gone.js; build dist/ with npx tsc -p tsconfig.json, and pack again');
    // The same package.json as the checkout's passes.
    expect(run(process.execPath, ['scripts/check-pack.mjs'], checkout('as-is', undefined, built))).toBe('');
  });
});

describe('Node', () => {
  it('require() gives the same API (Node 20.19+ loads ES modules that way)', () => {
    const out = node('req.cjs', `
      const { load } = require('attnlab');
      require('attnlab/components');  // defines nothing where there is no DOM, and does not throw
      load({ variant: 'simd' }).then((lib) => {
        const x = { data: Float32Array.from({ length: 8 }, (_, i) => i / 8), shape: [2, 4] };
        console.log(JSON.stringify(lib.attention(x, x, x).output.shape));
        lib.dispose();
      });`);
    expect(out.trim()).toBe('[2,4]');
  });

  it('runs in worker threads, each with its own instance', () => {
    writeFileSync(join(app, 'thread.mjs'), `
      import { parentPort, workerData } from 'node:worker_threads';
      import { load } from 'attnlab';
      const lib = await load({ variant: workerData });
      const x = { data: Float32Array.from({ length: 24 }, (_, i) => Math.sin(i)), shape: [2, 3, 4] };
      parentPort.postMessage({ variant: lib.variant, out: Array.from(lib.attention(x, x, x, { causal: true }).output.data) });
      lib.dispose();`);
    const out = node('threads.mjs', `
      import { Worker } from 'node:worker_threads';
      const results = await Promise.all(['scalar', 'simd-threads'].map((v) => new Promise((resolve, reject) => {
        const w = new Worker(new URL('./thread.mjs', import.meta.url), { workerData: v });
        w.once('message', resolve);
        w.once('error', reject);
      })));
      console.log(JSON.stringify(results));`);
    const [scalar, threaded] = JSON.parse(out) as { variant: string; out: number[] }[];
    expect([scalar.variant, threaded.variant]).toEqual(['scalar', 'simd-threads']);
    expect(scalar.out.slice(0, 4)).toEqual([0, Math.fround(Math.sin(1)), Math.fround(Math.sin(2)), Math.fround(Math.sin(3))]);
    threaded.out.forEach((x, i) => expect(x).toBeCloseTo(scalar.out[i], 6));
  });

  it("bundled by esbuild with the packages external (README, Bundlers) it runs; bundled in, load() says what happened and what to do", () => {
    writeFileSync(join(app, 'esb.mjs'), `
      import { load } from 'attnlab';
      try {
        const lib = await load();
        const x = { data: Float32Array.from({ length: 8 }, (_, i) => i / 8), shape: [2, 4] };
        console.log(JSON.stringify(lib.attention(x, x, x).output.shape));
        lib.dispose();
      } catch (e) {
        console.log(e.message);
      }`);
    const esbuild = join(root, 'node_modules/.bin/esbuild');
    const bundle = (out: string, external: string[]) => {
      run(esbuild, ['esb.mjs', '--bundle', '--platform=node', '--format=esm', '--log-level=error', `--outfile=${out}`, ...external], app);
      return run(process.execPath, [out], app).trim();
    };
    expect(bundle('esb-out/external.mjs', ['--external:attnlab', "--external:attnlab/*", '--external:attnlab-models'])).toBe('[2,4]');
    expect(bundle('esb-out/packages.mjs', ['--packages=external'])).toBe('[2,4]');
    const inside = bundle('esb-out/inside.mjs', []);
    const out = pathToFileURL(join(app, 'esb-out')).href;
    // Said once, for every build that could have run (the relaxed ones need Node 21+, or a flag).
    expect(inside).toMatch(new RegExp(`^load: no WebAssembly build could start: (.*; )?${escape(
      `attnlab was bundled into ${out}/inside.mjs without the files it loads by new URL('./wasm/…', import.meta.url), ` +
      "which this bundler does not ship (esbuild and Rollup do not); keep attnlab external to the bundle (attnlab's README: Bundlers) (")
    }('[a-z-]+', )*'simd', 'scalar': their glue could not be imported from ${escape(out)}/wasm/\\)$`));
  });

  it('importing it prints nothing and adds no globals or process listeners', () => {
    const out = node('quiet.mjs', `
      const events = ['exit', 'beforeExit', 'uncaughtException', 'unhandledRejection', 'warning', 'message', 'SIGINT', 'SIGTERM'];
      const listeners = () => events.map((e) => process.listenerCount(e));
      const globals = new Set(Reflect.ownKeys(globalThis));
      const before = listeners();
      const printed = [];
      for (const k of ['log', 'info', 'warn', 'error', 'debug']) console[k] = (...a) => printed.push(k + ': ' + a.join(' '));
      process.stderr.write = (s) => { printed.push('stderr: ' + s); return true; };
      await import('attnlab');
      await import('attnlab/components');
      const added = Reflect.ownKeys(globalThis).filter((k) => !globals.has(k)).map(String);
      process.stdout.write(JSON.stringify({ printed, added, before, after: listeners() }));`);
    const r = JSON.parse(out);
    expect(r.printed).toEqual([]);
    expect(r.added).toEqual([]);
    expect(r.after).toEqual(r.before);
  });
});

describe('TypeScript consumers (strict, skipLibCheck off, no @webgpu/types)', () => {
  // Asynchronously: a synchronous tsc would keep Vitest's worker from answering its runner.
  const check = async (name: string, options: Record<string, unknown>, code: string, compiler = tsc, ext = 'ts') => {
    writeFileSync(join(app, `${name}.${ext}`), code);
    writeFileSync(join(app, `tsconfig.${name}.json`), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, target: 'es2022', ...options },
      files: [`${name}.${ext}`],
    }));
    try {
      return (await promisify(execFile)(process.execPath, [compiler, '-p', `tsconfig.${name}.json`], { cwd: app, encoding: 'utf8', timeout: 120_000 })).stdout;
    } catch (e) {
      return String((e as { stdout?: string }).stdout ?? e);
    }
  };
  // Every subpath in "exports"; the widgets' types need the DOM's.
  const everything = `
    import { load, loadModel, type Tensor, type AttentionResult } from 'attnlab';
    import * as widgets from 'attnlab/components';
    const t: Tensor = { data: new Float32Array(8), shape: [2, 4] };
    export const run = async (): Promise<AttentionResult> => (await load()).attention(t, t, t, { causal: true });
    // @ts-expect-error: an unknown score name is a type error, so the types are not 'any'
    export const bad = async () => (await load()).attention(t, t, t, { score: 'cosine' });
    // The widgets' events, typed: no cast to CustomEvent for their detail.
    export const listen = (el: HTMLElement) => {
      el.addEventListener('attn-pin', (e) => console.log(e.detail?.row, e.detail?.colLabel));
      el.addEventListener('attn-translated', (e) => console.log(e.detail.text));
      el.addEventListener('attn-points', (e) => console.log(e.detail.points[0].x));
      // @ts-expect-error: a detail has its own type, not 'any'
      el.addEventListener('attn-beam', (e) => console.log(e.detail.nope));
    };
    export { loadModel, widgets };
  `;

  const resolutions: [string, Record<string, string>][] = [
    ['nodenext', { module: 'nodenext', moduleResolution: 'nodenext' }],
    ['node16', { module: 'node16', moduleResolution: 'node16' }],
    ['bundler', { module: 'esnext', moduleResolution: 'bundler' }],
    // "moduleResolution": "node" (node10) reads no "exports": typesVersions maps the subpaths.
    ['node10', { module: 'esnext', moduleResolution: 'node' }],
  ];
  const nodeOnly = `
    import { load, type Tensor } from 'attnlab';
    const lib = await load();
    const t: Tensor = { data: new Float32Array(8), shape: [2, 4] };
    console.log(lib.attention(t, t, t).output.shape);
  `;
  const nodeOnlyOptions = { module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022'], types: ['node'] };

  it.each(resolutions)('%s resolves the types of every export', async (name, options) => {
    expect(await check(`all-${name}`, { ...options, lib: ['es2022', 'dom'], types: [] }, everything)).toBe('');
  }, 120_000);

  it("a Node project's (Node's types, not the DOM's) type-checks the main entry", async () => {
    expect(await check('node-only', nodeOnlyOptions, nodeOnly)).toBe('');
  }, 120_000);

  // TypeScript 4.9 has no moduleResolution bundler (5.0 added it).
  it.each(resolutions.filter(([name]) => name !== 'bundler'))(`TypeScript ${OLD_TS}: %s resolves the types of every export`, async (name, options) => {
    expect(await check(`old-${name}`, { ...options, lib: ['es2022', 'dom'], types: [] }, everything, oldTsc)).toBe('');
  }, 120_000);

  it(`TypeScript ${OLD_TS}: a Node project type-checks the main entry`, async () => {
    expect(await check('old-node-only', nodeOnlyOptions, nodeOnly, oldTsc)).toBe('');
  }, 120_000);

  // CommonJS files (.cts), as README's opening says: require under nodenext; import() and
  // resolution-mode under node16, which cannot require an ES module.
  it('a CommonJS file type-checks as README says: a plain import (require) under nodenext, import() and import type with resolution-mode under node16', async () => {
    const cjsOptions = (m: string) => ({ module: m, moduleResolution: m, lib: ['es2022'], types: ['node'] });
    expect(await check('cjs-nodenext', cjsOptions('nodenext'), `
      import { load, type Tensor } from 'attnlab';
      const t: Tensor = { data: new Float32Array(8), shape: [2, 4] };
      export const run = async (): Promise<number[]> => (await load()).attention(t, t, t).output.shape;
    `, tsc, 'cts')).toBe('');
    expect(await check('cjs-node16', cjsOptions('node16'), `
      import type { Tensor } from 'attnlab' with { 'resolution-mode': 'import' };
      const t: Tensor = { data: new Float32Array(8), shape: [2, 4] };
      export const run = async (): Promise<number[]> => {
        const { load } = await import('attnlab');
        return (await load()).attention(t, t, t).output.shape;
      };
    `, tsc, 'cts')).toBe('');
  }, 120_000);
});
