// Reformer's LSH attention and the Synthesizer against float64 references of the same algorithms
// (the LSH rotations from the core's seeded generator, ported), and their bad inputs.
import { describe, expect, it } from 'vitest';
import { maxError, randn } from './reference.js';
import { refFromScores, refLsh, refMlp, Rng } from './reference-relative.js';
import { useVariants, VARIANTS } from './variants.js';

const TOL = 1e-5;
const libs = useVariants();

describe.each(VARIANTS)('%s', (variant) => {
  it.each([
    { name: 'one round', lead: [2], S: 32, D: 8, nBuckets: 4, nHashes: 1 },
    { name: 'three rounds, causal', lead: [2, 2], S: 48, D: 6, nBuckets: 8, nHashes: 3, causal: true },
    { name: 'explicit chunkSize, seed', lead: [], S: 40, D: 4, nBuckets: 6, nHashes: 2, chunkSize: 10, seed: 9 },
    { name: 'one chunk', lead: [1], S: 16, D: 8, nBuckets: 2, nHashes: 4, chunkSize: 16, causal: true },
  ])('lshAttention: $name', (c) => {
    const qk = randn([...c.lead, c.S, c.D], 1), v = randn([...c.lead, c.S, 3], 2);
    const got = libs[variant].lshAttention(qk, v, { nBuckets: c.nBuckets, nHashes: c.nHashes, chunkSize: c.chunkSize, causal: c.causal, seed: c.seed, returnBuckets: true, returnAttended: true });
    const want = refLsh(qk, v, c);
    expect(got.output.shape).toEqual([...c.lead, c.S, 3]);
    expect(got.buckets!.shape).toEqual([...c.lead, c.nHashes, c.S]);
    expect(got.attended!.shape).toEqual([...c.lead, c.nHashes, c.S, want.W]);
    expect(Array.from(got.buckets!.data)).toEqual(Array.from(want.buckets));
    expect(Array.from(got.attended!.data)).toEqual(Array.from(want.attended));
    expect(maxError(got.output.data, want.out)).toBeLessThanOrEqual(TOL);
  });

  it('lshAttention: bad inputs get named errors', () => {
    const lib = libs[variant];
    const qk = randn([12, 4], 3), v = randn([12, 2], 4);
    const bad: [unknown, unknown, object, RegExp][] = [
      [qk, v, { nBuckets: 8 }, /^lshAttention: options\.nBuckets: expected a divisor of the sequence length 12 .*got 8; or give options\.chunkSize$/],
      [qk, v, { nBuckets: 3 }, /^lshAttention: options\.nBuckets: expected an even integer >= 2 .*got 3$/],
      [qk, v, { nBuckets: 4, chunkSize: 5 }, /^lshAttention: options\.chunkSize: expected a divisor of the sequence length 12, got 5$/],
      [qk, v, { nHashes: 0, nBuckets: 4 }, /^lshAttention: options\.nHashes: expected an integer >= 1, got 0$/],
      [qk, randn([11, 2], 5), { nBuckets: 4 }, /^lshAttention: v: expected shape \[12, 2\] .*got \[11, 2\]$/],
      [qk, v, { nBuckets: 4, buckets: 2 }, /^lshAttention: options: unknown option 'buckets'|^lshAttention: options/],
      // Working memory past the heap's 2 GiB: named, not the core's "internal error: vector".
      [qk, v, { nBuckets: 1e9, chunkSize: 2 }, /^lshAttention: options\.nBuckets, options\.nHashes: expected working memory within the WebAssembly heap's 2 GiB limit, got \d+ bytes \(rotations nHashes x D x nBuckets \/ 2 = 1 x 4 x 500000000 floats/],
      [qk, v, { nBuckets: 2, nHashes: 1e9 }, /^lshAttention: options\.nBuckets, options\.nHashes: expected working memory within the WebAssembly heap's 2 GiB limit/],
    ];
    for (const [a, b, o, message] of bad) expect(() => lib.lshAttention(a as never, b as never, o)).toThrow(message);
    expect(lib.lshAttention(qk, v, { nBuckets: 4 }).output.shape).toEqual([12, 2]);
  });

  const B = 2, S = 12, D = 5, Dv = 3, hidden = 7;
  const x = randn([B, S, D], 10), v = randn([B, S, Dv], 11);
  const mlp = (out: number, seed: number) => ({ W1: randn([hidden, D], seed), b1: randn([hidden], seed + 1), W2: randn([out, hidden], seed + 2), b2: randn([out], seed + 3) });
  const dense = mlp(S, 20), factorA = mlp(4, 30), factorB = mlp(3, 40);
  const R = randn([S, S], 50), R1 = randn([S, 2], 51), R2 = randn([S, 2], 52);
  const q = randn([B, S, 4], 53), k = randn([B, S, 4], 54);
  const row = (b: number, i: number) => x.data.subarray((b * S + i) * D, (b * S + i + 1) * D);
  const dot = (b: number, i: number, j: number) => {
    let s = 0;
    for (let c = 0; c < 4; c++) s += q.data[(b * S + i) * 4 + c] * k.data[(b * S + j) * 4 + c];
    return s / 2;
  };
  const forms = [
    { name: 'dense', options: { kind: 'dense' as const, dense }, score: (b: number, i: number, j: number) => refMlp(row(b, i), dense)[j] },
    { name: 'factorized dense', options: { kind: 'factorized-dense' as const, factorA, factorB }, score: (b: number, i: number, j: number) => refMlp(row(b, i), factorA)[j % 4] * refMlp(row(b, i), factorB)[Math.floor(j / 4)] },
    { name: 'random, learned', options: { kind: 'random' as const, R }, score: (_b: number, i: number, j: number) => R.data[i * S + j] },
    { name: 'factorized random, learned', options: { kind: 'factorized-random' as const, R1, R2 }, score: (_b: number, i: number, j: number) => R1.data[i * 2] * R2.data[j * 2] + R1.data[i * 2 + 1] * R2.data[j * 2 + 1] },
  ];
  it.each(forms.flatMap((f) => [false, true].map((causal) => ({ ...f, causal }))))('synthesizer: $name, causal $causal', (c) => {
    const got = libs[variant].synthesizer(x, v, { ...c.options, causal: c.causal, returnWeights: true });
    const want = refFromScores(v, B, S, c.score, c.causal);
    expect(maxError(got.output.data, want.out)).toBeLessThanOrEqual(TOL);
    expect(maxError(got.weights!.data, want.weights)).toBeLessThanOrEqual(TOL);
    // The paper's mixture with dot-product scores.
    const mixed = libs[variant].synthesizer(x, v, { ...c.options, causal: c.causal, dot: { q, k, weight: 0.25 } });
    const wantMixed = refFromScores(v, B, S, (b, i, j) => 0.75 * c.score(b, i, j) + 0.25 * dot(b, i, j), c.causal);
    expect(maxError(mixed.output.data, wantMixed.out)).toBeLessThanOrEqual(TOL);
  });

  it('synthesizer: fixed random forms are drawn from the seed (N(0, 1), the core\'s generator)', () => {
    const got = libs[variant].synthesizer(null, v, { kind: 'random', seed: 3, returnWeights: true });
    const rng = new Rng(3);
    const Rf = Array.from({ length: S * S }, () => Math.fround(rng.normal()));
    expect(maxError(got.output.data, refFromScores(v, B, S, (_b, i, j) => Rf[i * S + j]).out)).toBeLessThanOrEqual(TOL);
    const fr = libs[variant].synthesizer(null, v, { kind: 'factorized-random', rank: 3, seed: 4 });
    const rng2 = new Rng(4);
    const F = Array.from({ length: 2 * S * 3 }, () => Math.fround(rng2.normal()));
    const score = (_b: number, i: number, j: number) => F[i * 3] * F[(S + j) * 3] + F[i * 3 + 1] * F[(S + j) * 3 + 1] + F[i * 3 + 2] * F[(S + j) * 3 + 2];
    expect(maxError(fr.output.data, refFromScores(v, B, S, score).out)).toBeLessThanOrEqual(TOL);
  });

  it('synthesizer: bad inputs get named errors', () => {
    const lib = libs[variant];
    const bad: [unknown, object, RegExp][] = [
      [x, { kind: 'dense' }, /^synthesizer: options\.dense: expected the learned MLP \{ W1 \[hidden, 5\], W2 \[12, hidden\], b1\?, b2\? \}, got undefined$/],
      [x, { kind: 'dense', dense: mlp(S + 1, 1) }, /^synthesizer: options\.dense\.W2: expected shape \[12, 7\] \[S, hidden\], got \[13, 7\]$/],
      [null, { kind: 'dense', dense }, /^synthesizer: x: expected the tokens \[\.\.\., S, D\] for kind 'dense', got null$/],
      [x, { kind: 'factorized-dense', factorA: mlp(5, 1), factorB }, /^synthesizer: options\.factorA, options\.factorB: expected output sizes a, b with a \* b = S = 12, got 5 \* 3$/],
      [x, { kind: 'random', R: randn([S, S + 1], 1) }, /^synthesizer: options\.R: expected shape \[12, 12\] \[S, S\], got \[12, 13\]$/],
      [x, { kind: 'factorized-random', R1 }, /^synthesizer: options\.R2: expected a tensor \[S, rank\] \(R1 and R2 go together\), got undefined$/],
      [x, { kind: 'random', dot: { q, k, weight: 0 } }, /^synthesizer: options\.dot\.weight: expected a number in \(0, 1\], got 0$/],
      [x, { kind: 'linear' }, /^synthesizer: options\.kind: expected one of/],
      [x, { kind: 'random', dense }, /^synthesizer: options: /],
    ];
    for (const [a, o, message] of bad) expect(() => lib.synthesizer(a as never, v, o as never)).toThrow(message);
    // Fixed random forms past the heap's 2 GiB.
    expect(() => lib.synthesizer(null, v, { kind: 'factorized-random', rank: 1e9 })).toThrow(/^synthesizer: options\.rank: expected fixed random R1, R2 \[S, rank\] within the WebAssembly heap's 2 GiB limit, got \[12, 1000000000\]: 96000000000 bytes$/);
    const long = { data: new Float32Array(60000), shape: [60000, 1] };
    expect(() => lib.synthesizer(null, long, { kind: 'random' })).toThrow(/^synthesizer: v: expected S with a fixed random R \[S, S\] \(no options\.R\) within the WebAssembly heap's 2 GiB limit, got S = 60000: 14400000000 bytes$/);
    expect(lib.synthesizer(x, v, { kind: 'dense', dense }).output.shape).toEqual([B, S, Dv]);
  });
});
