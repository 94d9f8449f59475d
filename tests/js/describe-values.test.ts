// How error messages describe the value given (errors.ts describe()): a DataView, which has no
// length, read "got DataView(undefined)"; an ArrayBuffer read "got a ArrayBuffer".
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
