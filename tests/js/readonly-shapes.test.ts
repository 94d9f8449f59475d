// Shapes given as readonly arrays (`[2, 4, 8] as const`, onnxruntime-web's `dims: readonly
// number[]`): the runtime always took them (it copies the shape), but the published types asked
// for a mutable number[], so strict TypeScript refused them. Arguments are now TensorInput /
// BoolTensorInput, and the patterns' index lists readonly arrays; results stay Tensors with plain
// number[] shapes.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { load } from 'attnlab';
import { expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

const consumer = `
import { load, type Tensor } from 'attnlab';
const lib = await load();
const shape = [1, 3, 4] as const;
const dims: readonly number[] = [1, 3, 4];
const x = { data: new Float32Array(12), shape };
const y = { data: new Float32Array(12), shape: dims };
const w = (rows: number, cols: number) => ({ data: new Float32Array(rows * cols), shape: [rows, cols] as const });
const mask = { data: new Uint8Array(9), shape: [3, 3] as const };
const a = lib.attention(x, y, x, { attnMask: mask, t5: { weights: w(1, 32) }, shaw: { maxDistance: 1, keys: w(3, 4) } });
lib.maskedSoftmax(y, { attnMask: { data: new Float32Array(9), shape: [3, 3] as const } });
lib.multiHeadAttention(x, x, y, { numHeads: 2, inProjWeight: w(12, 4), outProjWeight: w(4, 4) }, { keyPaddingMask: { data: new Uint8Array(3), shape: [1, 3] as const } });
lib.linear(y, w(5, 4));
// The patterns' index lists likewise.
const globals = [0] as const;
lib.attention(x, x, x, { pattern: { type: 'longformer', window: 1, global: globals } });
lib.attentionPattern({ type: 'bigbird', blockSize: 1, globalBlocks: Object.freeze([0, 2]) }, 3, 3);
await lib.attentionAsync(x, x, x);
// Results keep plain arrays: a caller may store their shapes as number[].
const s: number[] = a.output.shape;
const t: Tensor = lib.rope(x);
console.log(s, t.shape);
lib.dispose();
`;

it('readonly shapes type-check under tsc --strict, and results keep number[] shapes', async () => {
  mkdirSync(join(root, 'build'), { recursive: true });
  // Inside the checkout, so that 'attnlab' resolves to this package (dist/).
  const dir = mkdtempSync(join(root, 'build', 'readonly-shapes-'));
  try {
    writeFileSync(join(dir, 'consumer.mts'), consumer);
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, skipLibCheck: false, target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', lib: ['es2022', 'esnext.disposable', 'dom'], types: [] },
      files: ['consumer.mts'],
    }));
    const tsc = join(root, 'node_modules/typescript/bin/tsc');
    const out = await promisify(execFile)(process.execPath, [tsc, '-p', dir], { encoding: 'utf8', timeout: 120_000 })
      .then((r) => r.stdout, (e: { stdout?: string }) => String(e.stdout ?? e));
    expect(out).toBe('');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 150_000);

it('and run: a frozen shape array is read, not kept', async () => {
  const lib = await load({ variant: 'simd' });
  const shape = Object.freeze([1, 3, 4]);
  const x = { data: new Float32Array(12).fill(0.5), shape };
  const { output } = lib.attention(x, x, x);
  expect(output.shape).toEqual([1, 3, 4]);
  expect(output.shape).not.toBe(shape);
  const pattern = { type: 'longformer' as const, window: 0, global: Object.freeze([1]) };
  expect(Array.from(lib.attentionPattern(pattern, 3, 3).data)).toEqual([1, 1, 0, 1, 1, 1, 0, 1, 1]);
  lib.dispose();
});
