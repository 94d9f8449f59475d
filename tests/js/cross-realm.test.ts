// Typed arrays of another realm (an iframe's, a vm context's; Jest runs tests in one, where Node's
// own Buffers are the outer realm's): they have every internal slot but another prototype, so
// instanceof refused them, with messages such as 'attention: q.data: expected a Float32Array,
// got Float32Array(12)'; so were its ArrayBuffers of model bytes. Now checked by their internal
// slots, and computed as this realm's.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import vm from 'node:vm';
import { load, loadModel } from 'attnlab';
import { expect, it } from 'vitest';
import { randn } from './reference.js';

const other = vm.runInContext('({ Float32Array, Uint8Array, Int32Array })', vm.createContext({})) as {
  Float32Array: Float32ArrayConstructor; Uint8Array: Uint8ArrayConstructor; Int32Array: Int32ArrayConstructor;
};
/** A copy of `x` in the other realm. */
const there = <T extends Float32Array | Uint8Array | Int32Array>(x: T): T => {
  const C = x instanceof Float32Array ? other.Float32Array : x instanceof Int32Array ? other.Int32Array : other.Uint8Array;
  const y = new C(x.length) as T;
  y.set(x as never);
  return y;
};

it('the ops take another realm\'s typed arrays: data, masks, validLens, out', async () => {
  const lib = await load({ variant: 'simd' });
  const q = randn([2, 3, 4], 1), k = randn([2, 5, 4], 2), v = randn([2, 5, 4], 3);
  const mask = { data: Uint8Array.from({ length: 15 }, (_, i) => (i % 4 ? 1 : 0)), shape: [3, 5] };
  const validLens = Int32Array.of(5, 2);
  const want = lib.attention(q, k, v, { attnMask: mask, validLens });
  expect(there(q.data)).not.toBeInstanceOf(Float32Array);
  const out = there(new Float32Array(24));
  const got = lib.attention({ data: there(q.data), shape: q.shape }, { data: there(k.data), shape: k.shape }, { data: there(v.data), shape: v.shape },
    { attnMask: { data: there(mask.data), shape: mask.shape }, validLens: there(validLens), out });
  expect(got.output.data).toBe(out);
  expect(Array.from(out)).toEqual(Array.from(want.output.data));
  lib.dispose();
});

it('loadTranslator and loadModel take another realm\'s bytes and ArrayBuffers, forward its token ids', async () => {
  const lib = await load({ variant: 'simd' });
  const models = dirname(createRequire(import.meta.url).resolve('attnlab-models/package.json'));
  const atl = there(new Uint8Array(readFileSync(join(models, 'fra-eng-gru.atl'))));
  for (const source of [atl, atl.buffer]) {
    const tr = await lib.loadTranslator(source);
    expect(tr.translate('Je suis fatigué.').text).toBe("I'm tired.");
    tr.dispose();
  }
  lib.dispose();

  const dir = new URL('../pretrained/fixtures/gpt2-f32/', import.meta.url);
  const file = (name: string) => there(new Uint8Array(readFileSync(new URL(name, dir))));
  const model = await loadModel({ config: file('config.json'), weights: file('model.safetensors').buffer, vocab: file('vocab.json'), merges: file('merges.txt') });
  const want = await loadModel(dir);
  const ids = Int32Array.of(1, 2, 3);
  expect((await model.forward(there(ids))).logits.data).toEqual((await want.forward(ids)).logits.data);
  model.dispose();
  want.dispose();
});

it("options given as another realm's Map are named, as this realm's are", async () => {
  const lib = await load({ variant: 'simd' });
  const OtherMap = vm.runInContext('Map', vm.createContext({})) as MapConstructor;
  const x = randn([3, 4], 4);
  const causal = new OtherMap([['causal', true]]);
  expect(() => lib.attention(x, x, x, causal as never)).toThrowError(/^attention: options: expected a plain object \(\{ option: value \}\), got a Map$/);
  await expect(load(new OtherMap([['variant', 'scalar']]) as never)).rejects.toThrowError(/^load: options: expected a plain object/);
  // Error subclasses too, by their tag; class instances with fields still pass.
  expect(() => lib.attention(x, x, x, new (vm.runInContext('TypeError', vm.createContext({})) as TypeErrorConstructor)('x') as never)).toThrowError(/got a TypeError$/);
  class Options { causal = true; }
  expect(lib.attention(x, x, x, new Options()).output.shape).toEqual([3, 4]);
  lib.dispose();
});
