// loadTranslator(source, { worker: true }) in Node: the model in a worker_threads Worker of its
// own. The same properties and results as the in-thread translator (fra-eng GRU and Transformer,
// bit for bit), the same Errors for bad input (as rejections), calls settled in the order made,
// options.signal (queued, running, already aborted) with the next call working, a Worker that
// dies mid-call, dispose(), a dropped translator's Worker ended when collected, and a process that
// exits on its own while a Worker translator sits idle.
import { load, type Attnlab, type TranslationResult, type Translator, type WorkerTranslator } from 'attnlab';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChildScript, WATCH_WORKERS } from './child-script.js';

let lib: Attnlab;
beforeAll(async () => {
  lib = await load();  // the default build: threaded where the machine has 2 cores or more
});
afterAll(() => lib?.dispose());

const TEXTS = [
  'Je suis fatigué.',
  'Où est la gare ? Il fait beau aujourd\'hui.\nNous avons mangé une pomme.',
  '',
  'Tom a dit à Marie qu\'il ne pouvait pas venir à la fête parce qu\'il était malade.',
];

/** Every field of a result, typed arrays as arrays: equal objects mean equal results, bit for bit. */
function plain(r: TranslationResult): unknown {
  return JSON.parse(JSON.stringify(r, (_k, v: unknown) => (v instanceof Float32Array ? Array.from(v) : v)));
}

