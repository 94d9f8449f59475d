// Every page keeps its state in the URL hash (#key=value&…), so a link or an iframe reproduces
// the exact view. Values are plain strings; each page parses its own (the rules: view-state.ts).
import { bool, num, oneOf, read } from './view-state';

export { bool, num, oneOf };

export type State = Record<string, string>;

export function readHash(): URLSearchParams {
  return new URLSearchParams(location.hash.replace(/^#/, ''));
}

/** Typed read of this page's hash value with a default and a validity check (view-state.ts's read). */
export function param<T>(key: string, fallback: T, parse: (s: string) => T | undefined): T {
  return read(readHash(), key, fallback, parse);
}

let timer = 0;
// Values merged but not yet written: a second call within the debounce builds on them, not on the
// (stale) hash, or it would drop the first call's changes.
let pending: URLSearchParams | null = null;
/** Merges `values` into the hash (replaceState: no history entry per slider tick). */
export function writeHash(values: Record<string, string | number | boolean | null | undefined>): void {
  const p = pending ?? readHash();
  pending = p;
  for (const [k, v] of Object.entries(values)) {
    if (v === null || v === undefined || v === '') p.delete(k);
    else p.set(k, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
  }
  clearTimeout(timer);
  timer = window.setTimeout(() => {
    pending = null;
    const text = p.toString();
    history.replaceState(null, '', `${location.pathname}${location.search}${text ? `#${text}` : ''}`);
  }, 60);
}
