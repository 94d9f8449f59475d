// Every ```ts example in README.md runs as written (as an ES module importing 'attnlab').
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);

describe('README examples', () => {
  it('has examples', () => expect(examples.length).toBeGreaterThan(0));

  it.each(examples.map((code, i) => [i, code]))('example %i runs', (_i, code) => {
    // Inside the checkout so that 'attnlab' resolves to it, as it would from node_modules.
    const dir = mkdtempSync(join(root, 'build', 'readme-'));
    try {
      const file = join(dir, 'example.mjs');
      writeFileSync(file, code as string);
      const out = execFileSync(process.execPath, [file], { encoding: 'utf8', timeout: 60_000 });
      expect(out.length).toBeGreaterThan(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
