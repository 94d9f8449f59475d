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
// throws a WebAssembly.RuntimeError through the engine's frames, as a trap would. A trap inside
// malloc (called by the library for its inputs' copies) comes the same way, from the heap-growth
// import malloc calls (watch() below).
import { readFile } from 'node:fs/promises';
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
  unwatch?.();
  unwatch = null;
});

/** What watch() sees of the instances made while it watches. */
interface Watch {
  /** Each call from JavaScript into them, in order: an export's name ('malloc', 'free', ...), or 'binding' (a function of the table, as embind's bindings call theirs). */
  calls: string[];
  /** Set: the next growth of a heap throws a trap inside the malloc that asked for it. */
  trap: boolean;
  /** calls.length when it did. */
  trappedAt: number;
  /** The last instance's memory. */
  memory: WebAssembly.Memory | null;
}

let unwatch: (() => void) | null = null;

/**
 * Watches the WebAssembly instances made from now until unwatch() (through WebAssembly.instantiate,
 * as Emscripten's glue makes them in Node): their exports and table functions record their calls,
 * and their heap-growth import (emscripten_resize_heap, which malloc calls when the heap is full)
 * throws a trap once `trap` is set, as a trap inside malloc would.
 */
function watch(): Watch {
  const w: Watch = { calls: [], trap: false, trappedAt: -1, memory: null };
  const instantiate = WebAssembly.instantiate;
  type Fn = (...args: unknown[]) => unknown;
  const record = (name: string, f: Fn): Fn => (...args) => {
    w.calls.push(name);
    return f(...args);
  };
  WebAssembly.instantiate = (async (binary: BufferSource, info?: Record<string, Record<string, unknown>>) => {
    const grow = info?.env?.emscripten_resize_heap as Fn | undefined;
    if (!info || !grow) return instantiate(binary, info as WebAssembly.Imports | undefined);  // not attnlab's (Node's fetch instantiates its own)
    const env = { ...info.env, emscripten_resize_heap: (...args: unknown[]) => {
      if (!w.trap) return grow(...args);
      w.trap = false;
      w.trappedAt = w.calls.length;
      throw new WebAssembly.RuntimeError('unreachable');
    } };
    const { module, instance } = await instantiate(binary, { ...info, env } as WebAssembly.Imports);
    const exports = Object.fromEntries(Object.entries(instance.exports).map(([name, v]) => [name,
      typeof v === 'function' ? record(name, v as Fn) : v instanceof WebAssembly.Table ? { get: (i: number) => record('binding', v.get(i) as Fn) } : v]));
    w.memory = (instance.exports.memory as WebAssembly.Memory | undefined) ?? w.memory;
    return { module, instance: { exports } };
  }) as typeof instantiate;
  unwatch = () => { WebAssembly.instantiate = instantiate; };
  return w;
}

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
  const w = watch();
  const model = await loadModel(dir);
  unwatch!();
  const ids = Int32Array.of(1, 2, 3);
  const want = (await model.forward(ids)).logits.data;
  undo = trapOn('ctx');
  await expect(model.forward(ids)).rejects.toThrowError(
    /^forward: the WebAssembly instance trapped \(RuntimeError: unreachable\) and cannot be used again; call loadModel\(\) for a new model$/);
  undo();
  undo = null;
  const trapped = w.calls.length;
  await expect(model.forward(ids)).rejects.toThrowError(/^forward: the WebAssembly instance trapped in an earlier call \(RuntimeError: unreachable\)/);
  await expect(model.generate('Hello', { maxTokens: 1 }).next()).rejects.toThrowError(/^generate: the WebAssembly instance trapped in an earlier call/);
  model.dispose();
  // Not even dispose() called into it: no free of the run's ids, no pretrainedDispose or setThreads(1).
  expect(w.calls.length).toBe(trapped);
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

/** Records, in order, the calls of `m`'s functions `names` (the test's view of what runs in the module). */
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
async function instanceOf(variant: Variant): Promise<{ lib: Attnlab; m: WasmModule }> {
  const threads = variant.endsWith('-threads') ? 2 : 1;
  const m = await instantiate(variant, threads - 1);
  expect(await startThreads(m, threads)).toBe('');
  return { lib: new Attnlab(m, variant, threads), m };
}

const refusedCall = (fn: string) => new RegExp(`^${fn}: the WebAssembly instance trapped in an earlier call \\(RuntimeError: unreachable\\) and cannot be used again; call load\\(\\) for a new instance$`);

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

