// loadTranslator(source, { worker: true }) in Chromium: the model runs in a module Worker of its
// own with the page's build (its variant, threads on a cross-origin isolated page), the page never
// instantiating the translators' module; results equal the page's own translator's bit for bit;
// an abort ends the running call's Worker and a fresh one answers the next call; dispose() ends
// the Worker. Once with attnlab on the page's origin, once from another origin (a CDN: the Worker
// starts from a blob: bootstrap) on a cross-origin isolated page. Under a CSP that lets no Worker
// start, the load rejects saying why. The page's longest task while a long translation runs is
// printed, not asserted.
import type { Browser, Page, Worker } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, repoRoot } from './helpers';
import { serveStatic, type StaticServer } from './static-server';

let browser: Browser;
let sameOrigin: StaticServer;
let cdn: StaticServer;
let site: StaticServer;

const page = (lib: string, models: string) => `<!doctype html><meta charset="utf-8"><title>translator in a Worker</title><link rel="icon" href="data:,">
<script type="module">
window.lib = await import(${JSON.stringify(lib)});
window.models = ${JSON.stringify(models)};
window.ready = true;
</script>`;

beforeAll(async () => {
  const cors = { 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin' };
  [browser, sameOrigin, cdn] = await Promise.all([
    launch(),
    serveStatic(repoRoot, false, { pages: {
      '/t.html': page('/dist/index.js', '/web/models/'),
      // A policy that lets no Worker start.
      '/no-workers.html': page('/dist/index.js', '/web/models/').replace('<link rel="icon" href="data:,">',
        `<link rel="icon" href="data:,"><meta http-equiv="Content-Security-Policy" content="worker-src 'none'">`),
    } }),
    serveStatic(repoRoot, false, { headers: cors, host: 'localhost' }),
  ]);
  site = await serveStatic(repoRoot, true, { pages: { '/t.html': page(`${cdn.url}dist/index.js`, `${cdn.url}web/models/`) } });
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([sameOrigin?.close(), cdn?.close(), site?.close()]);
});

interface Opened {
  page: Page;
  problems: string[];
  /** The nn builds' .wasm files requested, by the page or its Workers. */
  nnWasm: string[];
}

async function open(url: string): Promise<Opened> {
  const p = await browser.newPage();
  const problems: string[] = [], nnWasm: string[] = [];
  p.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  p.on('pageerror', (e) => problems.push(e.message));
  p.on('request', (r) => { const m = /attnlab-nn-[a-z-]+\.wasm$/.exec(r.url()); if (m) nnWasm.push(m[0]); });
  await p.goto(url);
  await p.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
  return { page: p, problems, nnWasm };
}

/**
 * The Workers the page started, in order: a translator's Worker comes first, before its thread
 * pool's (its URL: translator-worker.js, or a blob: bootstrap importing it from another origin).
 */
function started(p: Page): Worker[] {
  const all: Worker[] = [];
  p.on('worker', (w) => all.push(w));
  return all;
}

type Win = { lib: typeof import('attnlab'); models: string; lib0: import('attnlab').Attnlab; tr: import('attnlab').WorkerTranslator };

for (const where of ['same origin', 'a CDN, cross-origin isolated page'] as const) {
  describe(`loadTranslator(…, { worker: true }), attnlab from ${where}`, () => {
    it('runs in a Worker with the page\'s build; the page loads no translator module; results equal the page\'s translator\'s', async () => {
      const { page: p, problems, nnWasm } = await open(`${where === 'same origin' ? sameOrigin.url : site.url}t.html`);
      const workers = started(p);
      await p.evaluate(async () => {
        const w = window as unknown as Win;
        w.lib0 = await w.lib.load();
      });
      const before = workers.length;  // the page's own thread pool
      const r = await p.evaluate(async () => {
        const w = window as unknown as Win;
        const lib = w.lib0;
        const heap = lib.heapStats().total;
        w.tr = await lib.loadTranslator(`${w.models}fra-eng-transformer.atl`, { worker: true });
        const text = 'Je suis fatigué. Où est la gare ?\nIl fait beau aujourd\'hui.';
        const inWorker = await w.tr.translate(text, { beam: 5 });
        const heapAfter = lib.heapStats().total;  // before the page's own translator loads the module here
        const onPage = (await lib.loadTranslator(`${w.models}fra-eng-transformer.atl`)).translate(text, { beam: 5 });
        const plain = (x: unknown) => JSON.stringify(x, (_k, v: unknown) => (v instanceof Float32Array ? Array.from(v) : v));
        return {
          variant: lib.variant, threads: lib.threads, isolated: crossOriginIsolated, heapSame: heap === heapAfter, text: inWorker.text,
          same: plain(inWorker) === plain(onPage), float32: inWorker.attention.kind === 'transformer' && inWorker.attention.cross.data instanceof Float32Array,
          runsIn: w.tr.runsIn, maxTargetTokens: w.tr.maxTargetTokens,
        };
      });
      console.log(`${where}: page build ${r.variant} x${r.threads}; nn builds fetched: ${nnWasm.join(', ')}; Workers started: ${before} by load(), then ${workers.slice(before).map((w) => w.url().slice(0, 40)).join(', ')}`);
      expect(r.isolated).toBe(where !== 'same origin');
      if (where !== 'same origin') expect(r.threads).toBeGreaterThan(1);
      expect(r.text).toBe("I'm tired. Where is the station? He is handsome today.");
      expect(r.same).toBe(true);
      expect(r.float32).toBe(true);
      expect(r.runsIn).toBe('worker');
      expect(r.maxTargetTokens).toBe(47);
      // The page's heap did not grow: the Worker, not the page, instantiated the translators' module,
      // the build the page runs (requested twice: the Worker's, then the page's own translator's).
      expect(r.heapSame).toBe(true);
      expect(nnWasm).toEqual([`attnlab-nn-${r.variant}.wasm`, `attnlab-nn-${r.variant}.wasm`]);
      const first = workers[before];
      expect(first.url()).toMatch(where === 'same origin' ? /\/dist\/translator-worker\.js$/ : /^blob:/);
      // With threads, then the Worker's own pool and the page translator's (the build's .worker.js,
      // from a CDN a blob: bootstrap).
      const pool = r.threads > 1 ? 1 : 0;
      expect(workers.length - before).toBe(1 + 2 * pool);

      // A long translation: the page's own thread keeps turning; an abort ends the Worker.
      const closed = new Promise<void>((ok) => first.on('close', () => ok()));
      const beforeAbort = workers.length;
      const a = await p.evaluate(async () => {
        const w = window as unknown as Win;
        const long = Array.from({ length: 400 }, (_, i) => `Le chat numéro ${i} dort sur le grand lit rouge.`).join(' ');
        let longest = 0, frames = 0;
        const seen = new PerformanceObserver((l) => l.getEntries().forEach((e) => (longest = Math.max(longest, e.duration))));
        seen.observe({ type: 'longtask' });
        const ctl = new AbortController();
        const call = w.tr.translate(long, { beam: 16, signal: ctl.signal }).then(() => 'finished', (e: Error) => e.message);
        const t0 = performance.now();
        while (performance.now() - t0 < 500) await new Promise((r) => requestAnimationFrame(() => r(frames++)));
        ctl.abort(new Error('enough'));
        const outcome = await call;
        seen.disconnect();
        const next = (await w.tr.translate('Il pleut.')).text;
        return { outcome, longest, frames, next };
      });
      console.log(`${where}: while the Worker translated for 500 ms the page drew ${a.frames} frames; longest task ${a.longest.toFixed(0)} ms`);
      expect(a.outcome).toBe('enough');
      expect(a.next).toBe("It's raining.");
      await closed;  // the aborted call's Worker ended
      // A fresh Worker (and pool) loaded the model again and answered the next call.
      expect(workers.length - beforeAbort).toBe(1 + pool);
      const fresh = workers[beforeAbort];
      expect(fresh.url()).toMatch(where === 'same origin' ? /\/dist\/translator-worker\.js$/ : /^blob:/);

      // dispose() ends the Worker; a call afterwards rejects.
      const gone = new Promise<void>((ok) => fresh.on('close', () => ok()));
      const after = await p.evaluate(async () => {
        const w = window as unknown as Win;
        w.tr.dispose();
        return w.tr.translate('Il pleut.').then(() => 'resolved', (e: Error) => e.message);
      });
      expect(after).toMatch(/^translate: this translator has been disposed/);
      await gone;
      // Only the page's own pools are left.
      expect(p.workers().length).toBe(before + pool);
      expect(problems).toEqual([]);
      await p.close();
    });
  });
}

describe('loadTranslator(…, { worker: true }) when its Worker ends by itself', () => {
  it('a Worker that closes (no error event): the call it holds rejects naming translate, later calls run in a fresh Worker', async () => {
    const { page: p, problems } = await open(`${sameOrigin.url}t.html`);
    const workers = started(p);
    await p.evaluate(async () => {
      const w = window as unknown as Win;
      w.lib0 = await w.lib.load();
      w.tr = await w.lib0.loadTranslator(`${w.models}fra-eng-gru.atl`, { worker: true });
    });
    const first = workers.find((x) => x.url().endsWith('/dist/translator-worker.js'))!;
    const closed = new Promise<void>((ok) => first.on('close', () => ok()));
    // An end the page is not told of: the Worker's own close(), put there through the DevTools
    // protocol, run as the first call arrives. Chromium finishes that task (the first call
    // answers), then ends the Worker with the second call posted to it and no error event.
    await first.evaluate(() => addEventListener('message', () => close(), { capture: true, once: true }));
    const outcomes = await p.evaluate(() => {
      const w = window as unknown as Win;
      return Promise.all(['Je suis fatigué.', 'Il pleut.', 'Je suis fatigué.'].map((t) => w.tr.translate(t).then((r) => r.text, (e: Error) => `rejected: ${e.message}`)));
    });
    await closed;
    expect(outcomes).toEqual([
      "I'm tired.",
      "rejected: translate: the translator's Worker failed: it ended without an error event (closed, crashed or stopped by the browser)",
      "I'm tired.",
    ]);
    // The third call's fresh Worker.
    expect(workers.filter((x) => x.url().endsWith('/dist/translator-worker.js'))).toHaveLength(2);
    // And an idle Worker that closes: once the page has its lock (it ended), the next call does
    // not wait for it.
    await workers.at(-1)!.evaluate(() => close());
    expect(await p.evaluate(async () => {
      const locks = async () => { const q = await navigator.locks.query(); return q.held!.length + q.pending!.length; };
      while (await locks()) await new Promise((r) => setTimeout(r, 20));
      return (await (window as unknown as Win).tr.translate('Je suis fatigué.')).text;
    })).toBe("I'm tired.");
    expect(problems).toEqual([]);
    await p.close();
  });
});

describe('loadTranslator(…, { worker: true }) where no Worker may start', () => {
  it('rejects saying why each way failed; the page\'s own translator still loads', async () => {
    const { page: p } = await open(`${sameOrigin.url}no-workers.html`);
    const r = await p.evaluate(async () => {
      const w = window as unknown as Win;
      const lib = await w.lib.load();
      const error = await lib.loadTranslator(`${w.models}fra-eng-gru.atl`, { worker: true }).then(() => 'loaded', (e: Error) => e.message);
      const text = (await lib.loadTranslator(`${w.models}fra-eng-gru.atl`)).translate('Il pleut.').text;
      return { error, text };
    });
    expect(r.error).toMatch(/^loadTranslator: no Worker could start: the package URL: .*a blob: bootstrap: .*a data: bootstrap: /);
    expect(r.text).toBe("It's raining.");
    await p.close();
  });
});
