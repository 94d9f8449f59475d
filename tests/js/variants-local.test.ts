// Local (sliding-window) attention on every variant against float64 dense attention masked to
// the same window.
import { describe, expect, it } from 'vitest';
import { maxError, randn, refAttention } from './reference.js';
import { localRule, patternFrom } from './reference-variants.js';
import { useVariants, VARIANTS } from './variants.js';

const TOL = 1e-5;
const libs = useVariants();

const cases = [
  { name: 'window 3', lead: [2], Sq: 40, Sk: 40, D: 16, Dv: 8, window: 3 },
  { name: 'window 0 (the diagonal)', lead: [2], Sq: 9, Sk: 9, D: 8, Dv: 4, window: 0 },
  { name: 'window wider than the sequence', lead: [1], Sq: 10, Sk: 10, D: 8, Dv: 4, window: 100 },
  { name: 'causal window 4', lead: [2], Sq: 30, Sk: 30, D: 8, Dv: 8, window: 4, causal: true },
  { name: 'Sq < Sk', lead: [1], Sq: 12, Sk: 40, D: 8, Dv: 3, window: 5 },
  { name: 'Sq > Sk, causal', lead: [1], Sq: 40, Sk: 12, D: 8, Dv: 3, window: 6, causal: true },
  { name: 'heads [2, 3]', lead: [2, 3], Sq: 17, Sk: 17, D: 8, Dv: 8, window: 2 },
  { name: 'unbatched [S, D]', lead: [], Sq: 21, Sk: 21, D: 4, Dv: 4, window: 1 },
  { name: 'SIMD tails', lead: [1], Sq: 131, Sk: 131, D: 67, Dv: 33, window: 19 },
];

describe.each(VARIANTS)('%s', (variant) => {
  it.each(cases)('local attention: $name', (c) => {
    const q = randn([...c.lead, c.Sq, c.D], 1), k = randn([...c.lead, c.Sk, c.D], 2), v = randn([...c.lead, c.Sk, c.Dv], 3);
    const pattern = { type: 'local', window: c.window } as const;
    const got = libs[variant].attention(q, k, v, { pattern, causal: c.causal, returnWeights: true });
    const want = refAttention(q, k, v, { attnMask: patternFrom(c.Sq, c.Sk, localRule(c.window)), causal: c.causal });
    expect(got.output.shape).toEqual(want.output.shape);
    expect(got.weights!.shape).toEqual(want.weights.shape);
    expect(maxError(got.output.data, want.output.data)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights!.data, want.weights.data)).toBeLessThanOrEqual(TOL);
    want.weights.data.forEach((w, i) => { if (w === 0) expect(got.weights!.data[i]).toBe(0); });
    expect(libs[variant].attention(q, k, v, { pattern, causal: c.causal }).output.data).toEqual(got.output.data);
  });

  it.each([false, true])('attentionPattern is the window (causal %s)', (causal) => {
    const got = libs[variant].attentionPattern({ type: 'local', window: 3 }, 12, 15, { causal });
    const want = patternFrom(12, 15, (i, j) => localRule(3)(i, j) && (!causal || j <= i));
    expect(got.shape).toEqual([12, 15]);
    expect(got.data).toEqual(want.data);
  });

  it('a long sequence never builds an S x S matrix', () => {
    // 8192 x 8192 floats would be 256 MiB; the heap stays far below that.
    const S = 8192, q = randn([S, 32], 4), v = randn([S, 8], 5);
    const got = libs[variant].attention(q, q, v, { pattern: { type: 'local', window: 16 }, causal: true });
    expect(got.output.data.every(Number.isFinite)).toBe(true);
    expect(libs[variant].heapStats().total).toBeLessThan(64 * 2 ** 20);
  });
});
