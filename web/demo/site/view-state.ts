// What a page's URL hash holds that its embed recipe must reproduce, shared by the page itself and
// embed-recipes.ts: the defaults a page shows when its hash says nothing, and the hash encoding of
// hand-placed regression points. One copy, so the recipe cannot drift from the view.

/** The translation page's example sentences, per direction; the first is shown by default. */
export const TRANSLATION_EXAMPLES = {
  'fra-eng': ['je suis étudiant .', 'il est très fatigué .', 'nous sommes en retard .', 'elle est plus grande que moi .'],
  'eng-fra': ['i am a student .', 'he is very tired .', 'we are late .', 'she is taller than me .'],
} as const;

/**
 * The heads page's French source sentence when its hash has none: one the shipped Transformer
 * translates right ("the dog is sitting on the chair .") though the corpus lacks it, so its
 * cross-attention lines join words that mean the same. "le chat est assis sur le tapis ." came out
 * as "the cat is on the tops ." ("tapis" is in 6 of 68,729 pairs).
 */
export const HEADS_DEFAULT_SOURCE = 'le chien est assis sur la chaise .';

export interface XYPoint {
  x: number;
  y: number;
}

/** Points as the pooling page writes them in its hash (pts=x_y~x_y…, two decimals). */
export function encodePoints(p: readonly XYPoint[]): string {
  return p.map((q) => `${q.x.toFixed(2)}_${q.y.toFixed(2)}`).join('~');
}

/** The points of a pts= hash value, or undefined when it is not a valid list (1-300 finite pairs). */
export function decodePoints(s: string): XYPoint[] | undefined {
  const pts = s.split('~').map((pair) => pair.split('_').map(Number));
  if (!pts.length || pts.length > 300 || pts.some((p) => p.length !== 2 || !p.every(Number.isFinite))) return undefined;
  return pts.map(([x, y]) => ({ x, y }));
}
