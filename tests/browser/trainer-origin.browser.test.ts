// The trainer as a course author embeds it: the built package on one origin (the "CDN": CORS `*`,
// CORP cross-origin), the course page on another, imported by absolute URL with no bundler. On a
// plain page, a cross-origin isolated page, in a plain iframe and in sandboxed iframes
// (allow-scripts, with and without allow-same-origin), createTrainer() reports progress and
// cancel() settles `done` at once (in a Worker) or at the trainer's next turn (in slices on the page).
// A direct `new Worker(cross-origin URL)` is refused there (SecurityError): the trainer must start
// its Worker through a same-origin bootstrap, or train on the page in slices. Times are printed,
// never asserted (they vary with the machine's load): the assertions count event-loop turns.
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
  turnsCancelToDone?: number;
  firstProgressMs?: number;
  longestBlockMs?: number;
  steadyBlockMs?: number;
  heapGrew?: boolean;
  slicedTurns?: number;
  workerError?: string;
}

// The course page's script: load the package by URL, train, cancel from a 0 ms timer set at the
// second progress event (however slow the machine, it has trained past the first), report to window.__result (and to the parent frame, if framed). Event-loop turns
// are counted by a chain of MessageChannel tasks, one a turn (the trainer yields by the same kind
// of task, run in the order posted), from cancel() on. When the training ran on the page, a second run goes to its first
// progress event under a stepped clock (each performance.now() 1 ms after the one before): 20 steps
// and 40 held-out sequences in slices of 8 ms hold at least ceil(20 / 8) + ceil(40 / 8) = 8 turns,
// where an unsliced trainer takes one (tests/js/trainer-probe.ts has the argument).
const trainerPage = (pkgUrl: string) => `<!doctype html><meta charset="utf-8"><title>trainer</title><link rel="icon" href="data:,">
<script type="module">
const report = (r) => { window.__result = r; if (parent !== window) parent.postMessage({ trainer: r }, '*'); };
const turnCounter = () => {
  let n = 0, on = true;
  const ch = new MessageChannel();
  ch.port1.onmessage = () => { n++; if (on) ch.port2.postMessage(0); };
  ch.port2.postMessage(0);
  return { count: () => n, stop: () => { on = false; ch.port1.close(); } };
};
const options = { task: 'reverse', hidden: 32, evalEvery: 20, evalSize: 40, maxSeconds: 60, targetAccuracy: 1 };
try {
  const { load } = await import(${JSON.stringify(`${pkgUrl}dist/index.js`)});
  const lib = await load({ variant: 'simd' });
  const heapBefore = lib.heapStats().total;
  let turns;
  // The longest event-loop block (printed): over the whole run, and after the first progress event
  // (by then the first training step, several times slower than the next while the engine warms up, is past).
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
  const s = lib.createTrainer({ ...options,
    onProgress: (p) => {
      if (cancelAt) afterCancel++;
      progress.push({ step: p.step, thread: p.thread });
      if (progress.length === 1) firstProgressMs = performance.now() - t0;
      if (progress.length === 2) setTimeout(() => { cancelAt = performance.now(); turns = turnCounter(); s.cancel(); });
    } });
  const r = await s.done;
  const cancelMs = performance.now() - cancelAt;
  const turnsCancelToDone = turns.count();
  turns.stop();
  clearInterval(probe);
  // The trainer's engine (its own WebAssembly module) is loaded on the page only to train there.
  const heapGrew = lib.heapStats().total > heapBefore;
  let slicedTurns;
  if (r.thread === 'main') {
    const counter = turnCounter();
    let clock = 0, from = 0;
    performance.now = () => { if (clock === 0) from = counter.count(); return ++clock; };
    try {
      slicedTurns = await new Promise((resolve) => {
        const t = lib.createTrainer({ ...options, onProgress: () => { resolve(counter.count() - from); t.cancel(); } });
      });
    } finally {
      delete performance.now;
      counter.stop();
    }
  }
  report({ ok: true, origin: self.origin, workerError: r.workerError, isolated: self.crossOriginIsolated === true, thread: r.thread, reason: r.reason,
    step: r.step, progress, afterCancel, cancelMs, turnsCancelToDone, firstProgressMs, longestBlockMs: worst, steadyBlockMs: steady, heapGrew, slicedTurns });
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
  test.each(cases)('%s: progress, then cancel settles done at once or at the next turn', async (_name, path, expected) => {
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
    expect(r.workerError === undefined).toBe(expected.thread === 'worker');
    // done settles before any turn queued after cancel(): in cancel()'s own turn from a Worker, in
    // the trainer's next turn (posted before) on the page. A Worker leaves the page's event loop
    // alone: the page never loads the trainer's engine. The fallback yields after every ~8 ms slice
    // of whole steps: the stepped-clock run took at least 8 turns.
    expect(r.turnsCancelToDone).toBe(0);
    expect(r.heapGrew).toBe(expected.thread === 'main');
    if (expected.thread === 'main') expect(r.slicedTurns).toBeGreaterThanOrEqual(8);
    // The refused Workers are reported as CSP violations (by Chromium and by the page's listener);
    // nothing else may be.
    expect(problems.filter((p) => !(expected.thread === 'main' && /worker-src/.test(p)))).toEqual([]);
  });
});
