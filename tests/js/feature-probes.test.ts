// load()'s feature probes (loader.ts): each tiny module must need exactly its feature, or an
// engine without it would be handed a build it cannot compile (or denied one it can run). No
// engine here lacks exception handling or SIMD128, so binaryen's validator stands in for one:
// each probe validates with its feature and fails without it (binaryen prints that failure).
// And the shipped modules: the SIMD builds' C++ exceptions are WebAssembly's own (a tag), the
// scalar build's, for engines without SIMD128, are not.
import { readFileSync } from 'node:fs';
import binaryen from 'binaryen';
import { describe, expect, it } from 'vitest';
import { featureProbes } from '../../dist/loader.js';

const F = binaryen.Features;
const all = F.MVP | F.SIMD128 | F.RelaxedSIMD | F.ExceptionHandling;
const valid = (bytes: Uint8Array, features: number): boolean => {
  const m = binaryen.readBinary(bytes, features);
  try {
    m.setFeatures(features);
    return Boolean(m.validate());
  } finally {
    m.dispose();
  }
};

// Whether a module defines or imports an exception tag (section 13, or an import of kind 4).
function hasTag(b: Uint8Array): boolean {
  let p = 8;
  const leb = () => {
    let v = 0, shift = 0, byte;
    do {
      byte = b[p++];
      v += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return v;
  };
  while (p < b.length) {
    const id = b[p++], size = leb(), end = p + size;
    if (id === 13) return true;
    if (id === 2) {
      for (let n = leb(); n > 0; n--) {
        for (let s = 0; s < 2; s++) {  // module, field
          const len = leb();
          p += len;
        }
        const kind = b[p++];
        if (kind === 4) return true;
        const limits = () => {
          const flags = leb();
          leb();
          if (flags & 1) leb();
        };
        if (kind === 0) leb();  // function: type index
        else if (kind === 1) p++, limits();  // table: reference type, limits
        else if (kind === 2) limits();  // memory
        else if (kind === 3) p += 2;  // global: value type, mutability
      }
    }
    p = end;
  }
  return false;
}
const wasm = (name: string) => new Uint8Array(readFileSync(new URL(`../../dist/wasm/${name}.wasm`, import.meta.url)));

describe('feature probes', () => {
  it.each([
    ['simd', F.SIMD128],
    ['exceptions', F.ExceptionHandling],
    ['relaxed', F.RelaxedSIMD],
  ] as const)('the %s probe validates with its feature and not without', (name, feature) => {
    expect(valid(featureProbes[name], all)).toBe(true);
    expect(valid(featureProbes[name], all & ~feature)).toBe(false);
    if (name !== 'relaxed') expect(WebAssembly.validate(featureProbes[name])).toBe(true);  // Node 20 has both
  });

  it('the SIMD builds use WebAssembly exceptions, the scalar build does not', () => {
    for (const m of ['attnlab', 'attnlab-nn', 'attnlab-pretrained']) {
      for (const v of ['simd', 'simd-threads', 'relaxed-simd', 'relaxed-simd-threads']) expect(hasTag(wasm(`${m}-${v}`)), `${m}-${v}`).toBe(true);
      expect(hasTag(wasm(`${m}-scalar`)), `${m}-scalar`).toBe(false);
    }
  });
});
