// Firefox tests: `npx vitest run --config tests/firefox/vitest.config.ts`. Their own stage, after
// the Chromium one: Debian's Firefox ESR (Gecko, SpiderMonkey) through puppeteer-core's WebDriver
// BiDi, on a built dist/ and web/demo/dist. A few checks per area, not the Chromium suite again.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['tests/firefox/**/*.firefox.test.ts'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // One browser, one file: no point in parallel workers on a 2-core machine.
    fileParallelism: false,
  },
});
