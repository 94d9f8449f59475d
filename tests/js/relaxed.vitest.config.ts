// The Node tests that compare against float64 references, golden vectors or each other, again
// with relaxed SIMD enabled in Node 20 (on by default from Node 21): tests/js/variants.ts then adds
// the relaxed builds to every per-variant test. npx vitest run --config tests/js/relaxed.vitest.config.ts
import { defineConfig, mergeConfig } from 'vitest/config';
import base from '../../vitest.config.js';

export default mergeConfig(base, defineConfig({
  test: {
    include: ['tests/js/{golden,ops,consistency,lifecycle,reference,relaxed,memory,bad-input}.test.ts', 'tests/js/variants-*.test.ts'],
    poolOptions: { forks: { execArgv: ['--experimental-wasm-relaxed-simd'] } },
  },
}));
