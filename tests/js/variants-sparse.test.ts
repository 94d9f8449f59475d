// Longformer and BigBird attention on every variant against float64 dense attention masked by
// the same pattern; the patterns against their definitions; composition with the other masks.
import type { BoolTensor } from 'attnlab';
import { describe, expect, it } from 'vitest';
import { maxError, randn, refAttention } from './reference.js';
import { alibiBias, alibiSlopes, combine, longformerRule, patternFrom } from './reference-variants.js';
import { useVariants, VARIANTS } from './variants.js';

const TOL = 1e-5;
const libs = useVariants();

/** Checks a BigBird pattern block by block against the paper's rules; returns the random blocks per row. */
function checkBigBird(p: BoolTensor, Sq: number, Sk: number, bs: number, wb: number, global: number[], R: number): number[][] {
  const nq = Math.ceil(Sq / bs), nk = Math.ceil(Sk / bs);
  const random: number[][] = [];
  for (let r = 0; r < nq; r++) {
    const extra: number[] = [];
    let available = 0;
    for (let c = 0; c < nk; c++) {
      const first = p.data[r * bs * Sk + c * bs];
      for (let i = r * bs; i < Math.min(Sq, (r + 1) * bs); i++)
        for (let j = c * bs; j < Math.min(Sk, (c + 1) * bs); j++) expect(p.data[i * Sk + j], `block (${r}, ${c}) is not uniform`).toBe(first);
      const fixed = Math.abs(r - c) <= wb || global.includes(r) || global.includes(c);
      if (fixed) expect(first, `block (${r}, ${c}) is in the window or global`).toBe(1);
      else {
        available++;
        if (first) extra.push(c);
      }
    }
    expect(extra.length, `random blocks of row ${r}`).toBe(global.includes(r) ? 0 : Math.min(R, available));
    random.push(extra);
  }
  return random;
}

describe.each(VARIANTS)('%s', (variant) => {
  const longformerCases = [
    { name: 'window 2, globals 0 and 20', lead: [2], Sq: 41, Sk: 41, window: 2, global: [0, 20] },
    { name: 'repeated global index', lead: [1], Sq: 17, Sk: 17, window: 0, global: [3, 3] },
    { name: 'no globals', lead: [1], Sq: 30, Sk: 30, window: 3, global: [] },
    { name: 'Sq > Sk: global past Sk marks a query only', lead: [1], Sq: 30, Sk: 12, window: 2, global: [1, 25] },
    { name: 'Sq < Sk: global past Sq marks a key only', lead: [2, 2], Sq: 12, Sk: 30, window: 2, global: [1, 25] },
  ];
  it.each(longformerCases)('longformer: $name', (c) => {
    const q = randn([...c.lead, c.Sq, 16], 1), k = randn([...c.lead, c.Sk, 16], 2), v = randn([...c.lead, c.Sk, 8], 3);
    const pattern = { type: 'longformer', window: c.window, global: c.global } as const;
    const mask = patternFrom(c.Sq, c.Sk, longformerRule(c.window, c.global));
    expect(libs[variant].attentionPattern(pattern, c.Sq, c.Sk).data).toEqual(mask.data);
    const got = libs[variant].attention(q, k, v, { pattern, returnWeights: true });
    const want = refAttention(q, k, v, { attnMask: mask });
    expect(maxError(got.output.data, want.output.data)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights!.data, want.weights.data)).toBeLessThanOrEqual(TOL);
    want.weights.data.forEach((w, i) => { if (w === 0) expect(got.weights!.data[i]).toBe(0); });
  });

  const bigbirdCases = [
    { name: 'blocks of 8, partial last block', Sq: 50, Sk: 50, blockSize: 8, windowBlocks: 1, globalBlocks: [0], randomBlocks: 2, seed: 7 },
    { name: 'defaults (3-block window, global [0], 3 random)', Sq: 96, Sk: 96, blockSize: 8 },
    { name: 'two global blocks, no window', Sq: 40, Sk: 40, blockSize: 4, windowBlocks: 0, globalBlocks: [0, 9], randomBlocks: 3, seed: 1 },
    { name: 'Sq != Sk', Sq: 23, Sk: 31, blockSize: 5, windowBlocks: 1, globalBlocks: [], randomBlocks: 1, seed: 3 },
  ];
  it.each(bigbirdCases)('bigbird: $name', (c) => {
    const { name: _n, Sq, Sk, ...spec } = c;
    const pattern = { type: 'bigbird', ...spec } as const;
    const mask = libs[variant].attentionPattern(pattern, Sq, Sk);
    checkBigBird(mask, Sq, Sk, c.blockSize, c.windowBlocks ?? 1, c.globalBlocks ?? [0], c.randomBlocks ?? 3);
    const q = randn([2, Sq, 16], 4), k = randn([2, Sk, 16], 5), v = randn([2, Sk, 8], 6);
    const got = libs[variant].attention(q, k, v, { pattern, returnWeights: true });
    const want = refAttention(q, k, v, { attnMask: mask });
    expect(maxError(got.output.data, want.output.data)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights!.data, want.weights.data)).toBeLessThanOrEqual(TOL);
  });

  it('bigbird random blocks are seeded', () => {
    const spec = { type: 'bigbird', blockSize: 4, windowBlocks: 1, randomBlocks: 2 } as const;
    const a = libs[variant].attentionPattern({ ...spec, seed: 11 }, 128, 128);
    expect(libs[variant].attentionPattern({ ...spec, seed: 11 }, 128, 128).data).toEqual(a.data);
    expect(libs[variant].attentionPattern({ ...spec, seed: 12 }, 128, 128).data).not.toEqual(a.data);
  });

  it('composes with causal, validLens, attnMask and ALiBi', () => {
    const H = 2, S = 24;
    const q = randn([2, H, S, 8], 7), k = randn([2, H, S, 8], 8), v = randn([2, H, S, 6], 9);
    const pattern = { type: 'longformer', window: 3, global: [0, 13] } as const;
    const add = randn([S, S], 10);
    const validLens = new Int32Array([20, 9]);
    const got = libs[variant].attention(q, k, v, { pattern, causal: true, validLens, attnMask: add, alibi: true, returnWeights: true });
    // One additive mask carrying the pattern (-Infinity), the float mask and ALiBi.
    const bias = alibiBias(alibiSlopes(H), S, S);
    bias.data.forEach((x, t) => (bias.data[t] = x + add.data[t % (S * S)]));
    const want = refAttention(q, k, v, { causal: true, validLens, attnMask: combine(patternFrom(S, S, longformerRule(3, [0, 13])), bias) });
    expect(maxError(got.output.data, want.output.data)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights!.data, want.weights.data)).toBeLessThanOrEqual(TOL);
  });

  it('a long sequence never builds an S x S matrix', () => {
    const S = 8192, q = randn([S, 32], 4), v = randn([S, 8], 5);
    const got = libs[variant].attention(q, q, v, { pattern: { type: 'bigbird', blockSize: 32, randomBlocks: 2 } });
    expect(got.output.data.every(Number.isFinite)).toBe(true);
    expect(libs[variant].heapStats().total).toBeLessThan(64 * 2 ** 20);
  });
});

describe('patterns across variants', () => {
  it('one seed draws one BigBird pattern on every build', () => {
    const spec = { type: 'bigbird', blockSize: 8, randomBlocks: 3, seed: 5 } as const;
    const [a, ...others] = VARIANTS.map((v) => libs[v].attentionPattern(spec, 200, 200));
    expect(others.length).toBe(VARIANTS.length - 1);
    for (const b of others) expect(b.data).toEqual(a.data);
  });
});
