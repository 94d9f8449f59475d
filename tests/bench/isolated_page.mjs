// What the headless-Chromium benches share: a cross-origin isolated page (COOP/COEP, so the page
// gets a fine clock and SharedArrayBuffer, and load() times its row groups as on a deployed site)
// served over 127.0.0.1, with directories mounted by name (/<name>/... serves mounts[name]/...),
// files streamed (checkpoints are hundreds of MB), and Debian's Chromium under playwright-core.
import { createReadStream, existsSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { chromium } from 'playwright-core';

const types = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.json': 'application/json', '.html': 'text/html' };
const isolation = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp', 'cross-origin-resource-policy': 'same-origin' };

/** Opens `title`'s empty isolated page; returns it with close(), which ends the browser and the server. */
export async function openIsolatedPage(mounts, title) {
  const server = createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    if (url.pathname === '/') {
      res.writeHead(200, { ...isolation, 'content-type': 'text/html' });
      res.end(`<!doctype html><meta charset="utf-8"><title>${title}</title>`);
      return;
    }
    const [, mount, ...rest] = url.pathname.split('/');
    const base = mounts[mount];
    const file = base && normalize(join(base, decodeURIComponent(rest.join('/'))));
    if (!file || !file.startsWith(base) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, isolation);
      res.end();
      return;
    }
    res.writeHead(200, { ...isolation, 'content-type': types[extname(file)] ?? 'application/octet-stream', 'content-length': statSync(file).size });
    createReadStream(file).pipe(res);
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'] });
  const page = await browser.newPage();
  page.on('pageerror', (e) => console.log('[page error]', e.message));
  await page.goto(`http://127.0.0.1:${server.address().port}/`);
  if (!(await page.evaluate(() => crossOriginIsolated))) throw new Error('the page is not cross-origin isolated');
  const userAgent = await page.evaluate(() => navigator.userAgent);
  return { page, userAgent, close: async () => { await browser.close(); server.close(); } };
}
