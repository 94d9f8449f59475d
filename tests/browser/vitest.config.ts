import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Browser tests: Playwright drives Debian's Chromium against pages served on localhost.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('../..', import.meta.url)),
    include: ['tests/browser/**/*.browser.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
