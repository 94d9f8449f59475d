// summarizeHeads (web/lib/pretrained/summary.ts) on attention maps built by hand.
import { describe, expect, it } from 'vitest';
import { summarizeHeads } from '../../web/lib/pretrained/summary.js';

describe('summarizeHeads', () => {
  // Two heads over S = 4: head 0 attends to the previous token (row 0 to itself), head 1 uniformly
  // to the keys it can see.
  const S = 4, data = new Float32Array(2 * S * S);
  for (let i = 0; i < S; i++) {
    data[i * S + Math.max(0, i - 1)] = 1;
    for (let j = 0; j <= i; j++) data[S * S + i * S + j] = 1 / (i + 1);
  }
  const att = { data, shape: [1, 2, S, S] };

  it('measures previous-token, first-token, self attention and entropy per head', () => {
    const [a, b] = summarizeHeads(att);
    expect(a).toMatchObject({ layer: 0, head: 0, previous: 1, first: 1 / 3, self: 1 / 4, entropy: 0 });
    expect(b.previous).toBeCloseTo((1 / 2 + 1 / 3 + 1 / 4) / 3, 6);
    expect(b.entropy).toBeCloseTo((0 + Math.log(2) + Math.log(3) + Math.log(4)) / 4, 6);
    expect(a.induction).toBeNaN();
  });

  it('scores induction: weight on the token after an earlier occurrence', () => {
    // ids A B C A: row 3 (A) has an earlier A at 0, whose successor B is key 1.
    const d = new Float32Array(S * S);
    d[0] = 1, d[4] = 1, d[9] = 1, d[13] = 1;
    expect(summarizeHeads({ data: d, shape: [1, 1, S, S] }, [7, 8, 9, 7])[0].induction).toBe(1);
  });

  it('refuses what is not [L, H, S, S]', () => {
    expect(() => summarizeHeads({ data: new Float32Array(12), shape: [1, 3, 4] })).toThrow(/^summarizeHeads: attentions: expected a tensor \[layers, heads, S, S\], got \[1, 3, 4\]$/);
    expect(() => summarizeHeads(att, [1, 2])).toThrow(/^summarizeHeads: ids: expected an array of 4 token ids, got \[1, 2\]$/);
  });
});