it.each(['attention', 'attentionAsync', 'positionalEncoding'] as const)('a trap in malloc (%s): the call names it, and nothing more runs in the module, not even a free', async (call) => {
  const w = watch();
  const m = await instantiate('simd', 0);
  unwatch!();
  const lib = new Attnlab(m, 'simd', 1);
  const before = w.calls.length;
  // More rows than the whole heap holds: their malloc grows the heap, and traps there. q (4096
  // values or more) is copied into the heap and scanned there first.
  const rows = w.memory!.buffer.byteLength / 512 + 1;
  const q = { data: new Float32Array(64 * 128).fill(0.25), shape: [64, 128] };
  const big = { data: new Float32Array(rows * 128).fill(0.25), shape: [rows, 128] };
  w.trap = true;
  const fn = call === 'positionalEncoding' ? call : 'attention';
  const said = new RegExp(`^${fn}: the WebAssembly instance trapped \\(RuntimeError: unreachable\\) and cannot be used again; call load\\(\\) for a new instance$`);
  if (call === 'attentionAsync') await expect(lib.attentionAsync(q, big, big)).rejects.toThrowError(said);
  else expect(() => (call === 'attention' ? lib.attention(q, big, big) : lib.positionalEncoding(rows, 128))).toThrowError(said);
  expect(w.trappedAt).toBe(w.calls.length);
  expect(() => lib.linear(q, q)).toThrowError(refusedCall('linear'));
  expect(() => lib.heapStats()).toThrowError(refusedCall('heapStats'));
  lib.dispose();
  // The malloc that trapped was the last call: no free of q's copy (attentionAsync's scan frees
  // each copy at once, as its run may be the GPU's), no setThreads(1) at dispose().
  expect(w.calls.slice(before)).toEqual({
    attention: ['malloc', 'binding', 'malloc'], attentionAsync: ['malloc', 'binding', 'free', 'malloc'], positionalEncoding: ['malloc'],
  }[call]);
});

it('a trap in malloc of the nn module: loadTranslator() names it, the module\'s translators are refused and nothing more runs in it', async () => {
  const lib = await load({ variant: 'simd' });
  const w = watch();
  const tr = await lib.loadTranslator('fra-eng', { arch: 'gru' });
  unwatch!();
  const before = w.calls.length;
  w.trap = true;
  // A model file as big as the module's whole heap: its copy's malloc grows the heap, and traps there.
  await expect(lib.loadTranslator(new Uint8Array(w.memory!.buffer.byteLength))).rejects.toThrowError(
    /^loadTranslator: the WebAssembly instance trapped \(RuntimeError: unreachable\) and cannot be used again; call lib\.loadTranslator\(\) for a new translator$/);
  expect(w.trappedAt).toBe(w.calls.length);
  expect(() => tr.translate('Je suis fatigué.')).toThrowError(
    /^translate: the WebAssembly instance trapped in an earlier call \(RuntimeError: unreachable\) and cannot be used again; call lib\.loadTranslator\(\) for a new translator$/);
  tr.dispose();
  expect(w.calls.slice(before)).toEqual(['malloc']);
  const fresh = await lib.loadTranslator('fra-eng', { arch: 'gru' });
  expect(fresh.translate('Je suis fatigué.').text).toBe("I'm tired.");
  lib.dispose();
});

it('a trap in malloc of the checkpoint module: loadModel() names it and calls nothing more in it', async () => {
  const dir = new URL('../pretrained/fixtures/gpt2-f32/', import.meta.url);
  const file = await readFile(new URL('model.safetensors', dir));
  const n = Number(file.readBigUInt64LE(0));
  // Its header padded with spaces, as safetensors allows, past the module's whole 16 MB heap: the
  // header's malloc grows the heap, and traps there.
  const padded = 17 << 20;
  const weights = new Uint8Array(8 + padded + file.length - 8 - n).fill(0x20);
  new DataView(weights.buffer).setBigUint64(0, BigInt(padded), true);
  weights.set(file.subarray(8, 8 + n), 8);
  weights.set(file.subarray(8 + n), 8 + padded);
  const w = watch();
  w.trap = true;
  await expect(loadModel({ config: new URL('config.json', dir), weights, vocab: new URL('vocab.json', dir), merges: new URL('merges.txt', dir) }))
    .rejects.toThrowError(/^loadModel: the WebAssembly instance trapped \(RuntimeError: unreachable\) and cannot be used again; call loadModel\(\) for a new model$/);
  // No free of its staging buffer, no dispose or setThreads(1) of the instance.
  expect(w.calls.at(-1)).toBe('malloc');
  expect(w.trappedAt).toBe(w.calls.length);
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
