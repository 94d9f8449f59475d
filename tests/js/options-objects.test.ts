// The options objects of load(), load()'s gpuCache and loadModel(), which are checked apart from the
// ops' checkOptions: a Map (or an array, a typed array) of options has no own keys, so it read as
// {} and every option in it was silently dropped, where the ops name it.
import { load, loadModel } from 'attnlab';
import { describe, expect, it } from 'vitest';

const gpt2 = new URL('../pretrained/fixtures/gpt2-f32/', import.meta.url);

/** The error's message, or 'loaded' (the instance disposed) when the options passed. */
const outcome = (p: Promise<{ dispose(): void }>) => p.then((x) => (x.dispose(), 'loaded'), (e: Error) => e.message);

describe('options that are not a plain object', () => {
  it.each([
    [new Map([['variant', 'scalar']]), /^load: options: expected a plain object \(\{ option: value \}\), got a Map$/],
    [new Uint8Array(2), /^load: options: expected an object, got Uint8Array\(2\)$/],
    [{ gpuCache: new Map([['maxBytes', 0]]) }, /^load: options\.gpuCache: expected a plain object \(\{ option: value \}\), got a Map$/],
    [{ gpuCache: [] }, /^load: options\.gpuCache: expected an object \{ maxBytes, idleMs \}, got \[\]$/],
  ])('load(%o) rejects, naming them', async (options, message) => {
    expect(await outcome(load(options as never))).toMatch(message);
  });

  it.each([
    [new Map([['threads', 99]]), /^loadModel: options: expected a plain object \(\{ option: value \}\), got a Map$/],
    [[], /^loadModel: options: expected an object, got \[\]$/],
  ])('loadModel(files, %o) rejects, naming them', async (options, message) => {
    expect(await outcome(loadModel(gpt2, options as never))).toMatch(message);
  });
});
