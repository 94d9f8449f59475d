// loadModel in Chromium: by default the model runs in a Worker of its own (worker.ts), with the
// same methods as on the page (worker: false). On the committed tiny checkpoints
// (tests/pretrained/fixtures), served with the built package from one local origin: forward's
// logits and attentions equal the page's bit for bit, fillMask's too, generate() streams its
// tokens (equal to the page's, each with its attention), progress is forwarded, an AbortSignal
// cancels a load that is under way (its Worker ended), dispose() ends the Worker, and a bad
// file's Error names it as the page's own load does.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launch, repoRoot } from './helpers';
import { serveStatic, type StaticServer } from './static-server';

let browser: Browser;
let server: StaticServer;
let page: Page;
const problems: string[] = [];

const html = `<!doctype html><meta charset="utf-8"><title>models in a Worker</title><link rel="icon" href="data:,">
<script type="module">
window.lib = await import('/dist/index.js');
window.fixture = (name) => '/tests/pretrained/fixtures/' + name + '/';
window.ready = true;
</script>`;

// The same page under a policy that lets no Worker start.
const noWorkers = html.replace('<link rel="icon" href="data:,">', `<link rel="icon" href="data:,"><meta http-equiv="Content-Security-Policy" content="worker-src 'none'">`);

beforeAll(async () => {
  [browser, server] = await Promise.all([launch(), serveStatic(repoRoot, false, { pages: { '/models.html': html, '/no-workers.html': noWorkers } })]);
  page = await browser.newPage();
  // A base URL guesses tokenizer.json first; the fixtures with vocabulary files answer 404 to it.
  page.on('console', (m) => { if (m.type() === 'error' && !m.location().url.endsWith('/tokenizer.json')) problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(e.message));
  await page.goto(`${server.url}models.html`);
  await page.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
  pageWorkers = page.workers().length;
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const workers = () => page.workers().length;
let pageWorkers = 0;  // the page's own Workers, before any test starts one

describe('loadModel in a browser Worker', () => {
  it('runs in a Worker by default; forward equals the page\'s bit for bit, with progress forwarded', async () => {
    const before = workers();
    const r = await page.evaluate(async () => {
      const { lib, fixture } = window as unknown as { lib: typeof import('attnlab'); fixture: (n: string) => string };
      const out: Record<string, unknown> = {};
      for (const name of ['gpt2-f32', 'gpt-neo-f32', 'bert-model-f32']) {
        const progress: number[] = [];
        const inWorker = await lib.loadModel(fixture(name), { onProgress: (p) => progress.push(p.loaded) });
        const onPage = await lib.loadModel(fixture(name), { worker: false });
        const text = 'the cat sat on the mat';
        const a = await inWorker.forward(text, { attentions: true }), b = await onPage.forward(text, { attentions: true });
        const same = (x: Float32Array, y: Float32Array) => x.length === y.length && x.every((v, i) => Object.is(v, y[i]));
        out[name] = {
          runsIn: [inWorker.runsIn, onPage.runsIn], shape: a.attentions!.shape, ids: a.ids.length === b.ids.length && a.ids.every((v, i) => v === b.ids[i]),
          logits: same(a.logits.data, b.logits.data), attentions: same(a.attentions!.data, b.attentions!.data),
          progressLast: progress.at(-1), heap: inWorker.heapBytes() > 0,
        };
        (window as unknown as { keep: unknown[] }).keep = [...((window as unknown as { keep?: unknown[] }).keep ?? []), inWorker, onPage];
      }
      return out;
    });
    for (const name of ['gpt2-f32', 'gpt-neo-f32', 'bert-model-f32']) {
      const x = r[name] as Record<string, unknown>;
      expect(x.runsIn).toEqual(['worker', 'caller']);
      expect(x.ids).toBe(true);
      expect(x.logits).toBe(true);
      expect(x.attentions).toBe(true);
      expect(x.heap).toBe(true);
      expect(x.progressLast).toBeGreaterThan(0);
    }
    expect(workers()).toBe(before + 3);
    // dispose() ends each Worker; a call afterwards is a named Error.
    const after = await page.evaluate(async () => {
      const keep = (window as unknown as { keep: import('attnlab').PretrainedModel[] }).keep;
      keep.forEach((m) => m.dispose());
      return keep[0].forward([1]).then(() => 'resolved', (e: Error) => e.message);
    });
    expect(after).toBe('forward: the model has been disposed');
    await expect.poll(workers).toBe(before);
    expect(problems).toEqual([]);
  });

  it('fillMask equals the page\'s; generate streams tokens equal to the page\'s, each with its attention', async () => {
    const r = await page.evaluate(async () => {
      const { lib, fixture } = window as unknown as { lib: typeof import('attnlab'); fixture: (n: string) => string };
      const bertW = await lib.loadModel(fixture('bert-mlm-bf16')), bertP = await lib.loadModel(fixture('bert-mlm-bf16'), { worker: false });
      const maskW = await bertW.fillMask('the cat sat on the [MASK] .'), maskP = await bertP.fillMask('the cat sat on the [MASK] .');
      bertW.dispose();
      bertP.dispose();
      const gW = await lib.loadModel(fixture('gpt-neo-f32')), gP = await lib.loadModel(fixture('gpt-neo-f32'), { worker: false });
      const opts = { maxTokens: 8, temperature: 0.9, topK: 5, seed: 3 };
      // Streaming: each token reaches the loop as its step ends, the page free between steps.
      const streamed: { id: number; position: number; shape: number[]; sum: number; ticksBefore: number }[] = [];
      let ticks = 0;
      const timer = setInterval(() => ticks++, 0);
      for await (const t of gW.generate('the cat', opts))
        streamed.push({ id: t.id, position: t.position, shape: t.attention.shape, sum: Array.from(t.attention.data).reduce((a, b) => a + b, 0), ticksBefore: ticks });
      clearInterval(timer);
      const onPage: { id: number; data: number[] }[] = [];
      for await (const t of gP.generate('the cat', opts)) onPage.push({ id: t.id, data: Array.from(t.attention.data) });
      // Breaking out of the loop ends a generation; the model then takes calls again.
      let n = 0;
      for await (const _ of gW.generate('the cat', { maxTokens: 20 })) if (++n === 2) break;
      const afterBreak = (await gW.forward('the cat')).ids.length;
      gW.dispose();
      gP.dispose();
      return { maskW: JSON.stringify(maskW), maskP: JSON.stringify(maskP), streamed, onPage, afterBreak, n };
    });
    expect(r.maskW).toBe(r.maskP);
    expect(r.streamed).toHaveLength(8);
    expect(r.streamed.map((t) => t.id)).toEqual(r.onPage.map((t) => t.id));
    r.streamed.forEach((t, i) => {
      expect(t.shape.slice(2)).toEqual([t.position]);
      expect(t.position).toBe(r.streamed[0].position + i);
      // Each [layer, head] row is a distribution over the context.
      expect(Math.abs(t.sum - t.shape[0] * t.shape[1])).toBeLessThan(1e-3);
    });
    // The timer ran while the Worker computed: the page's event loop was free during generation.
    expect(r.streamed.at(-1)!.ticksBefore).toBeGreaterThan(0);
    expect(r.n).toBe(2);
    expect(r.afterBreak).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });

  it('cancels a load under way on its AbortSignal and ends the Worker', async () => {
    // The previous test's Workers may still be ending (once CI counted one of them here, and then
    // 0 at the end): start from the page's own count.
    await expect.poll(workers).toBe(pageWorkers);
    const before = pageWorkers;
    const r = await page.evaluate(async () => {
      const { lib, fixture } = window as unknown as { lib: typeof import('attnlab'); fixture: (n: string) => string };
      const bytes = new Uint8Array(await (await fetch(fixture('gpt2-f32') + 'model.safetensors')).arrayBuffer());
      // A download that sends its first 4 KB and then stalls, as a slow network would.
      const stalled = new ReadableStream<Uint8Array>({ start(c) { c.enqueue(bytes.slice(0, 4096)); } });
      const ctl = new AbortController();
      const progress: number[] = [];
      const loading = lib.loadModel({ config: fixture('gpt2-f32') + 'config.json', weights: new Response(stalled, { headers: { 'content-length': String(bytes.length) } }), vocab: fixture('gpt2-f32') + 'vocab.json', merges: fixture('gpt2-f32') + 'merges.txt' },
        { signal: ctl.signal, onProgress: (p) => { progress.push(p.loaded); if (progress.length === 1) setTimeout(() => ctl.abort(new Error('cancelled by the learner')), 50); } });
      const error = await loading.then(() => 'loaded', (e: Error) => e.message);
      const again = await lib.loadModel(fixture('gpt2-f32'));
      const ok = (await again.forward('the cat')).logits.shape;
      again.dispose();
      return { error, progress, ok };
    });
    expect(r.error).toBe('cancelled by the learner');
    expect(r.progress[0]).toBeGreaterThan(8);
    expect(r.ok[0]).toBeGreaterThan(0);
    await expect.poll(workers).toBe(before);
    expect(problems).toEqual([]);
  });

  it('refuses bad input with named Errors, in the Worker as on the page', async () => {
    const r = await page.evaluate(async () => {
      const { lib, fixture } = window as unknown as { lib: typeof import('attnlab'); fixture: (n: string) => string };
      const m = await lib.loadModel(fixture('gpt2-f32'));
      const msg = (p: Promise<unknown>) => p.then(() => 'resolved', (e: Error) => e.message);
      const tooLong = await msg(m.forward(new Array(33).fill(1)));
      const badOption = await msg(lib.loadModel(fixture('gpt2-f32'), { worker: 'yes' as never }));
      const still = (await m.forward([1, 2, 3])).logits.shape;
      m.dispose();
      return { tooLong, badOption, still };
    });
    expect(r.tooLong).toBe("forward: 33 tokens exceed the model's 32 positions");
    expect(r.badOption).toBe('loadModel: options.worker: expected a boolean, got "yes"');
    expect(r.still).toEqual([3, 96]);
  });

  it('names the file behind a bad load as the caller gave it, from the Worker as on the page', async () => {
    const r = await page.evaluate(async () => {
      const { lib, fixture } = window as unknown as { lib: typeof import('attnlab'); fixture: (n: string) => string };
      const gpt2 = fixture('gpt2-f32');
      const bytes = new Uint8Array(await (await fetch(gpt2 + 'model.safetensors')).arrayBuffer()).slice(0, -64);
      const tokenizer = { vocab: gpt2 + 'vocab.json', merges: gpt2 + 'merges.txt' };
      const cases = {
        otherWeights: { config: gpt2 + 'config.json', weights: fixture('bert-model-f32') + 'model.safetensors', ...tokenizer },
        notAConfig: { config: gpt2 + 'vocab.json', weights: gpt2 + 'model.safetensors', ...tokenizer },
        file: { config: gpt2 + 'config.json', weights: new File([bytes], 'gpt2-small.safetensors'), ...tokenizer },
        blob: { config: gpt2 + 'config.json', weights: new Blob([bytes]), ...tokenizer },
      };
      const out: Record<string, string[]> = {};
      for (const [name, files] of Object.entries(cases))
        out[name] = await Promise.all([true, false].map((worker) => lib.loadModel(files, { worker }).then(() => 'loaded', (e: Error) => e.message)));
      return out;
    });
    const [w, p] = ['/tests/pretrained/fixtures/bert-model-f32/model.safetensors', '/tests/pretrained/fixtures/gpt2-f32/vocab.json'];
    expect(r.otherWeights[0]).toMatch(new RegExp(`^loadModel: files\\.weights "${w}": checkpoint: missing tensor '`));
    expect(r.notAConfig[0]).toMatch(new RegExp(`^loadModel: files\\.config "${p}": no architectures and model_type`));
    expect(r.file[0]).toMatch(/^loadModel: files\.weights "gpt2-small\.safetensors": safetensors: tensor '.*': .*truncated file\?$/);
    expect(r.blob[0]).toMatch(/^loadModel: safetensors: tensor '.*': .*truncated file\?$/);  // no name to give
    for (const [worker, page] of Object.values(r)) expect(worker).toBe(page);
    await expect.poll(workers).toBe(pageWorkers);
    expect(problems).toEqual([]);
  });

  it('a model whose instance trapped in its Worker refuses later calls with an Error that says so', async () => {
    const before = page.workers();
    await page.evaluate(async () => {
      const { lib, fixture } = window as unknown as { lib: typeof import('attnlab'); fixture: (n: string) => string };
      (window as unknown as { model: unknown }).model = await lib.loadModel(fixture('gpt2-f32'));
    });
    const worker = page.workers().find((w) => !before.includes(w))!;
    // No input makes a trap: a setter for a field the binding writes into its out object throws
    // one through the engine's frames, inside the model's Worker (wasm-traps.test.ts in Node).
    await worker.evaluate(() => Object.defineProperty(Object.prototype, 'ctx', {
      configurable: true,
      set() {
        throw new WebAssembly.RuntimeError('unreachable');
      },
    }));
    const r = await page.evaluate(async () => {
      const m = (window as unknown as { model: import('attnlab').PretrainedModel }).model;
      const err = (p: Promise<unknown>) => p.then(() => 'resolved', (e: Error) => e.message);
      const out = [m.runsIn, await err(m.forward('the cat')), await err(m.forward('the cat'))];
      m.dispose();
      return out;
    });
    expect(r).toEqual([
      'worker',
      'forward: the WebAssembly instance trapped (RuntimeError: unreachable) and cannot be used again; call loadModel() for a new model',
      'forward: the WebAssembly instance trapped in an earlier call (RuntimeError: unreachable) and cannot be used again; call loadModel() for a new model',
    ]);
    await expect.poll(workers).toBe(pageWorkers);
    expect(problems).toEqual([]);
  });

  it('where no Worker may start (CSP worker-src \'none\'), runs on the page by default and says why; worker: true rejects', async () => {
    const p = await browser.newPage();
    await p.goto(`${server.url}no-workers.html`);
    await p.waitForFunction(() => (window as unknown as { ready?: boolean }).ready === true);
    const r = await p.evaluate(async () => {
      const { lib, fixture } = window as unknown as { lib: typeof import('attnlab'); fixture: (n: string) => string };
      const m = await lib.loadModel(fixture('gpt2-f32'));
      const shape = (await m.forward('the cat')).logits.shape;
      const out = { runsIn: m.runsIn, workerError: m.workerError, shape };
      m.dispose();
      const forced = await lib.loadModel(fixture('gpt2-f32'), { worker: true }).then(() => 'loaded', (e: Error) => e.message);
      return { ...out, forced };
    });
    await p.close();
    expect(r.runsIn).toBe('caller');
    expect(r.workerError).toMatch(/^no Worker could start, the model runs on this thread: the package URL: .*; a blob: bootstrap: .*; a data: bootstrap: /);
    expect(r.shape).toEqual([6, 96]);  // 'the cat': t, he, ' ', c, a, t
    expect(r.forced).toMatch(/^loadModel: no Worker could start: the package URL: /);
  });
});
