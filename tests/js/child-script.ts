// A Node test's child process: a module script written inside the checkout (build/), so that
// 'attnlab' resolves to this package, run with `node [nodeArgs] script`, its stdout returned and
// the script deleted whatever happened. For what a test process cannot do itself: exit on its own,
// run with --expose-gc, attach the inspector before any Worker exists.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function runChildScript(name: string, source: string, opts: { nodeArgs?: string[]; timeout: number }): string {
  const build = fileURLToPath(new URL('../../build', import.meta.url));
  mkdirSync(build, { recursive: true });
  const dir = mkdtempSync(join(build, `${name}-`));
  const script = join(dir, `${name}.mjs`);
  writeFileSync(script, source);
  try {
    return execFileSync(process.execPath, [...(opts.nodeArgs ?? []), script], { encoding: 'utf8', timeout: opts.timeout });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A child script's lines that attach node:inspector to each Worker thread it starts: `session`,
 * and `threads` (NodeWorker.attachedToWorker's params, in order), for Runtime.evaluate inside one.
 * Put before the script's first Worker: Node 20 segfaults in NodeWorker.enable when a worker
 * thread is still ending (translator-worker.test.ts).
 */
export const WATCH_WORKERS = `
  import { Session } from 'node:inspector/promises';
  const session = new Session();
  session.connect();
  const threads = [];
  session.on('NodeWorker.attachedToWorker', ({ params }) => threads.push(params));
  await session.post('NodeWorker.enable', { waitForDebuggerOnStart: false });
`;
