// loadModel (web/lib/pretrained) on the tiny checkpoints of tests/pretrained/fixtures: the
// WebAssembly forward against the PyTorch reference outputs (logits and every attention weight
// within 1e-4, top-1 equal), generation through the KV cache, fillMask, streaming with progress
// and cancel, and bad inputs (each a named Error; the model keeps working).
import { readFileSync } from 'node:fs';
import { loadModel, type PretrainedModel } from 'attnlab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = new URL('../pretrained/fixtures/', import.meta.url);
const bytes = (name: string, file: string) => new Uint8Array(readFileSync(new URL(`${name}/${file}`, root)));
const text = (name: string, file: string) => readFileSync(new URL(`${name}/${file}`, root), 'utf8');

interface Reference { ids: number[]; types: number[]; logits: Float32Array; attentions: Float32Array; lshape: number[]; ashape: number[] }

// The reference outputs are safetensors too (I32 ids / types, F32 logits / attentions).
function reference(name: string): Reference {
  const b = bytes(name, 'reference.safetensors');
  const n = Number(new DataView(b.buffer, b.byteOffset).getBigUint64(0, true));
  const h = JSON.parse(new TextDecoder().decode(b.subarray(8, 8 + n))) as Record<string, { shape: number[]; data_offsets: [number, number] }>;
  const at = (k: string) => b.slice(8 + n + h[k].data_offsets[0], 8 + n + h[k].data_offsets[1]).buffer;
  return {
    ids: Array.from(new Int32Array(at('ids'))), types: Array.from(new Int32Array(at('types'))),
    logits: new Float32Array(at('logits')), attentions: new Float32Array(at('attentions')),
    lshape: h.logits.shape, ashape: h.attentions.shape,
  };
}

function files(name: string) {
  const has = (f: string) => { try { readFileSync(new URL(`${name}/${f}`, root)); return true; } catch { return false; } };
  return {
    config: JSON.parse(text(name, 'config.json')) as Record<string, unknown>,
    weights: new Blob([bytes(name, 'model.safetensors')]),
    ...(has('tokenizer.json') ? { tokenizer: bytes(name, 'tokenizer.json') } : {}),
    ...(has('vocab.json') ? { vocab: bytes(name, 'vocab.json'), merges: bytes(name, 'merges.txt') } : {}),
    ...(has('vocab.txt') ? { vocab: bytes(name, 'vocab.txt') } : {}),
  };
}

const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);
const argmaxRows = (x: Float32Array, cols: number) =>
  Array.from({ length: x.length / cols }, (_, r) => x.subarray(r * cols, (r + 1) * cols).reduce((best, v, i, row) => (v > row[best] ? i : best), 0));

const NAMES = ['gpt2-f32', 'gpt2-prefixed-f16', 'gpt-neo-f32', 'bert-mlm-bf16', 'bert-model-f32'];

describe('loadModel from a folder on disk (Node)', () => {
  it('a path, a file: URL string and a URL object load the same model as its files', async () => {
    const dir = new URL('gpt2-f32/', root);
    const want = await loadModel(files('gpt2-f32'));
    const w = (await want.forward('a b c')).logits.data;
    for (const src of [dir.pathname, dir.href, dir]) {
      const m = await loadModel(src);
      expect((await m.forward('a b c')).logits.data).toEqual(w);
      m.dispose();
    }
    want.dispose();
  });
});

