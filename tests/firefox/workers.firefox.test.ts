// The package's three kinds of Worker in Firefox, each against the same work on the page's own
// thread: loadTranslator(…, { worker: true }), loadModel's checkpoint Worker (the default) and
// createTrainer({ worker: true }). Once with attnlab on the page's origin, once from another origin
// (a CDN: the Workers start from a blob: bootstrap). Both pages are plain (one thread): on a
// cross-origin isolated page, a translator's Worker from a CDN never finished loading in about 1
// run in 8 on a busy machine, once its own thread pool's Worker had started (an open bug). An
// abort, cancel() or dispose() ends the Worker, and the console stays clean (Firefox once logged
// an uncaught "Security Error" there, for a cross-origin Worker URL tried and refused). Workers are seen starting and ending through
// WebDriver BiDi's realms (puppeteer's workercreated and workerdestroyed).
import type { Browser, Page, WebWorker } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { serveStatic, type StaticServer } from '../browser/static-server';
import { launchFirefox, repoRoot } from './firefox';

let browser: Browser;
let sameOrigin: StaticServer;
let cdn: StaticServer;
let course: StaticServer;

const html = (base: string) => `<!doctype html><meta charset="utf-8"><title>Workers in Firefox</title><link rel="icon" href="data:,">
<script type="module">
window.lib = await import('${base}dist/index.js');
window.base = '${base}';
document.documentElement.dataset.ready = '';
</script>`;