describe('loadTranslator(source, { worker: true })', () => {
  for (const arch of ['gru', 'transformer'] as const) {
    it(`fra-eng ${arch}: the same properties and results as the in-thread translator, in transferred Float32Arrays`, async () => {
      const sync = await lib.loadTranslator('fra-eng', { arch });
      const w = await lib.loadTranslator('fra-eng', { arch, worker: true });
      try {
        expect(w.runsIn).toBe('worker');
        for (const k of ['arch', 'srcLang', 'tgtLang', 'parameters', 'maxSourceTokens', 'maxTargetTokens', 'info'] as const) expect(w[k]).toEqual(sync[k]);
        for (const text of TEXTS) {
          for (const options of [{}, { beam: 5 }, { beam: 3, maxLength: 4, lengthPenalty: 1 }]) {
            const a = sync.translate(text, options), b = await w.translate(text, options);
            expect(plain(b), `${text} ${JSON.stringify(options)}`).toEqual(plain(a));
            const first = b.sentences[0]?.attention;
            if (first) expect((first.kind === 'alignment' ? first.alignment : first.cross).data).toBeInstanceOf(Float32Array);
          }
        }
        // Several sentences: the block-diagonal attention is still built when first read.
        const many = await w.translate(TEXTS[1]);
        expect(Object.getOwnPropertyDescriptor(many, 'attention')?.get).toBeTypeOf('function');
        expect(plain(many)).toEqual(plain(sync.translate(TEXTS[1])));
        expect(Object.getOwnPropertyDescriptor(many, 'attention')?.get).toBeUndefined();
      } finally {
        sync.dispose();
        w.dispose();
      }
    });
  }

  it('bad input: the in-thread Errors, as rejections, checked on the calling thread (not queued behind a translation)', async () => {
    const sync = await lib.loadTranslator('fra-eng', { arch: 'gru' });
    const w = await lib.loadTranslator('fra-eng', { arch: 'gru', worker: true });
    const cases: [unknown, unknown][] = [
      [42, undefined], ['x', { beam: 0 }], ['x', { beam: 2.5 }], ['x', { maxLength: 48 }], ['x', { maxLength: 0 }],
      ['x', { lengthPenalty: -1 }], ['x', { lengthPenalty: NaN }], ['x', { beams: 3 }], ['x', 'fast'],
    ];
    for (const [text, options] of cases) {
      let want = '';
      try {
        sync.translate(text as string, options as object);
      } catch (e) {
        want = (e as Error).message;
      }
      expect(want).toMatch(/^translate: /);
      await expect(w.translate(text as string, options as object)).rejects.toThrowError(want);
    }
    // Checked here: a bad call rejects while a long translation still holds the Worker.
    const long = w.translate(Array(40).fill('Le chat dort sur le grand lit rouge de la maison.').join(' '), { beam: 8 });
    const first = await Promise.race([long.then(() => 'translation'), w.translate('x', { beam: 0 }).catch(() => 'bad call')]);
    expect(first).toBe('bad call');
    await long;
    // The one option only the Worker translator takes.
    await expect(w.translate('x', { signal: 'stop' as unknown as AbortSignal })).rejects.toThrowError('translate: options.signal: expected an AbortSignal, got');
    expect(() => sync.translate('x', { signal: new AbortController().signal } as object)).toThrowError(/unknown option 'signal'/);
    await expect(lib.loadTranslator('fra-eng', { worker: 'yes' as unknown as true })).rejects.toThrowError('loadTranslator: options.worker: expected a boolean, got "yes"');
    // A bad model file: the in-thread load's Error, from the Worker.
    await expect(lib.loadTranslator(new Uint8Array(1000), { worker: true })).rejects.toThrowError(/^loadTranslator: model file: bad magic number \(not an attnlab model file\)$/);
    const file = new Uint8Array(readFileSync(new URL('../../web/models/fra-eng-gru.atl', import.meta.url)));
    file[Math.floor(file.length / 2)] ^= 4;
    const named = new File([file], 'mine.atl');
    await expect(lib.loadTranslator(named, { worker: true })).rejects.toThrowError(/^loadTranslator: model file "mine.atl": .*checksum/);
    // It works on.
    expect((await w.translate('Je suis là.')).text).toBe(sync.translate('Je suis là.').text);
    sync.dispose();
    w.dispose();
  });

  it('concurrent calls settle in the order made, each with its own result', async () => {
    const sync = await lib.loadTranslator('fra-eng');
    const w = await lib.loadTranslator('fra-eng', { worker: true });
    const texts = ['Il pleut.', 'Elle lit un livre. Le chat dort.', 'Bonjour.', 'Je ne sais pas.', 'Nous partons demain.', 'Où sont mes clés ?'];
    const order: number[] = [];
    // The first is the longest (beam 8), so later short calls would finish first if they could overtake it.
    const results = await Promise.all(texts.map((t, i) => w.translate(t, { beam: i === 0 ? 8 : 1 }).then((r) => {
      order.push(i);
      return r;
    })));
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    results.forEach((r, i) => expect(r.text).toBe(sync.translate(texts[i], { beam: i === 0 ? 8 : 1 }).text));
    sync.dispose();
    w.dispose();
  });

  it('options.signal: an aborted signal rejects with its reason; a queued call is dropped; the running one is stopped and the next call works', async () => {
    const w = await lib.loadTranslator('fra-eng', { worker: true });
    const reason = new Error('changed my mind');
    await expect(w.translate('Bonjour.', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    // Minutes of work (2000 sentences at beam 64): the test finishes only if the abort stopped it.
    const long = Array.from({ length: 2000 }, (_, i) => `Le chat numéro ${i} dort sur le grand lit rouge de la maison.`).join(' ');
    const running = new AbortController(), queued = new AbortController();
    const a = w.translate(long, { beam: 64, signal: running.signal });
    const b = w.translate('Il pleut.', { signal: queued.signal });
    const c = w.translate('Bonjour.');
    queued.abort(reason);
    await expect(b).rejects.toBe(reason);
    await new Promise((r) => setTimeout(r, 300));  // the long call is in the engine by now
    running.abort();
    await expect(a).rejects.toMatchObject({ name: 'AbortError' });
    // The call queued behind it runs in a fresh Worker, and so do later ones.
    expect((await c).text).toBe('Good afternoon.');
    expect((await w.translate('Il pleut.')).text).toBe("It's raining.");
    w.dispose();
  });

  it('a Worker that dies mid-call: that call rejects naming translate and the cause; the queued ones run in a fresh Worker', () => {
    // The thread's end comes from outside, as an out-of-memory kill or a crash would: process.exit()
    // evaluated inside it through the inspector, between two of the engine's instructions. In a
    // child whose session is enabled before any Worker exists: Node 20 segfaults in
    // NodeWorker.enable when a worker thread is still ending (here, an earlier test's translator
    // joining its pthreads), which killed this file's fork in 7 of 82 runs.
    // The fork's WebAssembly flags (the relaxed run's), so that load() picks the same build.
    const wasmFlags = process.execArgv.filter((a) => a.startsWith('--experimental-wasm'));
    const out = runChildScript('translator-dies', `
      import { load } from 'attnlab';
      ${WATCH_WORKERS}
      const lib = await load();
      const w = await lib.loadTranslator('fra-eng', { worker: true });
      const long = Array.from({ length: 2000 }, (_, i) => \`Le chat numéro \${i} dort sur le grand lit rouge de la maison.\`).join(' ');
      const calls = [w.translate(long, { beam: 64 }), w.translate('Il pleut.'), w.translate('Je suis fatigué.')]
        .map((c) => c.then((r) => r.text, (e) => \`rejected: \${e.message}\`));
      await new Promise((r) => setTimeout(r, 300));  // the long call is in the engine by now
      const thread = threads.findLast((t) => t.workerInfo.url.endsWith('/translator-worker.js'));
      const exit = JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression: 'process.exit(7)' } });
      await session.post('NodeWorker.sendMessageToWorker', { sessionId: thread.sessionId, message: exit });
      console.log(JSON.stringify(await Promise.all(calls)));
      // Off before the fresh Worker ends, for the same reason (the dead one ended before it answered).
      session.disconnect();
      w.dispose();
      lib.dispose();
    `, { nodeArgs: wasmFlags, timeout: 50_000 });
    expect(JSON.parse(out)).toEqual([
      "rejected: translate: the translator's Worker failed: the worker thread exited with code 7",
      "It's raining.",
      "I'm tired.",
    ]);
  }, 60_000);

  it('an abort during the load rejects with its reason', async () => {
    const ctl = new AbortController();
    const reason = new Error('not now');
    const p = lib.loadTranslator('fra-eng', { worker: true, signal: ctl.signal });
    setTimeout(() => ctl.abort(reason), 0);
    await expect(p).rejects.toBe(reason);
  });

  it('dispose() rejects the calls under way and queued, and later ones; lib.dispose() disposes Worker translators', async () => {
    const w = await lib.loadTranslator('fra-eng', { worker: true });
    const calls = [w.translate('Je suis fatigué.', { beam: 5 }), w.translate('Il pleut.')];
    w.dispose();
    expect(w.disposed).toBe(true);
    const disposed = /^translate: this translator has been disposed; call lib.loadTranslator\(\) for a new one$/;
    for (const c of calls) await expect(c).rejects.toThrowError(disposed);
    await expect(w.translate('Bonjour.')).rejects.toThrowError(disposed);
    w.dispose();  // twice is fine
    const own = await load({ variant: 'simd' });
    const x: WorkerTranslator = await own.loadTranslator('fra-eng', { arch: 'gru', worker: true });
    const y: Translator = await own.loadTranslator('fra-eng', { arch: 'gru' });
    expect((await x.translate('Bonjour.')).text).toBe(y.translate('Bonjour.').text);
    own.dispose();
    expect([x.disposed, y.disposed]).toEqual([true, true]);
    await expect(x.translate('Bonjour.')).rejects.toThrowError(disposed);
    // Disposed while a Worker translator loaded: the load rejects as the in-thread one's does.
    const again = await load({ variant: 'simd' });
    const loading = again.loadTranslator('fra-eng', { arch: 'gru', worker: true });
    again.dispose();
    await expect(loading).rejects.toThrowError(/^loadTranslator: this attnlab instance has been disposed; call load\(\) for a new one$/);
  });

  it('a Worker translator dropped without dispose() is collected and its Worker thread ends', () => {
    // A child with --expose-gc; the thread's end is seen through node:inspector's NodeWorker domain.
    const out = runChildScript('translator-gc', `
      import { load } from 'attnlab';
      import { Session } from 'node:inspector/promises';
      const session = new Session();
      session.connect();
      const threads = new Map();
      session.on('NodeWorker.attachedToWorker', ({ params }) => threads.set(params.sessionId, params.workerInfo.url));
      session.on('NodeWorker.detachedFromWorker', ({ params }) => threads.delete(params.sessionId));
      await session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
      const lib = await load();
      const translatorThreads = () => [...threads.values()].filter((url) => url.endsWith('/translator-worker.js')).length;
      const text = await (async () => {
        const tr = await lib.loadTranslator('fra-eng', { worker: true });
        return (await tr.translate('Je suis fatigué.')).text;
      })();
      const running = translatorThreads();
      for (let i = 0; i < 100 && translatorThreads(); i++) {
        globalThis.gc();
        await new Promise((r) => setTimeout(r, 50));
      }
      console.log(JSON.stringify({ text, running, after: translatorThreads() }));
      lib.dispose();
      session.disconnect();
    `, { nodeArgs: ['--expose-gc'], timeout: 50_000 });
    expect(JSON.parse(out)).toEqual({ text: "I'm tired.", running: 1, after: 0 });
  }, 60_000);

  it('an idle Worker translator keeps no process alive; one translating does until it answers', () => {
    const out = runChildScript('translator-exit', `
      import { load } from 'attnlab';
      const lib = await load();
      const tr = await lib.loadTranslator('fra-eng', { worker: true });
      // Nothing awaits this call: only the Worker can keep the process alive for its answer.
      tr.translate('Je suis fatigué.', { beam: 5 }).then((r) => console.log(JSON.stringify({ text: r.text })));
    `, { timeout: 30_000 });
    expect(JSON.parse(out)).toEqual({ text: "I'm tired." });
  }, 60_000);
});