describe('loadModel on the PyTorch-referenced fixtures', () => {
  const models = new Map<string, PretrainedModel>();
  beforeAll(async () => {
    for (const n of NAMES) models.set(n, await loadModel(files(n)));
  });
  afterAll(() => models.forEach((m) => m.dispose()));

  it.each(NAMES)('%s: logits and every attention weight within 1e-4, top-1 equal', async (name) => {
    const r = reference(name), m = models.get(name)!;
    const out = await m.forward(r.ids, { attentions: true, ...(m.info.family === 'bert' ? { tokenTypes: r.types } : {}) });
    expect(out.logits.shape).toEqual(r.lshape);
    expect(out.attentions!.shape).toEqual(r.ashape);
    expect(maxDiff(out.logits.data, r.logits)).toBeLessThan(1e-4);
    expect(maxDiff(out.attentions!.data, r.attentions)).toBeLessThan(1e-4);
    if (out.kind === 'logits') expect(argmaxRows(out.logits.data, r.lshape[1])).toEqual(argmaxRows(r.logits, r.lshape[1]));
    expect(out.kind).toBe(name === 'bert-model-f32' ? 'hidden' : 'logits');
  });

  it('generate: greedy tokens through the KV cache equal full forwards, each with its attention row', async () => {
    for (const name of ['gpt2-f32', 'gpt-neo-f32']) {
      const m = models.get(name)!;
      const prompt = reference(name).ids.slice(0, 4);
      const { layers: L, heads: H } = m.info;
      const generated = [];
      for await (const t of m.generate(prompt, { maxTokens: 10, temperature: 0 })) generated.push(t);
      // Checked afterwards: forward() during a generation is refused (it would restart the cache).
      const seq = [...prompt];
      for (const t of generated) {
        const full = await m.forward(seq, { attentions: true });
        const V = full.logits.shape[1], S = seq.length;
        expect(t.id).toBe(argmaxRows(full.logits.data.subarray((S - 1) * V), V)[0]);
        expect(t.position).toBe(S);
        expect(t.attention.shape).toEqual([L, H, S]);
        // The row of the query that predicted the token: the full forward's last row.
        for (let lh = 0; lh < L * H; lh++)
          for (let j = 0; j < S; j++)
            expect(Math.abs(t.attention.data[lh * S + j] - full.attentions!.data[(lh * S + S - 1) * S + j])).toBeLessThan(1e-4);
        seq.push(t.id);
      }
      expect(seq.length).toBe(14);
    }
  });

  it('generate samples reproducibly from a seed, within topK', async () => {
    const m = models.get('gpt2-f32')!;
    const run = async (seed: number) => {
      const ids: number[] = [];
      for await (const t of m.generate('the cat', { maxTokens: 8, temperature: 0.8, topK: 3, topP: 0.9, seed })) ids.push(t.id);
      return ids;
    };
    const a = await run(7);
    expect(await run(7)).toEqual(a);
    expect(a).toHaveLength(8);
  });

  it('generate: a temperature near 0 samples as greedy (no float32 overflow); the default length fits the context', async () => {
    const m = models.get('gpt2-f32')!;
    const ids = async (o: object, prompt: string | number[] = 'the cat') => {
      const got: number[] = [];
      for await (const t of m.generate(prompt, o)) got.push(t.id);
      return got;
    };
    const greedy = await ids({ maxTokens: 6, temperature: 0 });
    for (const temperature of [1e-30, 1e-38, 1e-45]) expect(await ids({ maxTokens: 6, temperature }), String(temperature)).toEqual(greedy);
    // 28 of the 32 positions taken: no maxTokens means the 4 left, not 20 (and an error about it).
    expect((await ids({ temperature: 0, stopAtEndOfText: false }, new Array(28).fill(5))).length).toBe(4);
    await expect(ids({}, new Array(32).fill(5))).rejects.toThrow(/^generate: prompt: expected at most 31 tokens \(the model's 32 positions, one left to generate\), got 32$/);
  });

  it('fillMask finds [MASK] next to punctuation, and every [MASK] of the text', async () => {
    const bert = models.get('bert-mlm-bf16')!;
    expect(bert.tokenize('paris is the [MASK].').tokens).toEqual(['[CLS]', 'paris', 'is', 'the', '[MASK]', '.', '[SEP]']);
    const { masks } = await bert.fillMask('[MASK] is the [MASK].');
    expect(masks.map((x) => x.position)).toEqual([1, 4]);
  });

  it('BERT token types: an Int32Array is taken, each entry checked', async () => {
    const bert = models.get('bert-mlm-bf16')!;
    const n = bert.tokenize('the cat').ids.length;
    const plain = await bert.forward('the cat', { tokenTypes: new Array(n).fill(0) });
    expect((await bert.forward('the cat', { tokenTypes: new Int32Array(n) })).logits.data).toEqual(plain.logits.data);
    const bad = new Array(n).fill(0);
    bad[1] = NaN;
    await expect(bert.forward('the cat', { tokenTypes: bad })).rejects.toThrow(/^forward: options\.tokenTypes\[1\]: expected a token type in \[0, 2\), got NaN$/);
    bad[1] = 2;
    await expect(bert.forward('the cat', { tokenTypes: bad })).rejects.toThrow(/^forward: options\.tokenTypes\[1\]: expected a token type in \[0, 2\), got 2$/);
  });

  it('tokenizes with the checkpoint\'s files and fills [MASK]', async () => {
    const bert = models.get('bert-mlm-bf16')!;
    expect(bert.tokenize('The cat sat!').tokens).toEqual(['[CLS]', 'the', 'cat', 'sat', '!', '[SEP]']);
    const { tokens, masks } = await bert.fillMask('Paris is the [MASK] of France.', { topK: 3 });
    expect(tokens[4]).toBe('[MASK]');
    expect(masks).toHaveLength(1);
    expect(masks[0].position).toBe(4);
    const ps = masks[0].candidates.map((c) => c.probability);
    expect([...ps].sort((x, y) => y - x)).toEqual(ps);
    const f = await bert.forward('Paris is the [MASK] of France.');
    expect(masks[0].candidates[0].id).toBe(argmaxRows(f.logits.data, f.logits.shape[1])[4]);
    const gpt = models.get('gpt2-f32')!;
    expect(gpt.tokenize(' the cat').tokens).toEqual([' t', 'he', ' ', 'c', 'a', 't']);
  });
});

// int8 at load: the same checks as the native PretrainedInt8 tests (cpp: 1.5-2.8% of the largest
// logit, attention within 0.06 on these tiny random models), streamed from a Response in small
// chunks, and about a third of fp32's parameter bytes.
describe('loadModel with quantize: int8', () => {
  it.each(NAMES)('%s: logits within 4%% of their range, attention within 0.08', async (name) => {
    const r = reference(name);
    const q = await loadModel(files(name), { quantize: 'int8' });
    const f = await loadModel(files(name));
    try {
      const bert = q.info.family === 'bert';
      const out = await q.forward(r.ids, { attentions: true, ...(bert ? { tokenTypes: r.types } : {}) });
      const range = r.logits.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
      expect(maxDiff(out.logits.data, r.logits)).toBeLessThan(0.04 * range);
      expect(maxDiff(out.attentions!.data, r.attentions)).toBeLessThan(0.08);
      expect(q.info.parameterBytes).toBeLessThan(0.45 * f.info.parameterBytes);
    } finally {
      q.dispose();
      f.dispose();
    }
  });

  it('streams a Response in order and generates', async () => {
    const whole = await loadModel(files('gpt2-f32'), { quantize: 'int8' });
    const b = bytes('gpt2-f32', 'model.safetensors');
    const stream = new ReadableStream<Uint8Array>({
      start(c) { for (let i = 0; i < b.length; i += 333) c.enqueue(b.slice(i, i + 333)); c.close(); },
    });
    const streamed = await loadModel({ ...files('gpt2-f32'), weights: new Response(stream) }, { quantize: 'int8' });
    try {
      const r = reference('gpt2-f32');
      expect((await streamed.forward(r.ids)).logits.data).toEqual((await whole.forward(r.ids)).logits.data);
      const got: number[] = [];
      for await (const t of streamed.generate(r.ids, { maxTokens: 5, temperature: 0 })) got.push(t.id);
      expect(got).toHaveLength(5);
    } finally {
      whole.dispose();
      streamed.dispose();
    }
  });
});

describe('loadModel streaming and bad inputs', () => {
  it('streams a Response in small chunks with progress, equal to the Blob load', async () => {
    const w = bytes('gpt-neo-f32', 'model.safetensors');
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < w.length; i += 1000) c.enqueue(w.slice(i, i + 1000));
        c.close();
      },
    });
    const seen: number[] = [];
    const m = await loadModel({ ...files('gpt-neo-f32'), weights: new Response(body) }, { onProgress: (p) => seen.push(p.loaded) });
    const ref = reference('gpt-neo-f32');
    expect(maxDiff((await m.forward(ref.ids)).logits.data, ref.logits)).toBeLessThan(1e-4);
    expect(seen.length).toBeGreaterThan(10);
    expect(seen[seen.length - 1]).toBe(w.length);
    m.dispose();
  });

  it('runs on 2 threads (the threaded build) with the same bits as on one', async () => {
    for (const name of ['gpt2-f32', 'bert-mlm-bf16']) {
      const one = await loadModel(files(name)), two = await loadModel(files(name), { threads: 2 });
      const r = reference(name);
      const opts = { attentions: true, ...(one.info.family === 'bert' ? { tokenTypes: r.types } : {}) };
      const a = await one.forward(r.ids, opts), b = await two.forward(r.ids, opts);
      expect(b.logits.data).toEqual(a.logits.data);
      expect(b.attentions!.data).toEqual(a.attentions!.data);
      one.dispose();
      two.dispose();
    }
    await expect(loadModel(files('gpt2-f32'), { threads: 0 })).rejects.toThrow(/^loadModel: options.threads: expected an integer in \[1, 16\], got 0$/);
  });

  it('cancels on its AbortSignal', async () => {
    const ctl = new AbortController();
    ctl.abort(new Error('stopped by the test'));
    await expect(loadModel(files('gpt2-f32'), { signal: ctl.signal })).rejects.toThrow('stopped by the test');
  });

  const cfg = JSON.parse(text('gpt2-f32', 'config.json')) as Record<string, unknown>;
  const w = bytes('gpt2-f32', 'model.safetensors');
  const xl = { architectures: ['GPT2LMHeadModel'], vocab_size: 50257, n_positions: 1024, n_embd: 1600, n_layer: 48, n_head: 25 };
  function xlHeader(): Uint8Array {
    const E = 1600, shapes: Record<string, number[]> = { 'wte.weight': [50257, E], 'wpe.weight': [1024, E], 'ln_f.weight': [E], 'ln_f.bias': [E] };
    for (let l = 0; l < 48; l++)
      Object.assign(shapes, {
        [`h.${l}.ln_1.weight`]: [E], [`h.${l}.ln_1.bias`]: [E], [`h.${l}.ln_2.weight`]: [E], [`h.${l}.ln_2.bias`]: [E],
        [`h.${l}.attn.c_attn.weight`]: [E, 3 * E], [`h.${l}.attn.c_attn.bias`]: [3 * E],
        [`h.${l}.attn.c_proj.weight`]: [E, E], [`h.${l}.attn.c_proj.bias`]: [E],
        [`h.${l}.mlp.c_fc.weight`]: [E, 4 * E], [`h.${l}.mlp.c_fc.bias`]: [4 * E],
        [`h.${l}.mlp.c_proj.weight`]: [4 * E, E], [`h.${l}.mlp.c_proj.bias`]: [E],
      });
    let off = 0;
    const h: Record<string, unknown> = {};
    for (const [k, shape] of Object.entries(shapes)) {
      const n = 4 * shape.reduce((a, b) => a * b, 1);
      h[k] = { dtype: 'F32', shape, data_offsets: [off, off + n] };
      off += n;
    }
    const json = new TextEncoder().encode(JSON.stringify(h));
    const out = new Uint8Array(8 + json.length + 1024);
    new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
    out.set(json, 8);
    return out;
  }
  const cases: [string, () => Promise<unknown>, RegExp][] = [
    ['a truncated file', () => loadModel({ ...files('gpt2-f32'), weights: new Blob([w.subarray(0, w.length - 64)]) }),
      /^loadModel: safetensors: tensor '.*': data_offsets \[\d+, \d+\] run past the data section .*truncated file\?$/],
    ['a file shorter than its header', () => loadModel({ ...files('gpt2-f32'), weights: new Blob([w.subarray(0, 100)]) }),
      /^loadModel: model.safetensors: safetensors: header length \d+ does not fit the file \(100 bytes/],
    ['a directory that is not there (Node: a path)', () => loadModel('./no-such-checkpoint/'),
      /^loadModel: files\.config "\.\/no-such-checkpoint\/config\.json": could not read .*no-such-checkpoint\/config\.json: ENOENT$/],
    ['threads with the scalar build', () => loadModel(files('gpt2-f32'), { variant: 'scalar', threads: 2 }),
      /^loadModel: options\.threads: expected 1 with variant 'scalar' \(it has no threaded build\), got 2$/],
    ['an onProgress that is not a function', () => loadModel(files('gpt2-f32'), { onProgress: 'x' as never }),
      /^loadModel: options\.onProgress: expected a function, got "x"$/],
    ['a signal that is not an AbortSignal', () => loadModel(files('gpt2-f32'), { signal: {} as never }),
      /^loadModel: options\.signal: expected an AbortSignal, got an object$/],
    ['a server that is not there', () => loadModel('http://127.0.0.1:9/gpt2/'),
      /^loadModel: files\.config "http:\/\/127\.0\.0\.1:9\/gpt2\/config\.json": could not be fetched: /],
    ['an unknown architecture', () => loadModel({ ...files('gpt2-f32'), config: { architectures: ['T5ForConditionalGeneration'] } }),
      /^loadModel: config.json: architecture 'T5ForConditionalGeneration' is not supported; supported: GPT2LMHeadModel, BertModel, BertForMaskedLM, BertForPreTraining, GPTNeoForCausalLM$/],
    ['absurd sizes', () => loadModel({ ...files('gpt2-f32'), config: { ...cfg, n_layer: 100000 } }),
      /^loadModel: config.json: n_layer must be an integer in \[1, 128\], got 100000$/],
    ['a shape mismatch', () => loadModel({ ...files('gpt2-f32'), config: { ...cfg, n_positions: 64 } }),
      /^loadModel: checkpoint: tensor 'wpe.weight' has shape \[32, 32\], the config implies \[64, 32\]$/],
    ['a missing tensor', () => loadModel({ ...files('gpt2-f32'), config: { ...cfg, n_layer: 3 } }),
      /^loadModel: checkpoint: missing tensor 'h.2.ln_1.weight' \[32\] for GPT2LMHeadModel$/],
    // gpt2-xl's shapes (1.5 B parameters, 6 GB in F32) declared by a header whose Response has no
    // Content-Length: refused from the header alone, before any download or allocation.
    ['a model beyond the heap', () => loadModel({ config: xl, weights: new Response(xlHeader()), vocab: files('gpt2-f32').vocab, merges: files('gpt2-f32').merges }),
      /^loadModel: checkpoint: GPT2LMHeadModel needs 6\d{3} MB \(parameters and KV cache\), above the \d+ MB available$/],
    ['an unknown quantisation', () => loadModel(files('gpt2-f32'), { quantize: 'int4' } as never),
      /^loadModel: options.quantize: expected 'int8' or undefined, got "int4"$/],
    ['an unknown option', () => loadModel(files('gpt2-f32'), { quantise: 'int8' } as never),
      /^loadModel: options: expected only onProgress, signal, variant, threads, quantize, worker, got \["quantise"\]$/],
    ['a Worker asked for in Node', () => loadModel(files('gpt2-f32'), { worker: true }),
      /^loadModel: options.worker: expected false here \(Worker models are for browsers\), got true$/],
    ['no weights', () => loadModel({ config: cfg } as never), /^loadModel: files: expected a base URL/],
    ['an unknown build', () => loadModel(files('gpt2-f32'), { variant: 'simd-threads' } as never),
      /^loadModel: options.variant: expected 'scalar', 'simd' or 'relaxed-simd', got "simd-threads"$/],
  ];
  it.each(cases)('%s is a named Error', async (_, fn, re) => {
    await expect(fn()).rejects.toThrow(re);
  });

  it('refuses bad calls and keeps working', async () => {
    const m = await loadModel(files('gpt2-f32'));
    const gen = m.generate([1, 2], { maxTokens: 3 });
    await gen.next();
    await expect(m.forward([1])).rejects.toThrow(/^forward: the model is generating; wait for generate\(\) to finish or return\(\)$/);
    await gen.return();
    const ref = reference('gpt2-f32');
    await expect(m.forward([1, 96])).rejects.toThrow(/^forward: input\[1\]: expected a token id in \[0, 96\), got 96$/);
    await expect(m.forward(new Array(33).fill(1))).rejects.toThrow(/^forward: 33 tokens exceed the model's 32 positions$/);
    await expect(m.forward('x', { tokenTypes: [0] })).rejects.toThrow(/^forward: options.tokenTypes: expected no token types for a decoder/);
    await expect(m.fillMask('[MASK]')).rejects.toThrow(/^fillMask: GPT2LMHeadModel has no masked-LM head/);
    await expect(m.generate([1], { maxTokens: 40 }).next()).rejects.toThrow(/^generate: options.maxTokens: expected an integer in \[1, 31\], got 40$/);
    await expect(m.generate([1], { topP: 0 }).next()).rejects.toThrow(/^generate: options.topP: expected a number in \(0, 1\], got 0$/);
    // Options are checked by name and type, as loadModel's are: a typo is not silently ignored.
    await expect(m.forward([1], { attention: true } as never)).rejects.toThrow(/^forward: options: unknown option 'attention'; expected one of attentions, tokenTypes$/);
    await expect(m.forward([1], { attentions: 'yes' } as never)).rejects.toThrow(/^forward: options\.attentions: expected a boolean, got "yes"$/);
    await expect(m.generate([1], { max_tokens: 2 } as never).next()).rejects.toThrow(/^generate: options: unknown option 'max_tokens'/);
    await expect(m.generate([1], { seed: NaN }).next()).rejects.toThrow(/^generate: options\.seed: expected an integer, got NaN$/);
    await expect(m.generate([1], null as never).next()).rejects.toThrow(/^generate: options: expected an object, got null$/);
    expect(maxDiff((await m.forward(ref.ids)).logits.data, ref.logits)).toBeLessThan(1e-4);
    m.dispose();
    await expect(m.forward([1])).rejects.toThrow(/^forward: the model has been disposed$/);
  });
});
