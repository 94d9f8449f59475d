// A WebAssembly instance that trapped (RuntimeError: unreachable, memory access out of bounds)
// inside a call is not safe to run again: the trap skipped the C++ epilogues (the shadow stack
// pointer, a held lock, a half-built object). Its translator, trainer, model or attnlab instance
// (the core's ops) refuses every later call with an Error that says so, and calls nothing more in
// it (not even free); the instance loads a fresh nn module for the next loadTranslator() or
// createTrainer(), and a Worker translator ends its Worker and loads the model in a fresh one for
// the next call.
// Out of memory is no trap: the bindings turn std::bad_alloc into an Error and the instance
// keeps working (bad-input.test.ts). No input provokes a trap, so the tests make one inside the
// binding call: a setter on Object.prototype for a field the binding writes into its `out`
// object (a getter for an optional field it reads from its arguments and the caller left out)
// throws a WebAssembly.RuntimeError through the engine's frames, as a trap would.
import { Attnlab, load, loadModel, type Variant } from 'attnlab';
import { afterEach, describe, expect, it } from 'vitest';
import { instantiate, startThreads } from '../../dist/loader.js';
import type { WasmModule } from '../../dist/wasm-module.js';
import { runChildScript, WATCH_WORKERS } from './child-script.js';
import { VARIANTS } from './variants.js';

/**
 * Makes the binding's write of `field` into its out object throw a trap, until the returned
 * function is called (`access` 'get': its read of `field`). With `skip` (writes only), the first
 * `skip` writes go through and the next one is the only one that traps.
 */
function trapOn(field: string, { access = 'set', skip }: { access?: 'get' | 'set'; skip?: number } = {}): () => void {
  const undo = () => delete (Object.prototype as Record<string, unknown>)[field];
  let passed = 0;
  Object.defineProperty(Object.prototype, field, {
    configurable: true,
    [access](this: object, value: unknown) {
      if (skip !== undefined) {
        if (passed++ < skip) return void Object.defineProperty(this, field, { value, writable: true, enumerable: true, configurable: true });
        undo();
      }
      throw new WebAssembly.RuntimeError('unreachable');
    },
  });
  return undo;
}

let undo: (() => void) | null = null;
afterEach(() => {
  undo?.();
  undo = null;
});

