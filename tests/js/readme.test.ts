// Every ```ts example in README.md runs as written (as an ES module importing 'attnlab'), and
// prints what its `// comments` promise.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);

// Runs before the example: records the arguments of every console.log call (as JSON, typed arrays
// as plain arrays) and prints them as one JSON line when the process exits.
const recorder = `
const __logs = [];
console.log = (...args) => __logs.push(JSON.parse(JSON.stringify(args, (_k, v) => ArrayBuffer.isView(v) ? Array.from(v) : v)));
process.on('exit', () => process.stdout.write(JSON.stringify(__logs) + '\\n'));
`;

type Logs = unknown[][];

/** What each example's comments promise, found by a line of its code. */
const promises: { marker: string; check: (logs: Logs) => void }[] = [
  {
    // "Using it": console.log(output.shape, weights.shape); // [2, 4, 8] [2, 4, 4]
    marker: 'console.log(output.shape, weights.shape); // [2, 4, 8] [2, 4, 4]',
    check: (logs) => expect(logs).toEqual([[[2, 4, 8], [2, 4, 4]]]),
  },
  {
    // WebGPU: console.log(lib.backend, output.shape); // 'webgpu' or 'wasm', [2, 64, 32]
    marker: "console.log(lib.backend, output.shape); // 'webgpu' or 'wasm', [2, 64, 32]",
    check: (logs) => {
      expect(logs).toHaveLength(1);
      expect(['webgpu', 'wasm']).toContain(logs[0][0]);
      expect(logs[0][1]).toEqual([2, 64, 32]);
    },
  },
  {
    // Translation: text "I'm tired.", subword pieces, pieces ending with '</s>', attention kind
    // 'transformer' (arch: 'transformer'), every hypothesis best first.
    marker: 'console.log(r.text);                   // "I\'m tired."',
    check: (logs) => {
      expect(logs).toHaveLength(5);
      const [[text], [source], [target], [kind], [beams]] = logs as [[string], [string[]], [string[]], [string], [string[]]];
      expect(text).toBe("I'm tired.");
      expect(source.length).toBeGreaterThan(0);
      source.forEach((piece) => expect(typeof piece).toBe('string'));
      expect(target.at(-1)).toBe('</s>');
      expect(kind).toBe('transformer');
      expect(beams.length).toBeGreaterThan(1);
      expect(beams[0]).toBe(text);
    },
  },
];

describe('README examples', () => {
  it('has examples', () => expect(examples.length).toBeGreaterThan(0));

  it('every promise above still matches an example (a README edit must update this test)', () => {
    for (const { marker } of promises) expect(examples.some((code) => code.includes(marker)), marker).toBe(true);
  });

  it.each(examples.map((code, i) => [i, code]))('example %i runs and prints what its comments say', (_i, code) => {
    // Inside the checkout so that 'attnlab' resolves to it, as it would from node_modules.
    const dir = mkdtempSync(join(root, 'build', 'readme-'));
    try {
      const file = join(dir, 'example.mjs');
      writeFileSync(file, recorder + (code as string));
      const out = execFileSync(process.execPath, [file], { encoding: 'utf8', timeout: 60_000 });
      const logs = JSON.parse(out.trim().split('\n').at(-1)!) as Logs;
      expect(logs.length).toBeGreaterThan(0);
      for (const { marker, check } of promises) if ((code as string).includes(marker)) check(logs);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
