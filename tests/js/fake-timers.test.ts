// A test suite that fakes timers (Vitest's, Jest's: setTimeout and Date frozen until advanced) and
// loads attnlab inside must not hang: load() and the translators' module wait for their threads to
// start (loader.ts's startThreads) and once waited on setTimeout, which never fired there.
import { readFileSync } from 'node:fs';
import { afterEach, expect, test, vi } from 'vitest';
import { load } from '../../dist/index.js';

afterEach(() => {
  vi.useRealTimers();
});

const model = () => new Uint8Array(readFileSync(new URL('../../web/models/fra-eng-gru.atl', import.meta.url)));

test.each(['simd-threads', 'relaxed-simd-threads'] as const)('under fake timers, %s loads on 2 threads, loads a translator and translates', async (variant) => {
  vi.useFakeTimers();
  const lib = await load({ variant, threads: 2 });
  try {
    expect(lib.threads).toBe(2);
    const tr = await lib.loadTranslator(model());
    expect(tr.translate('je suis content .').text.length).toBeGreaterThan(0);
    tr.dispose();
  } finally {
    lib.dispose();
  }
});
