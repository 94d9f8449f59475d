// load() options, results that JS owns, dispose() and `using`.
import { load } from 'attnlab';
import { describe, expect, it } from 'vitest';
import { randn } from './reference.js';

const q = randn([1, 3, 4], 1);

describe('load', () => {
  it('picks simd-threads in Node by default, with at least one thread', async () => {
    const lib = await load();
    expect(lib.variant).toBe('simd-threads');
    expect(lib.backend).toBe('wasm');
    expect(lib.isa).toBe('simd128');
    expect(lib.threads).toBeGreaterThanOrEqual(1);
    lib.dispose();
  });

  it('the scalar build reports scalar kernels and one thread', async () => {
    const lib = await load({ variant: 'scalar', threads: 4 });
    expect([lib.isa, lib.threads]).toEqual(['scalar', 1]);
    lib.dispose();
  });

  it.each([
    [{ variant: 'gpu' }, /^load: options\.variant: expected one of 'scalar', 'simd', 'simd-threads', got "gpu"$/],
    [{ threads: 0 }, /^load: options\.threads: expected an integer in \[1, 64\], got 0$/],
    [{ thread: 2 }, /^load: options: unknown option 'thread'; expected variant, threads, backend, gpu$/],
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
  });

  it('works with `using` (Symbol.dispose)', async () => {
    const dispose = (Symbol as { dispose?: symbol }).dispose ?? Symbol.for('Symbol.dispose');
    const lib = await load({ variant: 'simd' });
    expect(typeof (lib as unknown as Record<symbol, () => void>)[dispose]).toBe('function');
    (lib as unknown as Record<symbol, () => void>)[dispose]();
    expect(lib.disposed).toBe(true);
  });
});
