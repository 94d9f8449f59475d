// loadTranslator given what a page gets from <input type=file> (or a drop): a File, read in
// Chromium with progress, checked like any model bytes.
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { launch, repoRoot, visit, type Visit } from './helpers';
import { serveStatic, type StaticServer } from './static-server';

let browser: Browser;
let server: StaticServer;
let v: Visit;

const html = `<!doctype html><meta charset="utf-8"><title>a model from a file</title><link rel="icon" href="data:,">
<input type="file" id="f" aria-label="Model file">
<script type="module">
window.lib = await (await import('/dist/index.js')).load();
</script>`;

beforeAll(async () => {
  [browser, server] = await Promise.all([launch(), serveStatic(repoRoot, false, { pages: { '/file.html': html } })]);
  v = await visit(browser, `${server.url}file.html`);
  await v.page.waitForFunction(() => 'lib' in window, undefined, { timeout: 30_000 });
});

afterAll(async () => {
  await v?.page.close();
  await browser?.close();
  await server?.close();
});

test('a model file picked in <input type=file> loads and translates; a wrong file is refused, saying why', async () => {
  const { page } = v;
  const pick = async (files: Parameters<typeof page.setInputFiles>[1]) => {
    await page.setInputFiles('#f', files);
    return page.evaluate(async () => {
      const lib = (window as unknown as { lib: import('attnlab').Attnlab }).lib;
      const file = (document.getElementById('f') as HTMLInputElement).files![0];
      const progress: number[] = [];
      try {
        const tr = await lib.loadTranslator(file, { onProgress: (p) => progress.push(p.loaded / p.total) });
        const text = tr.translate('Je suis fatigué.').text;
        tr.dispose();
        return { text, last: progress.at(-1) };
      } catch (e) {
        return { error: (e as Error).message };
      }
    });
  };
  expect(await pick(join(repoRoot, 'web/models/fra-eng-gru.atl'))).toMatchObject({ text: "I'm tired.", last: 1 });
  expect(await pick({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('not a model'.repeat(100)) })).toEqual({
    error: 'loadTranslator: model file "notes.txt": bad magic number (not an attnlab model file)' });
  expect(v.problems).toEqual([]);
});
