// Light/dark palettes. A widget follows, in order: its own `theme` attribute ("light"/"dark"),
// the page's <html data-theme>, then prefers-color-scheme. Colours are resolved to concrete values
// when a widget draws, so an exported SVG or PNG looks exactly like the screen.

export interface Palette {
  dark: boolean;
  bg: string;
  fg: string;
  muted: string;
  line: string;
  grid: string;
  accent: string;
  masked: string;
  hatch: string;
  highlight: string;
  /** One colour per attention head (cycled). */
  heads: readonly string[];
}

const HEADS_LIGHT = ['#3559e0', '#d9480f', '#2b8a3e', '#ae3ec9', '#e8590c', '#0c8599', '#c2255c', '#5f3dc4', '#74b816', '#1971c2', '#f08c00', '#862e9c'];
const HEADS_DARK = ['#7d98ff', '#ff8a5c', '#69db7c', '#e599f7', '#ffa94d', '#3bc9db', '#f783ac', '#9775fa', '#a9e34b', '#74c0fc', '#ffd43b', '#da77f2'];

export const LIGHT: Palette = {
  dark: false, bg: '#ffffff', fg: '#1d1d24', muted: '#5f6170', line: '#c9cad6', grid: '#eceef4',
  accent: '#3559e0', masked: '#f1f1f5', hatch: '#b7b9c6', highlight: '#e8590c', heads: HEADS_LIGHT,
};
export const DARK: Palette = {
  dark: true, bg: '#1c1d24', fg: '#e7e8ee', muted: '#a3a5b4', line: '#454857', grid: '#2a2c36',
  accent: '#7d98ff', masked: '#24252e', hatch: '#5a5d6e', highlight: '#ffa94d', heads: HEADS_DARK,
};

const media = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;

/** The palette a widget should draw with now. */
export function paletteFor(el: Element): Palette {
  const own = el.getAttribute('theme');
  if (own === 'dark') return DARK;
  if (own === 'light') return LIGHT;
  const page = document.documentElement.dataset.theme;
  if (page === 'dark') return DARK;
  if (page === 'light') return LIGHT;
  return media?.matches ? DARK : LIGHT;
}

type Listener = () => void;
const listeners = new Set<Listener>();
let watching = false;

/** Calls `fn` whenever the system scheme or <html data-theme> changes; returns an unsubscribe. */
export function onThemeChange(fn: Listener): () => void {
  listeners.add(fn);
  if (!watching) {
    watching = true;
    media?.addEventListener('change', () => listeners.forEach((l) => l()));
    new MutationObserver(() => listeners.forEach((l) => l())).observe(document.documentElement, {
      attributes: true, attributeFilter: ['data-theme'],
    });
  }
  return () => listeners.delete(fn);
}

// --- colour scales -------------------------------------------------------------------------

type RGB = [number, number, number];

// Viridis, 9 stops (matplotlib). Readable on light and dark backgrounds, perceptually uniform.
const VIRIDIS: RGB[] = [
  [68, 1, 84], [71, 44, 122], [59, 81, 139], [44, 113, 142], [33, 144, 141],
  [39, 173, 129], [92, 200, 99], [170, 220, 50], [253, 231, 37],
];
// Light: white -> blue. Dark: near-black -> light blue.
const BLUES_LIGHT: RGB[] = [[247, 251, 255], [198, 219, 239], [107, 174, 214], [33, 113, 181], [8, 48, 107]];
const BLUES_DARK: RGB[] = [[28, 29, 36], [32, 58, 110], [48, 110, 190], [110, 170, 240], [220, 235, 255]];
const DIVERGING_LIGHT: RGB[] = [[5, 48, 97], [67, 147, 195], [247, 247, 247], [214, 96, 77], [103, 0, 31]];
const DIVERGING_DARK: RGB[] = [[110, 170, 255], [50, 100, 170], [32, 33, 40], [180, 70, 60], [255, 140, 120]];

export type ScaleName = 'viridis' | 'blues' | 'diverging';

function interp(stops: RGB[], t: number): RGB {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (stops.length - 1);
  const i = Math.min(stops.length - 2, Math.floor(x));
  const f = x - i;
  const a = stops[i];
  const b = stops[i + 1];
  return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f, a[2] + (b[2] - a[2]) * f];
}

/** t in [0, 1] -> [r, g, b] 0..255. */
export function scaleRGB(name: ScaleName, t: number, dark: boolean): RGB {
  if (name === 'viridis') return interp(VIRIDIS, t);
  if (name === 'diverging') return interp(dark ? DIVERGING_DARK : DIVERGING_LIGHT, t);
  return interp(dark ? BLUES_DARK : BLUES_LIGHT, t);
}

export function rgbString([r, g, b]: RGB): string {
  return `rgb(${Math.round(r)},${Math.round(g)},${Math.round(b)})`;
}

/**
 * Black or white text, whichever has the higher WCAG contrast with this colour: at least 4.58:1 on
 * any colour. (A threshold on gamma-encoded luma put white on viridis' mid greens, 3.1:1.)
 */
export function inkOn([r, g, b]: RGB): string {
  const lin = (c: number) => (c /= 255) <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  const l = 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
  // (l + 0.05) / 0.05 against black, 1.05 / (l + 0.05) against white.
  return (l + 0.05) ** 2 > 0.05 * 1.05 ? '#000' : '#fff';
}
