// package.json's `engines` is what the loader needs: Node >= 20.16, the first Node 20 with
// process.getBuiltinModule (how the glue and the loader reach fs, url, module and worker_threads
// without a static `node:` import that would break browser bundles). Older Nodes cannot be run
// here; a child process without process.getBuiltinModule stands in for one.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

describe('engines', () => {
  it('package.json asks for the Node the loader needs, and this Node has it', () => {
    expect(pkg.engines.node).toBe('>=20.16');
    const [major, minor] = process.versions.node.split('.').map(Number);
    expect(major > 20 || (major === 20 && minor >= 16)).toBe(true);
    expect(typeof (process as { getBuiltinModule?: unknown }).getBuiltinModule).toBe('function');
  });

  it('a Node without process.getBuiltinModule gets an Error naming the version needed', () => {
    const script = `
      delete process.getBuiltinModule;
      const { load } = await import('attnlab');
      try { await load({ variant: 'simd' }); console.log('loaded'); } catch (e) { console.log(e instanceof Error ? e.message : 'not an Error: ' + e); }
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    // load() tries each build down to scalar, and says why each could not start.
    expect(out.trim()).toMatch(/^load: no WebAssembly build could start: /);
    expect(out).toContain(`'scalar' failed to start (attnlab needs Node >= 20.16 (process.getBuiltinModule); this is Node ${process.versions.node})`);
  });
});
