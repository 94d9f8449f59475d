// The trainer as a course author embeds it: the built package on one origin (the "CDN": CORS `*`,
// CORP cross-origin), the course page on another, imported by absolute URL with no bundler. On a
// plain page, a cross-origin isolated page, in a plain iframe and in sandboxed iframes
// (allow-scripts, with and without allow-same-origin), createTrainer() reports progress and
// cancel() settles `done` within 100 ms. A direct `new Worker(cross-origin URL)` is refused there (SecurityError): the trainer
// must start its Worker through a same-origin bootstrap, or train on the page in slices.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launch, repoRoot, visit } from './helpers';
import { servePackage, servePages, type Origin } from './trainer-origins';

let browser: Browser;
let pkg: Origin;
let site: Origin;

interface PageResult {
  ok: boolean;
  error?: string;
  origin?: string;
  isolated?: boolean;
  thread?: string;
  reason?: string;
  step?: number;
  progress?: { step: number; thread: string }[];
  afterCancel?: number;
  cancelMs?: number;
  firstProgressMs?: number;
  longestBlockMs?: number;
  steadyBlockMs?: number;
  workerError?: string;
}

// The course page's script: load the package by URL, train, cancel 300 ms after the first
// progress event, report to window.__result (and to the parent frame, if framed).
const trainerPage = (pkgUrl: string) => `<!doctype html><meta charset="utf-8"><title>trainer</title><link rel="icon" href="data:,">
<script type="module">
const report = (r) => { window.__result = r; if (parent !== window) parent.postMessage({ trainer: r }, '*'); };
try {
  const { load } = await import(${JSON.stringify(`${pkgUrl}dist/index.js`)});
  const lib = await load({ variant: 'simd' });
  // The longest event-loop block: over the whole run, and after the first progress event (by then
  // the first training step, several times slower than the next while the engine warms up, is past).
  let worst = 0, steady = 0, last = performance.now();
  const probe = setInterval(() => {
    const n = performance.now();
    worst = Math.max(worst, n - last);
    if (progress.length) steady = Math.max(steady, n - last);
    last = n;
  }, 1);
  const progress = [];
  let cancelAt = 0, afterCancel = 0, firstProgressMs = 0;
  const t0 = performance.now();
  const s = lib.createTrainer({ task: 'reverse', hidden: 32, evalEvery: 20, evalSize: 40, maxSeconds: 60, targetAccuracy: 1,
    onProgress: (p) => {
      if (cancelAt) afterCancel++;
      progress.push({ step: p.step, thread: p.thread });
      if (progress.length === 1) firstProgressMs = performance.now() - t0;
      if (progress.length === 1) setTimeout(() => { cancelAt = performance.now(); s.cancel(); }, 300);
    } });
  const r = await s.done;
  const cancelMs = performance.now() - cancelAt;
  clearInterval(probe);
  report({ ok: true, origin: self.origin, workerError: r.workerError, isolated: self.crossOriginIsolated === true, thread: r.thread, reason: r.reason,
    step: r.step, progress, afterCancel, cancelMs, firstProgressMs, longestBlockMs: worst, steadyBlockMs: steady });
} catch (e) {
  report({ ok: false, error: String(e && e.stack || e) });
}
</script>`;

const framePage = (sandbox: string | null) => `<!doctype html><meta charset="utf-8"><title>frame</title><link rel="icon" href="data:,">
<script>addEventListener('message', (e) => { if (e.data && e.data.trainer) window.__result = e.data.trainer; });</script>
<iframe${sandbox === null ? '' : ` sandbox="${sandbox}"`} src="/trainer.html"></iframe>`;

beforeAll(async () => {
  [browser, pkg] = await Promise.all([launch(), servePackage(repoRoot)]);
  site = await servePages({
    '/trainer.html': { html: trainerPage(pkg.url) },
    '/isolated.html': { html: trainerPage(pkg.url), isolated: true },
    '/framed.html': { html: framePage(null) },
    '/sandboxed.html': { html: framePage('allow-scripts') },
    '/sandboxed-same-origin.html': { html: framePage('allow-scripts allow-same-origin') },
    // No Worker may start at all here: the trainer falls back to the page's own thread.
    '/no-worker.html': { html: trainerPage(pkg.url), headers: { 'Content-Security-Policy': "worker-src 'none'" } },
  });
});

afterAll(async () => {
  await browser?.close();
  await Promise.all([pkg?.close(), site?.close()]);
});

async function run(path: string): Promise<{ r: PageResult; problems: string[] }> {
  const v = await visit(browser, `${site.url}${path.slice(1)}`);
  try {
    await v.page.waitForFunction(() => (window as unknown as { __result?: unknown }).__result !== undefined, undefined, { timeout: 50_000 });
    const r = await v.page.evaluate(() => (window as unknown as { __result: PageResult }).__result);
    return { r, problems: v.problems };
  } finally {
    await v.page.close();
  }
}

describe('createTrainer with the package on another origin', () => {
  const cases: [string, string, { thread: string; isolated: boolean; opaque: boolean }][] = [
    ['plain page', '/trainer.html', { thread: 'worker', isolated: false, opaque: false }],
    ['cross-origin isolated page', '/isolated.html', { thread: 'worker', isolated: true, opaque: false }],
    ['plain iframe', '/framed.html', { thread: 'worker', isolated: false, opaque: false }],
    ['sandboxed iframe (allow-scripts)', '/sandboxed.html', { thread: 'worker', isolated: false, opaque: true }],
    ['sandboxed iframe (allow-scripts allow-same-origin)', '/sandboxed-same-origin.html', { thread: 'worker', isolated: false, opaque: false }],
    ["a page whose CSP refuses every Worker (worker-src 'none')", '/no-worker.html', { thread: 'main', isolated: false, opaque: false }],
  ];
  test.each(cases)('%s: progress, then cancel settles done within 100 ms', async (_name, path, expected) => {
    const { r, problems } = await run(path);
    console.log(`${_name}: ${JSON.stringify({ ...r, progress: r.progress?.length })}`);
    expect(r.error).toBeUndefined();
    expect(r.ok).toBe(true);
    expect(r.isolated).toBe(expected.isolated);
    expect(r.origin === 'null').toBe(expected.opaque);
    expect(r.thread).toBe(expected.thread);
    expect(r.progress!.length).toBeGreaterThan(0);
    expect(r.progress!.every((p) => p.thread === expected.thread)).toBe(true);
    expect(r.reason).toBe('cancelled');
    expect(r.step).toBeGreaterThan(r.progress![0].step);
    expect(r.afterCancel).toBe(0);
    expect(r.cancelMs).toBeLessThan(100);
    expect(r.workerError === undefined).toBe(expected.thread === 'worker');
    // A Worker leaves the page's event loop alone; the fallback yields after every ~8 ms slice of
    // whole steps. A generous bound (the figures are in the log): once warm, no block is longer than
    // 250 ms, where an unsliced trainer blocks for a whole evaluation interval (20 steps and 40
    // evaluations). The very first step is not bounded: it takes a few hundred ms in a fresh instance.
    expect(r.steadyBlockMs).toBeLessThan(250);
    // The refused Workers are reported as CSP violations (by Chromium and by the page's listener);
    // nothing else may be.
    expect(problems.filter((p) => !(expected.thread === 'main' && /worker-src/.test(p)))).toEqual([]);
  });
});
