// The whole Node suite again with relaxed SIMD enabled in Node 20 (on by default from Node 21):
// tests/js/variants.ts then adds the relaxed builds to every per-variant test, so they meet the
// same float64 references and golden vectors as the others, and the default build load() picks is
// a relaxed one. npx vitest run --config tests/js/relaxed.vitest.config.ts
import { defineConfig, mergeConfig } from 'vitest/config';
import base from '../../vitest.config.js';

export default mergeConfig(base, defineConfig({
  test: { poolOptions: { forks: { execArgv: ['--experimental-wasm-relaxed-simd'] } } },
}));
