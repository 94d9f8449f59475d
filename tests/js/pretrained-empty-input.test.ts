// forward() of no tokens: an Error naming the call, the argument, what was expected and what was
// given, as generate()'s empty prompt has; the core's own message ('forward: ids must not be
// empty') named no argument. The model keeps working.
import { loadModel } from 'attnlab';
import { expect, it } from 'vitest';

const gpt2 = new URL('../pretrained/fixtures/gpt2-f32/', import.meta.url);

it('forward of an empty text or an empty array of ids names the input', async () => {
  const model = await loadModel(gpt2);
  await expect(model.forward('')).rejects.toThrowError(/^forward: input: expected at least one token, got ""$/);
  await expect(model.forward([])).rejects.toThrowError(/^forward: input: expected at least one token, got \[\]$/);
  await expect(model.forward(new Int32Array(0))).rejects.toThrowError(/^forward: input: expected at least one token, got Int32Array\(0\)$/);
  expect((await model.forward('a b')).logits.shape).toEqual([3, 96]);
  model.dispose();
});
