// createTrainer's options: unknown keys and bad values throw at once, one 'createTrainer:' prefix,
// naming the option, what was expected and what was given; the instance keeps working after.
import { load, type Attnlab } from 'attnlab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

let lib: Attnlab;
beforeAll(async () => {
  lib = await load({ variant: 'simd' });
});
afterAll(() => lib?.dispose());

describe('createTrainer options', () => {
  it.each([
    [{ maxSeconds: -1 }, /^createTrainer: options\.maxSeconds: expected a number of seconds > 0 \(Infinity: no limit\), got -1$/],
    [{ maxSeconds: NaN }, /^createTrainer: options\.maxSeconds: expected .*, got NaN$/],
    [{ maxSecond: 5 }, /^createTrainer: options: unknown option 'maxSecond'; expected one of task, arch, .*, onProgress, worker$/],
    [{ onProgress: 5 }, /^createTrainer: options\.onProgress: expected a function, got 5$/],
    [{ onProgress: 'log' }, /^createTrainer: options\.onProgress: expected a function, got "log"$/],
    [{ worker: 'yes' }, /^createTrainer: options\.worker: expected a boolean, got "yes"$/],
    [{ task: 'shuffle' }, /^createTrainer: options\.task: expected one of 'reverse', 'sort', 'copy', got "shuffle"$/],
    [{ arch: 'lstm' }, /^createTrainer: options\.arch: expected one of 'gru', 'gru-luong', 'transformer', got "lstm"$/],
    [{ hidden: 6 }, /^createTrainer: options\.hidden: expected a multiple of 4 in \[4, 512\], got 6$/],
    [{ hidden: 1024 }, /^createTrainer: options\.hidden: expected a multiple of 4 in \[4, 512\], got 1024$/],
    [{ symbols: 1 }, /^createTrainer: options\.symbols: expected an integer in \[2, 26\], got 1$/],
    [{ minLength: 5, maxLength: 4 }, /^createTrainer: options\.maxLength: expected an integer in \[minLength = 5, 30\], got 4$/],
    [{ batch: 0.5 }, /^createTrainer: options\.batch: expected an integer in \[1, 512\], got 0\.5$/],
    [{ lr: 0 }, /^createTrainer: options\.lr: expected a finite number > 0, got 0$/],
    [{ lr: Infinity }, /^createTrainer: options\.lr: expected a finite number > 0, got Infinity$/],
    [{ seed: -1 }, /^createTrainer: options\.seed: expected an integer in \[0, 2147483647\], got -1$/],
    [{ targetAccuracy: 2 }, /^createTrainer: options\.targetAccuracy: expected a number in \[0, 1\], got 2$/],
    [{ evalEvery: 0 }, /^createTrainer: options\.evalEvery: expected an integer in \[1, 1000000\], got 0$/],
    [{ evalSize: '200' }, /^createTrainer: options\.evalSize: expected an integer in \[1, 100000\], got "200"$/],
  ])('rejects %o', (options, message) => {
    expect(() => lib.createTrainer(options as never)).toThrowError(message);
  });

  it.each([null, 5, 'reverse', [1]])('rejects options = %o', (options) => {
    expect(() => lib.createTrainer(options as never)).toThrowError(/^createTrainer: options: expected an object, got /);
  });

  it('every error is an Error with one prefix, and the instance still trains after them', async () => {
    for (const bad of [{ onProgress: 5 }, { hidden: 6 }, { x: 1 }]) {
      let caught: unknown;
      try {
        lib.createTrainer(bad as never);
      } catch (e) {
        caught = e;
      }
      expect(caught).toBeInstanceOf(Error);
      expect((caught as Error).message).not.toMatch(/createTrainer: createTrainer/);
    }
    const r = await lib.createTrainer({ hidden: 16, maxSeconds: 0.2, evalSize: 10, worker: false, minLength: 10 }).done;
    expect(r.reason).toBe('time');
  });
});
