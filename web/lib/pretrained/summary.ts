// What each head does, in numbers a learner can sort by: how much of its attention goes to the
// previous token, the first token, the token itself, and (given the ids) to the token after an
// earlier occurrence of the current one, the signature of an induction head (Olsson et al. 2022,
// "In-context Learning and Induction Heads").
import { argError } from '../errors.js';
import type { Tensor } from '../types.js';

export interface HeadSummary {
  layer: number;
  head: number;
  /** Mean weight on key i - 1 over rows i >= 1. */
  previous: number;
  /** Mean weight on key 0 over rows i >= 1. */
  first: number;
  /** Mean weight on key i (the token itself). */
  self: number;
  /** Mean entropy of a row, in nats (0: one key; ln S: uniform). */
  entropy: number;
  /**
   * With `ids`: mean, over rows whose token occurred before, of the weight on the tokens that
   * followed those earlier occurrences; NaN when no token repeats.
   */
  induction: number;
}

/** One summary per (layer, head) of attentions [L, H, S, S] (as forward() returns them). */
export function summarizeHeads(attentions: Tensor, ids?: readonly number[]): HeadSummary[] {
  const s = attentions?.shape;
  if (!Array.isArray(s) || s.length !== 4 || s[2] !== s[3] || !(attentions.data instanceof Float32Array) ||
      attentions.data.length !== s.reduce((a, b) => a * b, 1))
    throw argError('summarizeHeads', 'attentions', 'a tensor [layers, heads, S, S]', s ?? attentions);
  const [L, H, S] = s;
  if (ids !== undefined && (!Array.isArray(ids) || ids.length !== S)) throw argError('summarizeHeads', 'ids', `an array of ${S} token ids`, ids);
  // Induction targets of row i: j + 1 for every earlier occurrence j < i - 1 of its token (the
  // token that followed it then; j + 1 < i, so the target is a key a causal row can see).
  const targets: number[][] = Array.from({ length: S }, () => []);
  if (ids)
    for (let i = 0; i < S; i++)
      for (let j = 0; j + 1 <= i - 1; j++) if (ids[j] === ids[i]) targets[i].push(j + 1);
  const out: HeadSummary[] = [];
  for (let l = 0; l < L; l++)
    for (let h = 0; h < H; h++) {
      const base = (l * H + h) * S * S;
      let prev = 0, first = 0, self = 0, ent = 0, ind = 0, indRows = 0;
      for (let i = 0; i < S; i++) {
        const row = attentions.data.subarray(base + i * S, base + (i + 1) * S);
        if (i > 0) (prev += row[i - 1]), (first += row[0]);
        self += row[i];
        for (const p of row) if (p > 0) ent -= p * Math.log(p);
        if (targets[i].length) {
          let w = 0;
          for (const t of targets[i]) w += row[t];
          ind += w;
          indRows++;
        }
      }
      const rows = Math.max(1, S - 1);
      out.push({ layer: l, head: h, previous: prev / rows, first: first / rows, self: self / S, entropy: ent / S, induction: indRows ? ind / indRows : NaN });
    }
  return out;
}