it('an in-process translator whose instance trapped refuses later calls; loadTranslator() again gets a fresh module', async () => {
  const lib = await load({ variant: 'simd' });
  const core = lib.heapStats();
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
  // heapStats() leaves the trapped module out, never calling it.
  expect(lib.heapStats()).toEqual(core);
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
    ${WATCH_WORKERS}
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

/**
 * Records, in order, the calls of `m`'s functions `names` (the test's view of what runs in the
 * module). After a first op: Emscripten's first call of _malloc or _free replaces it with the raw export.
 */
function recordCalls(m: WasmModule, names: (keyof WasmModule)[]): string[] {
  const calls: string[] = [];
  const fns = m as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const name of names) {
    const f = fns[name];
    fns[name] = (...args: unknown[]) => {
      calls.push(name);
      return f.apply(m, args);
    };
  }
  return calls;
}

/** Every function of the core module the ops, heapStats() and dispose() call, and the workers' end (JavaScript only). */
const CALLED: (keyof WasmModule)[] = ['_malloc', '_free', 'setThreads', 'wakeThreads', 'heapUsed', 'findNonfinite', 'maskedSoftmax', 'attention',
  'linear', 'positionalEncoding', 'terminateWorkers'];

/** An instance over a core module the test holds (load() keeps its own): threads = 2 on the threaded builds. */
async function instanceOf(variant: Variant, setUp: (m: WasmModule) => void = () => {}): Promise<{ lib: Attnlab; m: WasmModule }> {
  const threads = variant.endsWith('-threads') ? 2 : 1;
  const m = await instantiate(variant, threads - 1);
  expect(await startThreads(m, threads)).toBe('');
  setUp(m);
  return { lib: new Attnlab(m, variant, threads), m };
}

const refusedCall = (fn: string, trap = 'RuntimeError: unreachable') => new RegExp(`^${fn}: the WebAssembly instance trapped in an earlier call \\(${trap}\\) and cannot be used again; call load\\(\\) for a new instance$`);

describe.each(VARIANTS)('the core module, %s', (variant) => {
  it('a trap in an op: that call names it, every later call but dispose() is refused, and nothing more runs in the module', async () => {
    const { lib, m } = await instanceOf(variant);
    const x = { data: Float32Array.of(0, 0), shape: [1, 2] };
    expect(lib.maskedSoftmax(x).data).toEqual(Float32Array.of(0.5, 0.5));
    const calls = recordCalls(m, CALLED);
    // maskedSoftmax's masks have no 'alibi': the binding's read of it finds the trap.
    undo = trapOn('alibi', { access: 'get' });
    expect(() => lib.maskedSoftmax(x)).toThrowError(
      /^maskedSoftmax: the WebAssembly instance trapped \(RuntimeError: unreachable\) and cannot be used again; call load\(\) for a new instance$/);
    undo();
    undo = null;
    const q = { data: new Float32Array(8).fill(0.5), shape: [2, 4] };
    expect(() => lib.maskedSoftmax(x)).toThrowError(refusedCall('maskedSoftmax'));
    expect(() => lib.attention(q, q, q)).toThrowError(refusedCall('attention'));
    await expect(lib.attentionAsync(q, q, q)).rejects.toThrowError(refusedCall('attention'));
    expect(() => lib.linear(q, { data: new Float32Array(4), shape: [1, 4] })).toThrowError(refusedCall('linear'));
    expect(() => lib.positionalEncoding(4, 4)).toThrowError(refusedCall('positionalEncoding'));
    // Its heap's use is unknown without calling in (a threaded build's malloc lock may be held).
    expect(() => lib.heapStats()).toThrowError(refusedCall('heapStats'));
    lib.dispose();
    expect(lib.disposed).toBe(true);
    expect(() => lib.attention(q, q, q)).toThrowError(/^attention: this attnlab instance has been disposed; call load\(\) for a new one$/);
    // The call that trapped, then only the workers' end: no free of its scratch, no setThreads(1) at dispose().
    expect(calls).toEqual([...variant.endsWith('-threads') ? ['wakeThreads'] : [], '_malloc', '_malloc', 'maskedSoftmax', 'terminateWorkers']);
  });
});

it.each(['attention', 'attentionAsync'] as const)('a trap in the finite scan of a big input (%s): the call names it and frees none of its heap copies', async (call) => {
  let trap = false;
  const { lib, m } = await instanceOf('simd', (m) => {
    const scan = m.findNonfinite;
    m.findNonfinite = (...args) => {
      if (trap) throw new WebAssembly.RuntimeError('memory access out of bounds');
      return scan.apply(m, args);
    };
  });
  const big = { data: new Float32Array(64 * 128).fill(0.25), shape: [64, 128] };  // scanned in the heap: 4096 values or more
  const run = () => (call === 'attention' ? lib.attention(big, big, big) : lib.attentionAsync(big, big, big));
  expect((await run()).output.data[0]).toBeCloseTo(0.25);
  const calls = recordCalls(m, CALLED);
  trap = true;
  const said = /^attention: the WebAssembly instance trapped \(RuntimeError: memory access out of bounds\) and cannot be used again; call load\(\) for a new instance$/;
  if (call === 'attention') expect(run).toThrowError(said);
  else await expect(run()).rejects.toThrowError(said);
  expect(calls).toEqual(['_malloc', 'findNonfinite']);  // q's copy and its scan: the copy is not freed
  expect(() => lib.linear(big, big)).toThrowError(refusedCall('linear', 'RuntimeError: memory access out of bounds'));
  lib.dispose();
  expect(calls.slice(2)).toEqual(['terminateWorkers']);
});

it('an in-process trainer whose step trapped rejects naming createTrainer, one on the same module is refused; createTrainer() again trains on a fresh module', async () => {
  const lib = await load({ variant: 'simd' });
  // An evaluation after every step, never all right so early (the seed is fixed): both still train when the trap comes.
  const options = { evalEvery: 1, evalSize: 20, targetAccuracy: 1, maxSeconds: 30 };
  // The fourth step of the two trainers, which take turns: each has stepped and been evaluated.
  undo = trapOn('tokensPerSecond', { skip: 3 });
  const evaluated = [0, 0];
  const done = [0, 1].map((i) => lib.createTrainer({ ...options, onProgress: () => evaluated[i]++ }).done.then((r) => r.reason, (e: Error) => e.message));
  const again = 'call lib\\.createTrainer\\(\\) for a new trainer';
  expect((await Promise.all(done)).sort()).toEqual([
    expect.stringMatching(new RegExp(`^createTrainer: the WebAssembly instance trapped \\(RuntimeError: unreachable\\) and cannot be used again; ${again}$`)),
    expect.stringMatching(new RegExp(`^createTrainer: the WebAssembly instance trapped in an earlier call \\(RuntimeError: unreachable\\) and cannot be used again; ${again}$`)),
  ]);
  expect(evaluated).toEqual([1, 1]);
  expect((await lib.createTrainer({ ...options, targetAccuracy: 0 }).done).reason).toBe('target');
  lib.dispose();
});
