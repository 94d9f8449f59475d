// One loaded instance per variant, shared by a test file: threads = 2 for the threaded build.
import { load, type Attnlab, type Variant } from 'attnlab';
import { afterAll, beforeAll } from 'vitest';

export const VARIANTS: Variant[] = ['scalar', 'simd', 'simd-threads'];

export function useVariants(): Record<Variant, Attnlab> {
  const libs = {} as Record<Variant, Attnlab>;
  beforeAll(async () => {
    for (const v of VARIANTS) libs[v] = await load({ variant: v, threads: v === 'simd-threads' ? 2 : 1 });
  });
  afterAll(() => {
    for (const v of VARIANTS) libs[v]?.dispose();
  });
  return libs;
}
