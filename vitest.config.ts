import { defineConfig } from 'vitest/config';

// Node tests of the built package (npm run build first; npm test does it).
export default defineConfig({
  test: {
    include: ['tests/js/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Each file loads its own WebAssembly instances; forks keep their pthread workers apart.
    pool: 'forks',
  },
});