beforeAll(async () => {
  const cors = { 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin' };
  [browser, sameOrigin, cdn] = await Promise.all([
    launchFirefox(),
    serveStatic(repoRoot, false, { pages: { '/w.html': html('/') } }),
    serveStatic(repoRoot, false, { headers: cors, host: 'localhost' }),
  ]);
  course = await serveStatic(repoRoot, false, { pages: { '/w.html': html(cdn.url) } });
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([sameOrigin?.close(), cdn?.close(), course?.close()]);
});

type Win = {
  lib: typeof import('attnlab');
  base: string;
  lib0: import('attnlab').Attnlab;
  tr: import('attnlab').WorkerTranslator;
};

for (const where of ['same origin', 'a CDN'] as const) {
  describe(`Workers in Firefox, attnlab from ${where}`, () => {
    let page: Page;
    const problems: string[] = [];
    const created: WebWorker[] = [];
    const ended = new Set<WebWorker>();
    // A call's Worker: the package's own script, or a blob: bootstrap importing it.
    const script = (name: string) => (where === 'same origin' ? new RegExp(`/dist/${name}\\.js$`) : /^blob:/);
    /** The i-th Worker the page started (the first a call starts is its own; thread pools follow). */
    const nth = async (i: number) => {
      await expect.poll(() => created.length).toBeGreaterThan(i);
      return created[i];
    };
    const gone = (w: WebWorker) => expect.poll(() => ended.has(w)).toBe(true);

    beforeAll(async () => {
      page = await browser.newPage();
      page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
      page.on('pageerror', (e) => problems.push(`uncaught: ${(e as Error).message}`));
      page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
      page.on('workercreated', (w) => created.push(w));
      page.on('workerdestroyed', (w) => ended.add(w));
      await page.goto(`${(where === 'same origin' ? sameOrigin : course).url}w.html`);
      await page.waitForSelector('html[data-ready]');
      const threads = await page.evaluate(async () => {
        const w = window as unknown as Win;
        w.lib0 = await w.lib.load();
        return w.lib0.threads;
      });
      // The instance's thread pool, reported before any test counts the Workers it starts.
      await vi.waitFor(() => expect(created.length).toBe(threads - 1));
    });
    afterAll(async () => {
      await page?.evaluate(() => (window as unknown as Win).lib0.dispose());
      await page?.close();
    });

    test('loadTranslator({ worker: true }): the page\'s translator\'s result; an abort ends the Worker and a fresh one answers; dispose() ends it', async () => {
      const first = created.length;
      const r = await page.evaluate(async () => {
        const w = window as unknown as Win;
        const model = `${w.base}web/models/fra-eng-transformer.atl`;
        w.tr = await w.lib0.loadTranslator(model, { worker: true });
        const text = 'Je suis fatigué. Où est la gare ?\nIl fait beau aujourd\'hui.';
        const inWorker = await w.tr.translate(text, { beam: 5 });
        const onPage = (await w.lib0.loadTranslator(model)).translate(text, { beam: 5 });
        const plain = (x: unknown) => JSON.stringify(x, (_k, v: unknown) => (v instanceof Float32Array ? Array.from(v) : v));
        return { variant: w.lib0.variant, threads: w.lib0.threads, isolated: crossOriginIsolated, text: inWorker.text, same: plain(inWorker) === plain(onPage), runsIn: w.tr.runsIn };
      });
      const translator = await nth(first);
      console.log(`${where}: page build ${r.variant} x${r.threads}; Workers started by the translators: ${created.slice(first).map((x) => x.url().slice(0, 50)).join(', ')}`);
      expect([r.isolated, r.threads]).toEqual([false, 1]);
      expect(r.text).toBe("I'm tired. Where is the station? He is handsome today.");
      expect(r.same).toBe(true);
      expect(r.runsIn).toBe('worker');
      expect(translator.url()).toMatch(script('translator-worker'));

      const beforeAbort = created.length;
      const a = await page.evaluate(async () => {
        const w = window as unknown as Win;
        // Long enough (seconds) that the abort comes while the Worker is still in it.
        const long = Array.from({ length: 400 }, (_, i) => `Le chat numéro ${i} dort sur le grand lit rouge.`).join(' ');
        const ctl = new AbortController();
        const call = w.tr.translate(long, { beam: 16, signal: ctl.signal }).then(() => 'finished', (e: Error) => e.message);
        setTimeout(() => ctl.abort(new Error('enough')), 300);
        const outcome = await call;
        return { outcome, next: (await w.tr.translate('Il pleut.')).text };
      });
      expect(a).toEqual({ outcome: 'enough', next: "It's raining." });
      await gone(translator);
      const fresh = await nth(beforeAbort);
      expect(fresh.url()).toMatch(script('translator-worker'));

      const after = await page.evaluate(async () => {
        const w = window as unknown as Win;
        w.tr.dispose();
        return w.tr.translate('Il pleut.').then(() => 'resolved', (e: Error) => e.message);
      });
      expect(after).toMatch(/^translate: this translator has been disposed/);
      await gone(fresh);
      expect(problems).toEqual([]);
    });

    test('loadModel in its Worker: forward equals the page\'s bit for bit; dispose() ends the Worker; an abort cancels a stalled load and ends its Worker', async () => {
      const first = created.length;
      const r = await page.evaluate(async () => {
        const w = window as unknown as Win;
        const fixture = `${w.base}tests/pretrained/fixtures/gpt-neo-f32/`;
        const inWorker = await w.lib.loadModel(fixture), onPage = await w.lib.loadModel(fixture, { worker: false });
        const a = await inWorker.forward('the cat sat on the mat', { attentions: true }), b = await onPage.forward('the cat sat on the mat', { attentions: true });
        const same = (x: Float32Array, y: Float32Array) => x.length === y.length && x.every((v, i) => Object.is(v, y[i]));
        inWorker.dispose();
        onPage.dispose();
        return {
          runsIn: [inWorker.runsIn, onPage.runsIn], shape: a.attentions!.shape, ids: a.ids.length === b.ids.length && a.ids.every((v, i) => v === b.ids[i]),
          logits: same(a.logits.data, b.logits.data), attentions: same(a.attentions!.data, b.attentions!.data),
          afterDispose: await inWorker.forward([1]).then(() => 'resolved', (e: Error) => e.message),
        };
      });
      expect(r).toEqual({ runsIn: ['worker', 'caller'], shape: [2, 4, 19, 19], ids: true, logits: true, attentions: true, afterDispose: 'forward: the model has been disposed' });
      const model = await nth(first);
      expect(model.url()).toMatch(script('pretrained/worker'));
      await gone(model);

      const beforeAbort = created.length;
      const error = await page.evaluate(async () => {
        const w = window as unknown as Win;
        const fixture = `${w.base}tests/pretrained/fixtures/gpt-neo-f32/`;
        // A download that sends its first 4 KB and then stalls, as a slow network would.
        const bytes = new Uint8Array(await (await fetch(`${fixture}model.safetensors`)).arrayBuffer());
        const stalled = new ReadableStream<Uint8Array>({ start(c) { c.enqueue(bytes.slice(0, 4096)); } });
        const ctl = new AbortController();
        return w.lib.loadModel({ config: `${fixture}config.json`, tokenizer: `${fixture}tokenizer.json`, weights: new Response(stalled, { headers: { 'content-length': String(bytes.length) } }) },
          { signal: ctl.signal, onProgress: () => setTimeout(() => ctl.abort(new Error('cancelled by the learner')), 50) }).then(() => 'loaded', (e: Error) => e.message);
      });
      expect(error).toBe('cancelled by the learner');
      const loading = await nth(beforeAbort);
      expect(loading.url()).toMatch(script('pretrained/worker'));
      await gone(loading);
      expect(problems).toEqual([]);
    });

    test('createTrainer({ worker: true }): the in-thread trainer\'s losses, decreasing; cancel() and the instance\'s dispose() end the Worker', async () => {
      type Run = { progress: { step: number; loss: number; exactMatch: number; thread: string }[]; reason: string; thread: string };
      // disposeInstance: on an instance of its own (one thread: no pool), whose dispose() is to
      // cancel the trainer; otherwise cancel() after the third evaluation.
      const train = (worker: boolean, disposeInstance = false) => page.evaluate(async (worker, disposeInstance) => {
        const w = window as unknown as Win;
        const lib = disposeInstance ? await w.lib.load({ threads: 1 }) : w.lib0;
        const progress: Run['progress'] = [];
        const s = lib.createTrainer({ task: 'reverse', hidden: 16, evalEvery: 10, evalSize: 10, maxSeconds: 60, targetAccuracy: 1, worker,
          onProgress: ({ step, loss, exactMatch, thread }) => {
            progress.push({ step, loss, exactMatch, thread });
            if (disposeInstance) lib.dispose();
            else if (progress.length === 3) s.cancel();
          } });
        const d = await s.done;
        return { progress, reason: d.reason, thread: d.thread };
      }, worker, disposeInstance) as Promise<Run>;
      const first = created.length;
      const inWorker = await train(true);
      const trainer = await nth(first);
      expect(trainer.url()).toMatch(script('trainer-worker'));
      await gone(trainer);
      const onPage = await train(false);
      expect(inWorker.progress.map((p) => p.thread)).toEqual(['worker', 'worker', 'worker']);
      expect(onPage.progress.map((p) => p.thread)).toEqual(['main', 'main', 'main']);
      const numbers = (p: Run['progress']) => p.map(({ step, loss, exactMatch }) => ({ step, loss, exactMatch }));
      expect(numbers(inWorker.progress)).toEqual(numbers(onPage.progress));
      const loss = inWorker.progress.map((p) => p.loss);
      console.log(`${where}: trainer losses at steps 10, 20, 30: ${loss.map((l) => l.toFixed(3)).join(', ')}`);
      expect(loss[2]).toBeLessThan(loss[0]);
      expect([inWorker.reason, inWorker.thread]).toEqual(['cancelled', 'worker']);

      const beforeDispose = created.length;
      const disposed = await train(true, true);
      expect(disposed).toMatchObject({ reason: 'cancelled', thread: 'worker', progress: [{ thread: 'worker' }] });
      const second = await nth(beforeDispose);
      expect(second.url()).toMatch(script('trainer-worker'));
      await gone(second);
      expect(problems).toEqual([]);
    });
  });
}
