// attnlab as a guest in a Node process: no process handlers, no globals, and a process that ends
// when its script does. Each case runs in a child process (tests/js/fixtures/guest-child.mjs):
// handlers and globals are process-wide, and only a child can show whether Node exits.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const child = fileURLToPath(new URL('./fixtures/guest-child.mjs', import.meta.url));

function runChild(mode: string, timeout = 30_000) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [child, mode], { encoding: 'utf8', timeout });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr, ms: performance.now() - t0 };
}

describe('attnlab as a guest in Node', () => {
  it("importing 'attnlab/components' outside a browser (server-side rendering) throws nothing and defines nothing", () => {
    const code = `const before = Object.keys(globalThis).sort().join();
const m = await import('attnlab/components');
console.log(JSON.stringify({ widgets: typeof m.AttnHeatmap, same: Object.keys(globalThis).sort().join() === before }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 30_000, cwd: fileURLToPath(new URL('../..', import.meta.url)) });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ widgets: 'function', same: true });
  });


  it('load() leaves process handlers and globalThis.Worker as it found them, for every build', () => {
    const r = runChild('handlers');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.before).toMatchObject({ uncaughtException: 0, unhandledRejection: 0, Worker: 'undefined', hasWorker: false });
    for (const variant of ['scalar', 'simd', 'simd-threads']) expect(report.after[variant]).toEqual(report.before);
  }, 60_000);

  it("the application's own handlers see its errors, and the process lives on", () => {
    const r = runChild('handlers');
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.seen).toEqual(['rejection: the app forgot an await', 'exception: the app threw in a timer']);
    expect(report.stillWorks).toEqual([2, 40, 8]);
  }, 60_000);

  // The timeout is far above the seconds a load takes here; a process kept alive by its worker
  // threads never exits and is killed by it (status null, signal SIGTERM).
  it.each(['undisposed', 'disposed'])('a script that loads the threaded build and ends (%s) lets Node exit', (mode) => {
    const r = runChild(mode, 20_000);
    expect(r.signal).toBe(null);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ variant: 'simd-threads', threads: 3 });
  }, 30_000);
});
