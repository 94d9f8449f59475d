// Errors that only the C++ core can see (values past float32, a model file's bytes) on every
// build: a JavaScript Error with the core's message, nothing left allocated, the instance still
// working. The -threads builds once let every such error out as a bare WebAssembly.Exception
// and leaked it (cpp/wasm/wasm_eh.cpp), while TypeScript's own checks were fine.
import { readFileSync } from 'node:fs';
import { loadModel, type Attnlab, type Tensor } from 'attnlab';
import { describe, expect, it } from 'vitest';
import { useVariants, VARIANTS } from './variants.js';

const T = (data: number[], shape: number[]): Tensor => ({ data: Float32Array.from(data), shape });
const model = () => new Uint8Array(readFileSync(new URL('../../web/models/fra-eng-gru.atl', import.meta.url)));

// Each failing call, 21 times: the heap as it was before the first. (The -threads builds'
// first error once left 16 bytes: libc++abi's exception state for the thread, now made as the
// module and each pool thread start.)
async function failsCleanly(lib: Attnlab, call: () => unknown, message: RegExp): Promise<void> {
  const error = async () => {
    try {
      await call();
    } catch (e) {
      return e;
    }
    return undefined;
  };
  const used = lib.heapStats().used;
  const first = await error();
  expect(first).toBeInstanceOf(Error);
  expect((first as Error).message).toMatch(message);
  for (let i = 0; i < 20; i++) expect(((await error()) as Error).message).toMatch(message);
  expect(lib.heapStats().used).toBe(used);
}

describe('errors raised in C++ reach JavaScript as Errors on every build', () => {
  const libs = useVariants();
  for (const variant of VARIANTS) {
    it(`${variant}: attention ops`, async () => {
      const lib = libs[variant];
      const big = T([1e20, 0, 0, 1e20], [1, 2, 2]);
      await failsCleanly(lib, () => lib.attentionScores(big, big), /^attentionScores: q, k: the scores overflow float32/);
      const E = 2, x = T([3e38, 3e38], [1, 1, E]);
      const p = { numHeads: 1, inProjWeight: T(Array(3 * E * E).fill(2), [3 * E, E]), outProjWeight: T([1, 0, 0, 1], [E, E]) };
      await failsCleanly(lib, () => lib.multiHeadAttention(x, x, x, p), /^multiHeadAttention: query, params\.inProjWeight: the query projection overflows float32/);
      expect(lib.attentionScores(T([1, 0, 0, 1], [1, 2, 2]), T([1, 0, 0, 1], [1, 2, 2]), { score: 'dot' }).data).toEqual(Float32Array.from([1, 0, 0, 1]));
    });

    it(`${variant}: translators`, async () => {
      const lib = libs[variant];
      await lib.loadTranslator(model()).then((tr) => tr.dispose());  // the nn module, loaded
      const m = model();
      await failsCleanly(lib, () => lib.loadTranslator(new Uint8Array(1000)), /^loadTranslator: model file: bad magic number/);
      await failsCleanly(lib, () => lib.loadTranslator(m.slice(0, m.length - 100)), /^loadTranslator: model file: .*truncated/);
      const tr = await lib.loadTranslator(m);
      expect(tr.translate('Je suis content.').text.length).toBeGreaterThan(0);
      tr.dispose();
    });
  }

  it('loadModel on the threaded build: a checkpoint shorter than its header', async () => {
    const dir = new URL('../pretrained/fixtures/gpt2-f32/', import.meta.url);
    const w = new Uint8Array(readFileSync(new URL('model.safetensors', dir)));
    const files = { config: JSON.parse(readFileSync(new URL('config.json', dir), 'utf8')) as Record<string, unknown>,
      vocab: new Uint8Array(readFileSync(new URL('vocab.json', dir))), merges: new Uint8Array(readFileSync(new URL('merges.txt', dir))) };
    for (const weights of [new Blob([w.subarray(0, 100)]), new Blob([w.subarray(0, w.length - 64)])])
      await expect(loadModel({ ...files, weights }, { threads: 2 })).rejects.toThrow(/^loadModel: .*safetensors: /);
    const m = await loadModel({ ...files, weights: new Blob([w]) }, { threads: 2 });
    expect((await m.forward([1, 2, 3])).logits.shape[0]).toBe(3);
    m.dispose();
  });
});
