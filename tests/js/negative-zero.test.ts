// A dimension or count of -0 (Math.round(-0.2), -1 * 0) passes as 0, but reached the results'
// shapes as -0, which Object.is and test matchers (toEqual([0, 4]) fails) tell from 0.
import { load } from 'attnlab';
import { expect, it } from 'vitest';

it('results carry 0, not -0, for a -0 dimension or length', async () => {
  const lib = await load({ variant: 'simd' });
  const empty = (shape: number[]) => ({ data: new Float32Array(0), shape });
  const shapes = [
    lib.attention(empty([-0, 3, 4]), empty([-0, 3, 4]), empty([-0, 3, 4])).output.shape,
    lib.maskedSoftmax(empty([-0, 3])).shape,
    lib.linear(empty([-0, 3]), { data: new Float32Array(12), shape: [4, 3] }).shape,
    lib.positionalEncoding(-0, 4).shape,
    lib.attentionPattern({ type: 'local', window: 1 }, -0, 3).shape,
  ];
  for (const shape of shapes) expect(Object.is(shape[0], -0)).toBe(false);
  expect(shapes[0]).toEqual([0, 3, 4]);
  lib.dispose();
});
