// Where a checkpoint's files come from: a URL (fetched only when asked, with the caller's
// AbortSignal; in Node a path or file: URL is read from disk), a File / Blob (a file picker, drag
// and drop), a Response, or bytes. Each becomes a stream of chunks, so a model.safetensors is
// never held whole in JavaScript.
import { argError } from '../errors.js';
import { isNode, nodeBuiltin } from '../loader.js';
import { isArrayBuffer, isTyped } from '../tensor.js';

export type FileSource = string | URL | Blob | Response | ArrayBuffer | Uint8Array;

export interface Opened {
  /** Byte length, or 0 when unknown (a Response without Content-Length). */
  size: number;
  /** The bytes; a browser can transfer it to the Worker that loads the model. */
  stream: ReadableStream<Uint8Array>;
}

export function isFileSource(x: unknown): x is FileSource {
  return typeof x === 'string' || x instanceof URL || isTyped(x, 'uint8') || isArrayBuffer(x) ||
    (typeof Blob !== 'undefined' && x instanceof Blob) || (typeof Response !== 'undefined' && x instanceof Response);
}

/**
 * How loadModel's errors name one of the checkpoint's files, so a user loading several can tell
 * which was bad: its role (the argument, 'files.weights') and the name the caller gave it, if any:
 * a string as written (a base URL's resolved file), a URL's href, a File's name, a fetched
 * Response's URL. Bytes, a plain Blob and a parsed config have no name.
 */
export interface FileName {
  role: string;
  name: string;
}

export function fileName(role: string, src: unknown): FileName {
  const name = typeof src === 'string' ? src : src instanceof URL ? src.href
    : typeof File !== 'undefined' && src instanceof File ? src.name
      : typeof Response !== 'undefined' && src instanceof Response ? src.url : '';
  return { role, name };
}

/** 'files.weights "https://host/gpt2/model.safetensors"', or the role alone. */
export const label = (f: FileName) => (f.name ? `${f.role} ${JSON.stringify(f.name)}` : f.role);

/**
 * loadModel's Error about a file's contents. A named file is named in place of the message's own
 * 'config.json: ' or 'tokenizer.json: '; an unnamed one keeps `unnamed` (the message as it was).
 */
export function fileError(f: FileName, message: string, unnamed = `loadModel: ${message}`): Error {
  return new Error(f.name ? `loadModel: ${label(f)}: ${message.replace(/^(config|tokenizer)\.json: /, '')}` : unnamed);
}

type NodeFs = { openAsBlob: (path: string) => Promise<Blob>; promises: { stat: (path: string) => Promise<{ isFile: () => boolean }> } };
type NodeUrl = { fileURLToPath: (u: URL) => string };
type NodePath = { resolve: (...p: string[]) => string };

/** In Node, the file a string or URL names (a path against the working directory, or file:), else null. */
function localPath(src: string | URL): string | null {
  if (!isNode) return null;
  const url = src instanceof URL ? src : /^[a-z][a-z0-9+.-]+:/i.test(src) ? new URL(src) : null;
  if (url) return url.protocol === 'file:' ? nodeBuiltin<NodeUrl>('node:url').fileURLToPath(url) : null;
  return nodeBuiltin<NodePath>('node:path').resolve((globalThis as unknown as { process: { cwd: () => string } }).process.cwd(), src as string);
}

export async function open(src: FileSource, file: FileName, signal?: AbortSignal): Promise<Opened> {
  const what = label(file);
  if (typeof src === 'string' || src instanceof URL) {
    const path = localPath(src);
    if (path !== null) {
      // Read from disk as it is consumed, like a File from a picker.
      const fs = nodeBuiltin<NodeFs>('node:fs');
      let blob: Blob;
      try {
        if (!(await fs.promises.stat(path)).isFile()) throw Object.assign(new Error('not a file'), { code: 'not a file' });
        blob = await fs.openAsBlob(path);
      } catch (e) {
        throw new Error(`loadModel: ${what}: could not read ${path}: ${(e as { code?: string }).code ?? String(e)}`);
      }
      return open(blob, file, signal);
    }
    let res: Response;
    try {
      res = await fetch(src, { signal });
    } catch (e) {
      if (signal?.aborted) throw e;
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new Error(`loadModel: ${what}: could not be fetched: ${cause?.code ?? cause?.message ?? String(e)}`);
    }
    if (!res.ok) throw new Error(`loadModel: ${what}: the server answered HTTP ${res.status}`);
    return open(res, file, signal);
  }
  if (isTyped(src, 'uint8') || isArrayBuffer(src)) {
    const bytes = isTyped(src, 'uint8') ? src : new Uint8Array(src);
    const stream = new ReadableStream<Uint8Array>({ start(c) { c.enqueue(bytes); c.close(); } });
    return { size: bytes.byteLength, stream };
  }
  if (typeof Blob !== 'undefined' && src instanceof Blob) return { size: src.size, stream: src.stream() as ReadableStream<Uint8Array> };
  if (typeof Response !== 'undefined' && src instanceof Response) {
    if (!src.body) throw new Error(`loadModel: ${what}: the Response has no body (already read?)`);
    const len = Number(src.headers.get('content-length') ?? 0);
    return { size: Number.isFinite(len) ? len : 0, stream: src.body };
  }
  throw argError('loadModel', what, 'a URL, File, Blob, Response, ArrayBuffer or Uint8Array', src);
}

/** Exactly `n` bytes from the stream (fewer only at its end), keeping what is read past them. */
export class Chunks {
  private pending: Uint8Array[] = [];
  private buffered = 0;
  private done = false;
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>;
  constructor(stream: ReadableStream<Uint8Array>, private readonly signal?: AbortSignal) {
    this.reader = stream.getReader();
  }

  private async pull(): Promise<boolean> {
    if (this.done) return false;
    if (this.signal?.aborted) throw this.signal.reason ?? new DOMException('aborted', 'AbortError');
    const { value, done } = await this.reader.read();
    if (done) return !(this.done = true);
    this.pending.push(value);
    this.buffered += value.byteLength;
    return true;
  }

  async exactly(n: number): Promise<Uint8Array> {
    while (this.buffered < n && (await this.pull()));
    const out = new Uint8Array(Math.min(n, this.buffered));
    let at = 0;
    while (at < out.length) {
      const c = this.pending[0];
      const take = Math.min(c.byteLength, out.length - at);
      out.set(c.subarray(0, take), at);
      at += take;
      if (take === c.byteLength) this.pending.shift();
      else this.pending[0] = c.subarray(take);
    }
    this.buffered -= out.length;
    return out;
  }

  /** The next chunk as the stream gives it (after anything buffered), or null at the end. */
  async next(): Promise<Uint8Array | null> {
    if (!this.pending.length && !(await this.pull())) return null;
    this.buffered -= this.pending[0].byteLength;
    return this.pending.shift()!;
  }

  cancel(): void {
    this.reader.cancel().catch(() => {});
  }
}

export async function readText(src: FileSource, file: FileName, signal?: AbortSignal): Promise<string> {
  const { stream } = await open(src, file, signal);
  const c = new Chunks(stream, signal);
  const parts: Uint8Array[] = [];
  for (let p = await c.next(); p; p = await c.next()) parts.push(p);
  return new TextDecoder().decode(await new Blob(parts as BlobPart[]).arrayBuffer());
}
