// Browser tests: `npx vitest run --config tests/browser/vitest.config.ts`. Kept apart from the
// root config because they need a built dist/ and Debian's chromium, and take seconds each.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['tests/browser/**/*.browser.test.ts'],
    // One build of the demo site per run, copied by each file that needs it (site-server.ts).
    globalSetup: ['tests/browser/global-setup.ts'],
    environment: 'node',
    // Cold start of Chromium, a Vite build and WASM threads spinning up: be generous.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // One browser, one file: no point in parallel workers on a 2-core machine.
    fileParallelism: false,
    // Tests marked concurrent (pages visited one after another) run two at a time.
    maxConcurrency: 2,
  },
});
