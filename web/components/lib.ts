// One attnlab instance shared by every widget on a page that did not hand them its own.
import { load, type Attnlab } from 'attnlab';

let shared: Promise<Attnlab> | null = null;

/** The page-wide attnlab instance, loaded on first use (the fastest build the page can run). */
export function sharedLib(): Promise<Attnlab> {
  shared ??= load();
  return shared;
}

/** Lets a page hand the widgets the instance it already loaded. */
export function setSharedLib(lib: Attnlab): void {
  shared = Promise.resolve(lib);
}

/** A small seeded generator (mulberry32): the same seed draws the same numbers everywhere. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal draws from a uniform generator (Box-Muller). */
export function gaussian(rand: () => number): () => number {
  return () => {
    const u = Math.max(1e-12, rand());
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
  };
}
