// loadModel's errors name the file they are about as the caller gave it (a base URL's resolved
// file URL, a path or URL string as written, a URL's href, a File's name, a fetched Response's
// URL), so a user loading several checkpoints can tell which one was bad; bytes, a plain Blob and
// a parsed config keep their messages, and the tokenizer's errors, which named no call, name the
// argument. On the tiny GPT-2 and BERT fixtures, broken on purpose: served by a local HTTP server,
// written to a temporary folder, or handed over as Files and bytes.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadModel } from 'attnlab';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../pretrained/fixtures');
const read = (name: string, file: string) => new Uint8Array(readFileSync(join(root, name, file)));
const gpt2 = (file: string) => read('gpt2-f32', file);
const utf8 = (s: string) => new TextEncoder().encode(s);
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const weights = gpt2('model.safetensors');
const truncated = weights.subarray(0, weights.length - 64);
const config = JSON.parse(new TextDecoder().decode(gpt2('config.json'))) as Record<string, unknown>;
const vocab97 = utf8(JSON.stringify({ ...JSON.parse(new TextDecoder().decode(gpt2('vocab.json'))), zzz: 96 }));
// A safetensors file whose header is not JSON.
function notJsonHeader(): Uint8Array {
  const h = utf8('{"wte.weight": nope}');
  const out = new Uint8Array(8 + h.length + 16);
  new DataView(out.buffer).setBigUint64(0, BigInt(h.length), true);
  out.set(h, 8);
  return out;
}

// Folders of the server: the GPT-2 fixture with one file replaced (or, for nolength, its weights
// sent without a Content-Length). tokenizer.json answers 404 unless given, as for the fixture.
const folders: Record<string, Record<string, Uint8Array>> = {
  good: {},
  truncated: { 'model.safetensors': truncated },
  short: { 'model.safetensors': weights.subarray(0, 100) },
  nolength: { 'model.safetensors': notJsonHeader() },
  badconfig: { 'config.json': utf8(JSON.stringify({ ...config, n_layer: 100000 })) },
  badtok: { 'tokenizer.json': utf8('{"model": ') },
  bigvocab: { 'vocab.json': vocab97 },
};

let server: Server;
let base = '';
let dir = '';

