// load() options, results that JS owns, dispose(), `using`, and the FinalizationRegistry last
// resort for instances and translators dropped without dispose().
import { load } from 'attnlab';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { randn } from './reference.js';
import { RELAXED } from './variants.js';

const q = randn([1, 3, 4], 1);

describe('load', () => {
  it('picks the fastest threaded build in Node by default, with at least one thread', async () => {
    const lib = await load();
    expect(lib.variant).toBe(RELAXED ? 'relaxed-simd-threads' : 'simd-threads');
    expect(lib.backend).toBe('wasm');
    expect(lib.isa).toBe(RELAXED ? 'relaxed-simd128' : 'simd128');
    expect(lib.threads).toBeGreaterThanOrEqual(1);
    lib.dispose();
  });

  it('the scalar build reports scalar kernels and one thread', async () => {
    const lib = await load({ variant: 'scalar', threads: 1 });
    expect([lib.isa, lib.threads]).toEqual(['scalar', 1]);
    lib.dispose();
  });

  it('threads without SharedArrayBuffer: the single-threaded build, and variantReason says the threads were not had', async () => {
    vi.stubGlobal('SharedArrayBuffer', undefined);
    try {
      const lib = await load({ threads: 3 });
      expect([lib.variant, lib.threads]).toEqual([RELAXED ? 'relaxed-simd' : 'simd', 1]);
      expect(lib.variantReason).toMatch(/'(relaxed-)?simd-threads' needs SharedArrayBuffer, which a browser grants only to cross-origin isolated pages .*: '(relaxed-)?simd' is the fastest build that runs here, on 1 thread, not the 3 of options\.threads$/);
      lib.dispose();
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it.each([
    [{ variant: 'gpu' }, /^load: options\.variant: expected one of 'scalar', 'simd', 'simd-threads', 'relaxed-simd', 'relaxed-simd-threads', got "gpu"$/],
    [{ threads: 0 }, /^load: options\.threads: expected an integer in \[1, 64\], got 0$/],
    [{ thread: 2 }, /^load: options: unknown option 'thread'; expected variant, threads, backend, gpu, gpuCache$/],
    // Both passed as the defaults, where every other op refuses an array and a null option.
    [[], /^load: options: expected an object, got \[\]$/],
    [{ backend: null }, /^load: options\.backend: expected one of 'wasm', 'webgpu', 'auto', got null$/],
    // A single-threaded build asked for with threads: an error, not one thread in silence.
    [{ variant: 'simd', threads: 4 }, /^load: options\.threads: 4 needs a threaded build, and options\.variant 'simd' has no threads; use 'simd-threads', or leave out threads$/],
    [{ variant: 'relaxed-simd', threads: 2 }, /^load: options\.threads: 2 needs a threaded build, and options\.variant 'relaxed-simd' has no threads; use 'relaxed-simd-threads', or leave out threads$/],
    [{ variant: 'scalar', threads: 4 }, /^load: options\.threads: 4 needs a threaded build, and options\.variant 'scalar' has no threads; use 'simd-threads', or leave out threads$/],
  ])('rejects %o', async (options, message) => {
    await expect(load(options as never)).rejects.toThrowError(message);
  });
});

describe('results and lifetime', () => {
  it('results are JS-owned copies, untouched by later calls', async () => {
    const lib = await load({ variant: 'simd' });
    const first = lib.attention(q, q, q);
    const snapshot = first.output.data.slice();
    expect(first.output.data.buffer).not.toBeInstanceOf(SharedArrayBuffer);
    // Grow the heap well past its start size and run more calls.
    lib.attention(randn([8, 1024, 16], 2), randn([8, 1024, 16], 3), randn([8, 1024, 16], 4), { returnWeights: true });
    expect(first.output.data).toEqual(snapshot);
    expect(lib.heapStats().total).toBeGreaterThan(16 * 2 ** 20);
    lib.dispose();
  });

  it('dispose() makes further calls a clear error, and is idempotent', async () => {
    const lib = await load({ variant: 'simd-threads', threads: 2 });
    lib.dispose();
    lib.dispose();
    expect(lib.disposed).toBe(true);
    expect(() => lib.attention(q, q, q)).toThrowError(/^attention: this attnlab instance has been disposed; call load\(\) for a new one$/);
    // The Promise-returning calls reject (loadTranslator threw before a .catch() could be attached).
    let loading: Promise<unknown> | undefined;
    expect(() => { loading = lib.loadTranslator('fra-eng'); }).not.toThrow();
    await expect(loading).rejects.toThrowError(/^loadTranslator: this attnlab instance has been disposed; call load\(\) for a new one$/);
    await expect(lib.attentionAsync(q, q, q)).rejects.toThrowError(/^attention: this attnlab instance has been disposed; call load\(\) for a new one$/);
  });

  it('works with `using` (Symbol.dispose)', async () => {
    const dispose = (Symbol as { dispose?: symbol }).dispose ?? Symbol.for('Symbol.dispose');
    const lib = await load({ variant: 'simd' });
    expect(typeof (lib as unknown as Record<symbol, () => void>)[dispose]).toBe('function');
    (lib as unknown as Record<symbol, () => void>)[dispose]();
    expect(lib.disposed).toBe(true);
  });
});

describe('translator lifetime', () => {
  const model = () => new Uint8Array(readFileSync(new URL('../../web/models/fra-eng-gru.atl', import.meta.url)));

  it('dispose() makes translate() a clear error, is idempotent, and frees the model', async () => {
    const lib = await load({ variant: 'simd' });
    const warm = await lib.loadTranslator(model());  // first-use allocations (~18 KB) go into the baseline
    warm.translate('Il fait beau.');
    warm.dispose();
    const before = lib.heapStats().used;
    const tr = await lib.loadTranslator(model());
    expect(tr.translate('Il fait beau.').text.length).toBeGreaterThan(0);
    expect(lib.heapStats().used).toBeGreaterThan(before);
    tr.dispose();
    tr.dispose();
    expect(tr.disposed).toBe(true);
    expect(lib.heapStats().used).toBe(before);
    expect(() => tr.translate('Il fait beau.')).toThrowError(Error);
    expect(() => tr.translate('Il fait beau.')).toThrowError(/^translate: this translator has been disposed; call lib\.loadTranslator\(\) for a new one$/);
    lib.dispose();
  });
});

describe('dropped without dispose() (FinalizationRegistry), in `node --expose-gc`', () => {
  // A child process: vitest's workers have no global gc(), and collection is process-wide.
  const child = fileURLToPath(new URL('./fixtures/finalization-child.mjs', import.meta.url));
  let report: {
    translators: { baseline: number; withTranslators: number; after: number; collected: number; of: number; settled: boolean };
    afterDisposedCollected: { used: number; baseline: number; works: number[] };
    libs: { threadsBefore: number; threadsLoaded: number; threadsAfter: number; collected: number; of: number; settled: boolean };
  };
  const run = () => {
    report ??= JSON.parse(execFileSync(process.execPath, ['--expose-gc', child], { encoding: 'utf8', timeout: 120_000 }));
    return report;
  };

  it("translators: collected, and the instance's WebAssembly heap returns to its baseline", () => {
    const t = run().translators;
    expect(t.withTranslators - t.baseline).toBeGreaterThan(3 * 1_000_000);  // three models were held
    expect(t.collected).toBe(t.of);
    expect(t.after).toBe(t.baseline);
    expect(t.settled).toBe(true);
  }, 130_000);

  it('a translator disposed by hand and then collected frees nothing twice', () => {
    const d = run().afterDisposedCollected;
    expect(d.used).toBe(d.baseline);
    expect(d.works).toEqual([1, 2, 4]);
  }, 130_000);

  it('instances (threaded, with undisposed translators): collected, and their worker threads stopped', () => {
    const l = run().libs;
    // 3 instances x (2 pthread workers + the 2 of the translators' module, attnlab-nn-<v>, whose
    // int8 products run on the instance's 3 threads too)
    expect(l.threadsLoaded - l.threadsBefore).toBe(3 * (2 + 2));
    expect(l.collected).toBe(l.of);
    expect(l.threadsAfter).toBe(l.threadsBefore);
    expect(l.settled).toBe(true);
  }, 130_000);
});
