// What a page's URL hash holds that its embed recipe must reproduce, shared by the page itself and
// embed-recipes.ts: the rules a page reads its hash by (the pooling and translation pages' whole
// views), the defaults a page shows when its hash says nothing or what its controls cannot show,
// and the hash encoding of hand-placed regression points. One copy, so the recipe cannot drift
// from the view.

/** A hash value by a page's rule: `fallback` when absent or when `parse` refuses it. */
export function read<T>(hash: URLSearchParams, key: string, fallback: T, parse: (s: string) => T | undefined): T {
  const v = hash.get(key);
  const out = v === null ? undefined : parse(v);
  return out === undefined ? fallback : out;
}

export const num = (lo: number, hi: number) => (s: string): number | undefined => {
  const x = Number(s);
  return Number.isFinite(x) && x >= lo && x <= hi ? x : undefined;
};
export const oneOf = <T extends string>(list: readonly T[]) => (s: string): T | undefined => (list.includes(s as T) ? (s as T) : undefined);
export const bool = (s: string): boolean | undefined => (s === '1' ? true : s === '0' ? false : undefined);

/** The pooling page's kernels and its sliders' ranges, which a hash's values must fall in too. */
export const POOLING = { kernels: ['gaussian', 'boxcar', 'epanechnikov'] as const, hMin: 0.05, hMax: 3, nMin: 5, nMax: 100 };

/** The pooling page's view as a hash gives it (a value its controls cannot show takes the default). */
export function poolingView(hash: URLSearchParams) {
  return {
    kernel: read(hash, 'kernel', 'gaussian', oneOf(POOLING.kernels)),
    h: read(hash, 'h', 0.5, num(POOLING.hMin, POOLING.hMax)),
    n: read(hash, 'n', 40, num(POOLING.nMin, POOLING.nMax)),
    seed: read(hash, 'seed', 0, num(0, 1e9)),
    sorted: read(hash, 'sorted', true, bool),
  };
}

export const TRANSLATION_DIRS = ['fra-eng', 'eng-fra'] as const;
export const TRANSLATION_ARCHS = ['transformer', 'gru'] as const;

/** The translation page's view: the beam width as its slider (whole, 1 to 8) shows it. */
export function translationView(hash: URLSearchParams) {
  return {
    dir: read(hash, 'dir', 'fra-eng', oneOf(TRANSLATION_DIRS)),
    arch: read(hash, 'arch', 'transformer', oneOf(TRANSLATION_ARCHS)),
    beam: Math.round(read(hash, 'beam', 1, num(1, 8))),
  };
}

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

/** The heads page's layer count: the shipped Transformer's, and its untrained comparison's. */
export const HEADS_LAYERS = 2;

/**
 * The heads page's layer (counted from 0) as its Layer menu shows it: a layer the menu lacks
 * (#layer=5, 1.5) opens on the first, where the menu falls back to its first option.
 */
export function headsView(hash: URLSearchParams) {
  const layer = (s: string) => {
    const x = Number(s);
    return Number.isInteger(x) && x >= 0 && x < HEADS_LAYERS ? x : undefined;
  };
  return { layer: read(hash, 'layer', 0, layer) };
}

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