beforeAll(async () => {
  server = createServer((req, res) => {
    const [, folder, file] = new URL(req.url ?? '/', 'http://x').pathname.split('/');
    const files = folders[folder];
    let body: Uint8Array | undefined = files?.[file];
    if (files && !body && file !== 'tokenizer.json') {
      try {
        body = gpt2(file);
      } catch { /* 404 below */ }
    }
    if (!body) {
      res.writeHead(404).end('not found');
      return;
    }
    if (folder === 'nolength') res.writeHead(200).end(body);  // chunked: the size is unknown
    else res.writeHead(200, { 'Content-Length': body.length }).end(body);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const a = server.address();
  base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}/`;
  // On disk: the fixture with truncated weights, a bad merges.txt and vocab.json, a vocab.txt without [CLS].
  dir = mkdtempSync(join(tmpdir(), 'attnlab-sources-'));
  mkdirSync(join(dir, 'gpt2'));
  for (const f of ['config.json', 'vocab.json', 'merges.txt']) writeFileSync(join(dir, 'gpt2', f), gpt2(f));
  writeFileSync(join(dir, 'gpt2', 'model.safetensors'), truncated);
  writeFileSync(join(dir, 'bad-merges.txt'), '#version: 0.2\na b c\n');
  writeFileSync(join(dir, 'bad-vocab.json'), '{"a": 0,');
  writeFileSync(join(dir, 'no-cls.txt'), '[PAD]\n[UNK]\n[SEP]\na\n');
});

afterAll(async () => {
  await new Promise((ok) => server?.close(ok));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const TRUNCATED = "safetensors: tensor '.*': data_offsets \\[\\d+, \\d+\\] run past the data section .*truncated file\\?$";
// The GPT-2 fixture's files as bytes, for the cases that replace one of them.
const bytes = () => ({ config, weights, vocab: gpt2('vocab.json'), merges: gpt2('merges.txt') });

describe('loadModel names the file behind each error', () => {
  it('a base URL (string or URL): the resolved file\'s URL', async () => {
    await expect(loadModel(`${base}missing/`)).rejects.toThrowError(`loadModel: files.config "${base}missing/config.json": the server answered HTTP 404`);
    await expect(loadModel(`${base}badconfig`)).rejects.toThrowError(`loadModel: files.config "${base}badconfig/config.json": n_layer must be an integer in [1, 128], got 100000`);
    await expect(loadModel(new URL(`${base}badconfig/`))).rejects.toThrowError(`loadModel: files.config "${base}badconfig/config.json": n_layer must be an integer in [1, 128], got 100000`);
    await expect(loadModel(`${base}truncated/`)).rejects.toThrow(new RegExp(`^loadModel: files\\.weights "${esc(base)}truncated/model\\.safetensors": ${TRUNCATED}`));
    await expect(loadModel(`${base}short/`)).rejects.toThrow(
      new RegExp(`^loadModel: files\\.weights "${esc(base)}short/model\\.safetensors": safetensors: header length \\d+ does not fit the file \\(100 bytes`));
    await expect(loadModel(`${base}nolength/`)).rejects.toThrow(
      new RegExp(`^loadModel: files\\.weights "${esc(base)}nolength/model\\.safetensors": safetensors header: invalid JSON at byte \\d+`));
    await expect(loadModel(`${base}badtok/`)).rejects.toThrow(new RegExp(`^loadModel: files\\.tokenizer "${esc(base)}badtok/tokenizer\\.json": invalid JSON: `));
    await expect(loadModel(`${base}bigvocab/`)).rejects.toThrowError(`loadModel: files.vocab "${base}bigvocab/vocab.json": the tokenizer has 97 tokens, the model's vocabulary 96`);
    await expect(loadModel('http://127.0.0.1:9/gpt2/')).rejects.toThrow(/^loadModel: files\.config "http:\/\/127\.0\.0\.1:9\/gpt2\/config\.json": could not be fetched: /);
    // and a good folder of the same server still loads
    const m = await loadModel(`${base}good/`);
    expect((await m.forward('a b')).logits.shape[1]).toBe(96);
    m.dispose();
  });

  it('a folder path (Node): the file\'s path as resolved from it', async () => {
    await expect(loadModel(join(dir, 'gpt2'))).rejects.toThrow(new RegExp(`^loadModel: files\\.weights "${esc(join(dir, 'gpt2', 'model.safetensors'))}": ${TRUNCATED}`));
    await expect(loadModel('./no-such-checkpoint/')).rejects.toThrowError(
      `loadModel: files.config "./no-such-checkpoint/config.json": could not read ${resolve('no-such-checkpoint/config.json')}: ENOENT`);
  });

  it('per-file paths, URL strings and URL objects: as written, a URL\'s href', async () => {
    const file = pathToFileURL(join(dir, 'gpt2', 'model.safetensors'));
    await expect(loadModel({ ...bytes(), weights: file })).rejects.toThrow(new RegExp(`^loadModel: files\\.weights "${esc(file.href)}": ${TRUNCATED}`));
    await expect(loadModel({ ...bytes(), config: `${base}badconfig/config.json` })).rejects.toThrowError(
      `loadModel: files.config "${base}badconfig/config.json": n_layer must be an integer in [1, 128], got 100000`);
    await expect(loadModel({ ...bytes(), weights: `${base}missing/model.safetensors` })).rejects.toThrowError(
      `loadModel: files.weights "${base}missing/model.safetensors": the server answered HTTP 404`);
    const merges = join(dir, 'bad-merges.txt'), vocab = join(dir, 'bad-vocab.json');
    await expect(loadModel({ ...bytes(), merges })).rejects.toThrowError(
      `loadModel: files.merges "${merges}": ByteLevelBpe: merges[0]: expected two symbols separated by one space, got "a b c"`);
    await expect(loadModel({ ...bytes(), vocab })).rejects.toThrow(new RegExp(`^loadModel: files\\.vocab "${esc(vocab)}": invalid JSON: `));
    const noCls = join(dir, 'no-cls.txt');
    const bert = JSON.parse(new TextDecoder().decode(read('bert-mlm-bf16', 'config.json'))) as Record<string, unknown>;
    await expect(loadModel({ config: bert, weights: read('bert-mlm-bf16', 'model.safetensors'), vocab: noCls })).rejects.toThrowError(
      `loadModel: files.vocab "${noCls}": WordPiece: vocab: expected a vocabulary with [CLS], got "4 tokens without it"`);
  });

  it('Files, alone or as a list: by name', async () => {
    await expect(loadModel({ ...bytes(), weights: new File([truncated], 'gpt2-small.safetensors') })).rejects.toThrow(
      new RegExp(`^loadModel: files\\.weights "gpt2-small\\.safetensors": ${TRUNCATED}`));
    await expect(loadModel({ ...bytes(), config: { ...config, n_layer: 3 }, weights: new File([weights], 'gpt2-small.safetensors') })).rejects.toThrowError(
      "loadModel: files.weights \"gpt2-small.safetensors\": checkpoint: missing tensor 'h.2.ln_1.weight' [32] for GPT2LMHeadModel");
    await expect(loadModel({ ...bytes(), tokenizer: new File(['{"model": '], 'tok.json') })).rejects.toThrow(/^loadModel: files\.tokenizer "tok\.json": invalid JSON: /);
    const list = [new File([folders.badconfig['config.json']], 'config.json'), new File([weights], 'model.safetensors'),
      new File([gpt2('vocab.json')], 'vocab.json'), new File([gpt2('merges.txt')], 'merges.txt')];
    await expect(loadModel(list)).rejects.toThrowError('loadModel: files.config "config.json": n_layer must be an integer in [1, 128], got 100000');
  });

  it('a fetched Response: by its URL', async () => {
    const res = await fetch(`${base}truncated/model.safetensors`);
    await expect(loadModel({ ...bytes(), weights: res })).rejects.toThrow(new RegExp(`^loadModel: files\\.weights "${esc(base)}truncated/model\\.safetensors": ${TRUNCATED}`));
  });

  it('bytes, a Blob, a parsed config: no name; the messages that named no call name the argument', async () => {
    // As before.
    await expect(loadModel({ ...bytes(), weights: new Blob([truncated]) })).rejects.toThrow(new RegExp(`^loadModel: ${TRUNCATED}`));
    await expect(loadModel({ ...bytes(), weights: weights.subarray(0, 100) })).rejects.toThrow(/^loadModel: model\.safetensors: safetensors: header length \d+ does not fit the file/);
    await expect(loadModel({ ...bytes(), config: { ...config, n_layer: 100000 } })).rejects.toThrowError('loadModel: config.json: n_layer must be an integer in [1, 128], got 100000');
    await expect(loadModel({ ...bytes(), vocab: vocab97 })).rejects.toThrowError("loadModel: the tokenizer has 97 tokens, the model's vocabulary 96");
    // Were a bare SyntaxError or the tokenizer's own error.
    await expect(loadModel({ ...bytes(), tokenizer: utf8('{"model": ') })).rejects.toThrow(/^loadModel: files\.tokenizer: invalid JSON: /);
    await expect(loadModel({ ...bytes(), vocab: new Blob(['{"a": 0,']) })).rejects.toThrow(/^loadModel: files\.vocab: invalid JSON: /);
    await expect(loadModel({ ...bytes(), merges: utf8('a b c\n') })).rejects.toThrowError(
      'loadModel: files.merges: ByteLevelBpe: merges[0]: expected two symbols separated by one space, got "a b c"');
    // A body without a Content-Length whose header is not JSON.
    await expect(loadModel({ ...bytes(), weights: new Response(new Blob([notJsonHeader()]).stream()) })).rejects.toThrow(/^loadModel: safetensors header: invalid JSON at byte \d+/);
  });
});
