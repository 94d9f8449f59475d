// A WebAssembly instance that trapped (RuntimeError: unreachable, memory access out of bounds)
// inside a call is not safe to run again: the trap skipped the C++ epilogues (the shadow stack
// pointer, a held lock, a half-built object). Its translator or model refuses every later call
// with an Error that says so; the instance loads a fresh nn module for the next loadTranslator(),
// and a Worker translator ends its Worker and loads the model in a fresh one for the next call.
// Out of memory is no trap: the bindings turn std::bad_alloc into an Error and the instance
// keeps working (bad-input.test.ts). No input provokes a trap, so the tests make one inside the
// binding call: a setter on Object.prototype for a field the binding writes into its `out`
// object throws a WebAssembly.RuntimeError through the engine's frames, as a trap would.
import { load, loadModel } from 'attnlab';
import { afterEach, expect, it } from 'vitest';
import { runChildScript } from './child-script.js';

/** Makes the binding's write of `field` into its out object throw a trap, until the returned function is called. */
function trapOn(field: string): () => void {
  Object.defineProperty(Object.prototype, field, {
    configurable: true,
    set() {
      throw new WebAssembly.RuntimeError('unreachable');
    },
  });
  return () => delete (Object.prototype as Record<string, unknown>)[field];
}

let undo: (() => void) | null = null;
afterEach(() => {
  undo?.();
  undo = null;
});

it('an in-process translator whose instance trapped refuses later calls; loadTranslator() again gets a fresh module', async () => {
  const lib = await load({ variant: 'simd' });
  const tr = await lib.loadTranslator('fra-eng', { arch: 'gru' });
  const other = await lib.loadTranslator('fra-eng', { arch: 'transformer' });
  expect(tr.translate('Je suis fatigué.').text).toBe("I'm tired.");
  undo = trapOn('sourcePieces');
  expect(() => tr.translate('Je suis fatigué.')).toThrowError(
    /^translate: the WebAssembly instance trapped \(RuntimeError: unreachable\) and cannot be used again; call lib\.loadTranslator\(\) for a new translator$/);
  undo();
  undo = null;
  // The same instance, then its other translator: refused, not run on a broken heap.
  const refused = /^translate: the WebAssembly instance trapped in an earlier call \(RuntimeError: unreachable\) and cannot be used again; call lib\.loadTranslator\(\) for a new translator$/;
  expect(() => tr.translate('Je suis fatigué.')).toThrowError(refused);
  expect(() => other.translate('Je suis fatigué.')).toThrowError(refused);
  tr.dispose();
  other.dispose();
  const fresh = await lib.loadTranslator('fra-eng', { arch: 'gru' });
  expect(fresh.translate('Je suis fatigué.').text).toBe("I'm tired.");
  // The rest of the instance (the core module) was never touched.
  expect(lib.maskedSoftmax({ data: Float32Array.of(0, 0), shape: [1, 2] }).data).toEqual(Float32Array.of(0.5, 0.5));
  lib.dispose();
});

it('a model whose instance trapped refuses later calls', async () => {
  const dir = new URL('../pretrained/fixtures/gpt2-f32/', import.meta.url);
  const model = await loadModel(dir);
  const ids = Int32Array.of(1, 2, 3);
  const want = (await model.forward(ids)).logits.data;
  undo = trapOn('ctx');
  await expect(model.forward(ids)).rejects.toThrowError(
    /^forward: the WebAssembly instance trapped \(RuntimeError: unreachable\) and cannot be used again; call loadModel\(\) for a new model$/);
  undo();
  undo = null;
  await expect(model.forward(ids)).rejects.toThrowError(/^forward: the WebAssembly instance trapped in an earlier call \(RuntimeError: unreachable\)/);
  await expect(model.generate('Hello', { maxTokens: 1 }).next()).rejects.toThrowError(/^generate: the WebAssembly instance trapped in an earlier call/);
  model.dispose();
  const again = await loadModel(dir);
  expect((await again.forward(ids)).logits.data).toEqual(want);
  again.dispose();
});

it('a Worker translator whose instance trapped: that call rejects naming translate, the next runs in a fresh Worker', () => {
  // The trap is set up inside the Worker through the inspector (see translator-worker.test.ts's
  // Worker that dies mid-call, whose child script this follows).
  const wasmFlags = process.execArgv.filter((a) => a.startsWith('--experimental-wasm'));
  const out = runChildScript('translator-traps', `
    import { load } from 'attnlab';
    import { Session } from 'node:inspector/promises';
    const session = new Session();
    session.connect();
    const threads = [];
    session.on('NodeWorker.attachedToWorker', ({ params }) => threads.push(params));
    await session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
    const lib = await load();
    const w = await lib.loadTranslator('fra-eng', { worker: true });
    const first = await w.translate('Il pleut.');
    const thread = threads.findLast((t) => t.workerInfo.url.endsWith('/translator-worker.js'));
    const trap = "Object.defineProperty(Object.prototype, 'sourcePieces', { configurable: true, set() { throw new WebAssembly.RuntimeError('unreachable'); } })";
    const evaluated = new Promise((resolve) => session.on('NodeWorker.receivedMessageFromWorker', ({ params }) => {
      if (JSON.parse(params.message).id === 1) resolve();
    }));
    await session.post('NodeWorker.sendMessageToWorker', { sessionId: thread.sessionId,
      message: JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression: trap } }) });
    await evaluated;
    const calls = [w.translate('Je suis fatigué.'), w.translate('Je suis fatigué.')].map((c) => c.then((r) => r.text, (e) => \`rejected: \${e.message}\`));
    console.log(JSON.stringify([first.text, ...await Promise.all(calls), threads.filter((t) => t.workerInfo.url.endsWith('/translator-worker.js')).length]));
    session.disconnect();
    w.dispose();
    lib.dispose();
  `, { nodeArgs: wasmFlags, timeout: 50_000 });
  expect(JSON.parse(out)).toEqual([
    "It's raining.",
    "rejected: translate: the WebAssembly instance in the translator's Worker trapped (RuntimeError: unreachable); a fresh Worker loads the model for the next call",
    "I'm tired.",
    2,
  ]);
}, 60_000);
