// Linear attention on every variant: elu(x) + 1 features and Linformer against their float64
// formulas; FAVOR+ against softmax attention, its error falling as the features grow.
import { describe, expect, it } from 'vitest';
import { maxError, randn, refAttention } from './reference.js';
import { eluPlusOne, refKernelAttention, refLinformer } from './reference-variants.js';
import { useVariants, VARIANTS } from './variants.js';

const TOL = 1e-5;
const libs = useVariants();

/** Mean |got - want|. */
const meanError = (got: ArrayLike<number>, want: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < got.length; i++) s += Math.abs(got[i] - want[i]);
  return s / got.length;
};

describe.each(VARIANTS)('%s', (variant) => {
  const eluCases = [
    { name: 'Sq == Sk', lead: [2], Sq: 19, Sk: 19, D: 8, Dv: 5, scale: 2 },
    { name: 'Sq < Sk, heads [2, 3]', lead: [2, 3], Sq: 7, Sk: 23, D: 16, Dv: 3, scale: 1 },
    { name: 'Sq > Sk', lead: [1], Sq: 23, Sk: 7, D: 4, Dv: 6, scale: 1 },
    { name: 'SIMD tails', lead: [], Sq: 37, Sk: 41, D: 67, Dv: 33, scale: 0.5 },
  ];
  for (const causal of [false, true]) {
    it.each(eluCases)(`elu, causal ${causal}: $name`, (c) => {
      const q = randn([...c.lead, c.Sq, c.D], 1, c.scale), k = randn([...c.lead, c.Sk, c.D], 2, c.scale), v = randn([...c.lead, c.Sk, c.Dv], 3);
      const got = libs[variant].linearAttention(q, k, v, causal ? { causal } : undefined);
      const want = refKernelAttention(q, k, v, eluPlusOne, causal);
      expect(got.output.shape).toEqual(want.shape);
      expect(maxError(got.output.data, want.data)).toBeLessThanOrEqual(TOL);
    });
  }

  it('linformer with given projections E and F, and with F = E shared', () => {
    const q = randn([2, 13, 8], 4), k = randn([2, 29, 8], 5), v = randn([2, 29, 5], 6);
    const E = randn([6, 29], 7, 0.4), F = randn([6, 29], 8, 0.4);
    const got = libs[variant].linearAttention(q, k, v, { method: 'linformer', projection: { E, F } });
    expect(got.output.shape).toEqual([2, 13, 5]);
    expect(maxError(got.output.data, refLinformer(q, k, v, E, F).data)).toBeLessThanOrEqual(TOL);
    const shared = libs[variant].linearAttention(q, k, v, { method: 'linformer', projection: { E }, rank: 6 });
    expect(maxError(shared.output.data, refLinformer(q, k, v, E, E).data)).toBeLessThanOrEqual(TOL);
  });

  it('linformer with drawn projections is seeded', () => {
    const q = randn([20, 8], 4), k = randn([50, 8], 5), v = randn([50, 4], 6);
    const a = libs[variant].linearAttention(q, k, v, { method: 'linformer', rank: 8, seed: 1 });
    expect(libs[variant].linearAttention(q, k, v, { method: 'linformer', rank: 8, seed: 1 }).output.data).toEqual(a.output.data);
    expect(libs[variant].linearAttention(q, k, v, { method: 'linformer', rank: 8, seed: 2 }).output.data).not.toEqual(a.output.data);
    expect(a.output.data.every(Number.isFinite)).toBe(true);
  });

  for (const causal of [false, true]) {
    it(`FAVOR+ approaches softmax attention as features grow (causal ${causal})`, () => {
      // Mean error over 8 seeds; Monte Carlo, so it falls about as 1/sqrt(features).
      const q = randn([64, 16], 11, 0.5), k = randn([64, 16], 12, 0.5), v = randn([64, 8], 13);
      const exact = refAttention(q, k, v, { causal }).output.data;
      const errors = [16, 64, 256].map((features) => {
        let e = 0;
        for (let seed = 0; seed < 8; seed++) {
          const got = libs[variant].linearAttention(q, k, v, { method: 'favor+', features, seed, causal });
          e += meanError(got.output.data, exact) / 8;
        }
        return e;
      });
      expect(errors[1]).toBeLessThan(errors[0]);
      expect(errors[2]).toBeLessThan(errors[1]);
      expect(errors[2]).toBeLessThan(errors[0] / 2.5);
    });
  }

  it('FAVOR+ is seeded', () => {
    const q = randn([2, 10, 8], 1), v = randn([2, 10, 4], 2);
    const a = libs[variant].linearAttention(q, q, v, { method: 'favor+', features: 32, seed: 3 });
    expect(libs[variant].linearAttention(q, q, v, { method: 'favor+', features: 32, seed: 3 }).output.data).toEqual(a.output.data);
    expect(libs[variant].linearAttention(q, q, v, { method: 'favor+', features: 32, seed: 4 }).output.data).not.toEqual(a.output.data);
  });

  it('no keys: zero output', () => {
    const q = randn([3, 4], 1), k = { data: new Float32Array(0), shape: [0, 4] }, v = { data: new Float32Array(0), shape: [0, 2] };
    for (const method of ['elu', 'favor+'] as const) {
      expect(Array.from(libs[variant].linearAttention(q, k, v, { method }).output.data)).toEqual([0, 0, 0, 0, 0, 0]);
    }
  });

  it('a long sequence costs O(S) memory', () => {
    const S = 16384, q = randn([S, 32], 4), v = randn([S, 8], 5);
    for (const options of [{ causal: true }, { method: 'favor+', features: 64 }, { method: 'linformer', rank: 32 }] as const) {
      expect(libs[variant].linearAttention(q, q, v, options).output.data.every(Number.isFinite)).toBe(true);
    }
    expect(libs[variant].heapStats().total).toBeLessThan(64 * 2 ** 20);
  });
});

describe('linear attention across variants', () => {
  it('every build agrees with scalar within 1e-5', () => {
    const q = randn([2, 2, 30, 16], 1), k = randn([2, 2, 30, 16], 2), v = randn([2, 2, 30, 8], 3);
    for (const options of [{}, { causal: true }, { method: 'favor+', features: 48, causal: true }, { method: 'linformer', rank: 5 }] as const) {
      const [a, ...others] = VARIANTS.map((name) => libs[name].linearAttention(q, k, v, options).output.data);
      expect(others.length).toBe(VARIANTS.length - 1);
      for (const b of others) expect(maxError(b, a)).toBeLessThanOrEqual(TOL);
    }
  });
});
