// How error messages describe the value given (errors.ts describe()): a DataView, which has no
// length, read "got DataView(undefined)"; an ArrayBuffer read "got a ArrayBuffer".
import vm from 'node:vm';
import { load } from 'attnlab';
import { expect, it } from 'vitest';

it('names a DataView by its size in bytes', async () => {
  const lib = await load({ variant: 'simd' });
  const view = new DataView(new ArrayBuffer(48));
  const x = { data: new Float32Array(12), shape: [3, 4] };
  expect(() => lib.attention({ data: view as never, shape: [3, 4] }, x, x)).toThrowError(/^attention: q\.data: expected a Float32Array, got a DataView of 48 bytes$/);
  await expect(lib.loadTranslator(view as never)).rejects.toThrowError(/^loadTranslator: source: expected .*, got a DataView of 48 bytes$/);
  lib.dispose();
});

it('writes "an" before a class name that starts with a vowel', async () => {
  const lib = await load({ variant: 'simd' });
  const x = { data: new Float32Array(12), shape: [3, 4] };
  expect(() => lib.attention({ data: new ArrayBuffer(48) as never, shape: [3, 4] }, x, x)).toThrowError(/^attention: q\.data: expected a Float32Array, got an ArrayBuffer$/);
  expect(() => lib.attention(x, x, x, { attnMask: new Error('mask') as never })).toThrowError(/^attention: options\.attnMask: expected .*, got an Error$/);
  expect(() => lib.attention(x, x, x, { attnMask: new Set() as never })).toThrowError(/, got a Set$/);
  lib.dispose();
});

it('says why an integer past 2^53 - 1 is refused where integers of no upper bound are expected', async () => {
  const lib = await load({ variant: 'simd' });
  const x = { data: new Float32Array(12), shape: [3, 4] };
  const past = String.raw` \(past 2\^53 - 1, the largest exact integer\)$`;
  expect(() => lib.attention(x, x, x, { causal: true, queryOffset: 2 ** 53 })).toThrowError(new RegExp(`^attention: options\\.queryOffset: expected an integer >= 0, got 9007199254740992${past}`));
  expect(() => lib.attention({ data: new Float32Array(12), shape: [2 ** 60, 3, 4] }, x, x)).toThrowError(new RegExp(`^attention: q\\.shape: expected an array of non-negative integers, got \\[1152921504606847000, 3, 4\\]${past}`));
  expect(() => lib.rope(x, { offset: 2 ** 53 })).toThrowError(new RegExp(`^rope: options\\.offset: expected an integer >= 0, got 9007199254740992${past}`));
  // Other values read as before; the note is for integers only.
  expect(() => lib.attention(x, x, x, { causal: true, queryOffset: 1.5 })).toThrowError(/, got 1\.5$/);
  expect(() => lib.nadarayaWatson(x, x, x, { bandwidth: -1e300 })).toThrowError(/, got -1e\+300$/);
  lib.dispose();
});

it('names another realm\'s DataView (an iframe\'s, a vm context\'s) by its size in bytes too', async () => {
  const lib = await load({ variant: 'simd' });
  const view = vm.runInContext('new DataView(new ArrayBuffer(48))', vm.createContext({})) as DataView;
  expect(view).not.toBeInstanceOf(DataView);
  const x = { data: new Float32Array(12), shape: [3, 4] };
  expect(() => lib.attention({ data: view as never, shape: [3, 4] }, x, x)).toThrowError(/^attention: q\.data: expected a Float32Array, got a DataView of 48 bytes$/);
  // A Proxy over a DataView has no internal slots: it is not named as one (nor does reading it throw).
  expect(() => lib.attention({ data: new Proxy(new DataView(new ArrayBuffer(8)), {}) as never, shape: [3, 4] }, x, x)).toThrowError(/^attention: q\.data: expected a Float32Array, got a DataView$/);
  lib.dispose();
});
