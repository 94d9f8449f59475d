// Relative positions on every variant: RoPE against its float64 formula, and RoPE and ALiBi
// inside attention and multi-head attention against float64 references with the same rotation
// or bias.
import { describe, expect, it } from 'vitest';
import { maxError, randBool, randn, refAttention, refMultiHead } from './reference.js';
import { alibiBias, alibiSlopes, f32, refRope } from './reference-variants.js';
import { useVariants, VARIANTS } from './variants.js';

const TOL = 1e-5;
const libs = useVariants();
const prod = (s: number[]) => s.reduce((a, b) => a * b, 1);

/** ALiBi bias [H, Sq, Sk] repeated over a leading batch B: [B * H, Sq, Sk]. */
function tiled(bias: { data: Float64Array; shape: number[] }, B: number) {
  const data = new Float32Array(B * bias.data.length);
  for (let b = 0; b < B; b++) data.set(bias.data, b * bias.data.length);
  return { data, shape: [B * bias.shape[0], ...bias.shape.slice(1)] };
}

describe.each(VARIANTS)('%s', (variant) => {
  const ropeCases = [
    { name: 'defaults', shape: [2, 7, 8], options: undefined },
    { name: 'offset and base', shape: [3, 5, 6], options: { offset: 9, base: 500 } },
    { name: 'halves (GPT-NeoX)', shape: [2, 2, 6, 8], options: { pairs: 'halves' } },
    { name: 'far positions', shape: [4, 16], options: { offset: 100000 } },
  ] as const;
  it.each(ropeCases)('rope: $name', (c) => {
    const x = randn([...c.shape], 1);
    const [S, D] = c.shape.slice(-2);
    const got = libs[variant].rope(x, c.options);
    expect(got.shape).toEqual(c.shape);
    expect(maxError(got.data, refRope(x.data, prod(c.shape.slice(0, -2)), S, 1, D, c.options))).toBeLessThanOrEqual(TOL);
  });

  it('rope: scores depend on the relative position only', () => {
    const q = randn([1, 16], 2), k = randn([1, 16], 3);
    const score = (pq: number, pk: number) => {
      const a = libs[variant].rope(q, { offset: pq }).data, b = libs[variant].rope(k, { offset: pk }).data;
      return a.reduce((s, x, i) => s + x * b[i], 0);
    };
    for (const shift of [1, 50, 1000]) expect(score(5 + shift, 2 + shift)).toBeCloseTo(score(5, 2), 4);
  });

  it.each([{ causal: false }, { causal: true, rope: { pairs: 'halves', offset: 4 } }] as const)('attention with rope %o', (c) => {
    const q = randn([2, 3, 9, 8], 4), k = randn([2, 3, 11, 8], 5), v = randn([2, 3, 11, 4], 6);
    const ropeOptions = 'rope' in c ? c.rope : {};
    const got = libs[variant].attention(q, k, v, { rope: 'rope' in c ? c.rope : true, causal: c.causal });
    const want = refAttention(f32(refRope(q.data, 6, 9, 1, 8, ropeOptions), q.shape), f32(refRope(k.data, 6, 11, 1, 8, ropeOptions), k.shape), v, { causal: c.causal });
    expect(maxError(got.output.data, want.output.data)).toBeLessThanOrEqual(TOL);
    // The same as rotating first; and the caller's q and k are left alone.
    const q0 = q.data.slice();
    const byHand = libs[variant].attention(libs[variant].rope(q, ropeOptions), libs[variant].rope(k, ropeOptions), v, { causal: c.causal });
    expect(byHand.output.data).toEqual(got.output.data);
    expect(q.data).toEqual(q0);
  });

  const alibiCases = [
    { name: 'the paper\'s slopes, heads [2, 3]', lead: [2, 3], Sq: 9, Sk: 9, alibi: true },
    { name: 'causal, Sq > Sk', lead: [1, 4], Sq: 11, Sk: 5, alibi: true, causal: true },
    { name: 'Sq < Sk (a decoder step)', lead: [2, 2], Sq: 1, Sk: 7, alibi: true },
    { name: 'your slopes', lead: [3], Sq: 6, Sk: 6, alibi: Float32Array.from([0.3, 0, 2]) },
    { name: 'q of rank 2: one head', lead: [], Sq: 6, Sk: 8, alibi: true },
  ];
  it.each(alibiCases)('attention with alibi: $name', (c) => {
    const q = randn([...c.lead, c.Sq, 8], 7), k = randn([...c.lead, c.Sk, 8], 8), v = randn([...c.lead, c.Sk, 4], 9);
    const H = c.lead.at(-1) ?? 1;
    const slopes = c.alibi === true ? alibiSlopes(H) : Array.from(c.alibi);
    const got = libs[variant].attention(q, k, v, { alibi: c.alibi, causal: c.causal, returnWeights: true });
    const want = refAttention(q, k, v, { attnMask: f32(alibiBias(slopes, c.Sq, c.Sk).data, [H, c.Sq, c.Sk]), causal: c.causal });
    expect(maxError(got.output.data, want.output.data)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights!.data, want.weights.data)).toBeLessThanOrEqual(TOL);
  });

  const E = 12, H = 3;
  const params = { numHeads: H, inProjWeight: randn([3 * E, E], 10, 0.5), inProjBias: randn([3 * E], 11), outProjWeight: randn([E, E], 12, 0.5), outProjBias: randn([E], 13) };
  const mhaCases = [
    { name: 'alibi, causal, batched', B: 2, L: 6, S: 6, alibi: true as const, causal: true },
    { name: 'alibi, your slopes, cross L != S', B: 2, L: 4, S: 7, alibi: Float32Array.from([1, 0.5, 0.125]) },
    { name: 'rope, batched', B: 2, L: 5, S: 5, rope: true as const },
    { name: 'rope halves with offset, cross, causal', B: 1, L: 4, S: 6, rope: { pairs: 'halves', offset: 3 } as const, causal: true },
    { name: 'rope and alibi with key padding, unbatched', B: 0, L: 5, S: 5, rope: true as const, alibi: true as const, kpm: true },
  ];
  it.each(mhaCases)('multiHeadAttention: $name', (c) => {
    const Bn = c.B || 1, lead = c.B ? [c.B] : [];
    const query = randn([...lead, c.L, E], 14), key = randn([...lead, c.S, E], 15), value = randn([...lead, c.S, E], 16);
    const keyPaddingMask = c.kpm ? { ...randBool([c.S], 17, 0.3), data: Uint8Array.from([0, 1, 0, 0, 1]) } : undefined;
    const got = libs[variant].multiHeadAttention(query, key, value, params, { alibi: c.alibi, rope: c.rope, causal: c.causal, keyPaddingMask, needWeights: true, averageWeights: false });
    const ropeOptions = c.rope === true ? {} : c.rope;
    const slopes = c.alibi === undefined ? null : c.alibi === true ? alibiSlopes(H) : Array.from(c.alibi);
    const want = refMultiHead(query, key, value, params, {
      causal: c.causal,
      keyPaddingMask: keyPaddingMask && { data: keyPaddingMask.data, shape: [1, c.S] },
      attnMask: slopes ? tiled(alibiBias(slopes, c.L, c.S), Bn) : undefined,
      rotate: ropeOptions ? (x, n) => x.set(refRope(x, Bn, n, H, E / H, ropeOptions)) : undefined,
      averageWeights: false,
    });
    expect(maxError(got.output.data, want.output.data)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights!.data, want.weights.data)).toBeLessThanOrEqual(TOL);
  });
});
