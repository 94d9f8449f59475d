// One loaded instance per variant, shared by a test file: threads = 2 for the threaded builds.
import { load, type Attnlab, type Variant } from 'attnlab';
import { afterAll, beforeAll } from 'vitest';

// f32x4.relaxed_madd of a v128 parameter, as web/lib/loader.ts probes: the relaxed builds
// join every per-variant test where the engine runs them (Node 20 with
// --experimental-wasm-relaxed-simd: tests/js/relaxed.vitest.config.ts; Node >= 21).
const relaxedProbe = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 6, 1, 96, 1, 123, 1, 123, 3, 2, 1, 0, 10, 13, 1, 11, 0,
  32, 0, 32, 0, 32, 0, 253, 133, 2, 11]);
export const RELAXED = WebAssembly.validate(relaxedProbe);

export const VARIANTS: Variant[] = ['scalar', 'simd', 'simd-threads', ...(RELAXED ? ['relaxed-simd', 'relaxed-simd-threads'] as const : [])];

export function useVariants(): Record<Variant, Attnlab> {
  const libs = {} as Record<Variant, Attnlab>;
  beforeAll(async () => {
    for (const v of VARIANTS) libs[v] = await load({ variant: v, threads: v.endsWith('-threads') ? 2 : 1 });
  });
  afterAll(() => {
    for (const v of VARIANTS) libs[v]?.dispose();
  });
  return libs;
}
