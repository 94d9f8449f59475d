// Bad input to the variants gets a JavaScript Error naming the argument, the expectation and what
// was given; never a WebAssembly abort; the instance keeps working, and failed calls leave the
// heap as it was.
import type { Attnlab } from 'attnlab';
import { describe, expect, it } from 'vitest';
import { maxError, randn, refAttention } from './reference.js';
import { useVariants, VARIANTS } from './variants.js';

const q = randn([2, 3, 4], 1), k = randn([2, 5, 4], 2), v = randn([2, 5, 6], 3);
const E = 4;
const mhaParams = { numHeads: 2, inProjWeight: randn([3 * E, E], 4), outProjWeight: randn([E, E], 5) };
const x1 = randn([3, 4], 6);
const f32 = (shape: number[]) => ({ data: new Float32Array(shape.reduce((a, b) => a * b, 1)), shape });
const local = { type: 'local', window: 1 } as const;

type Case = [string, (lib: Attnlab) => unknown, RegExp];
const cases: Case[] = [
  // attention({ pattern })
  ['pattern not an object', (l) => l.attention(q, k, v, { pattern: 'local' as never }), /^attention: options\.pattern: expected a pattern \{ type: 'local' \| 'longformer' \| 'bigbird', \.\.\. \}, got "local"$/],
  ['pattern of an unknown type', (l) => l.attention(q, k, v, { pattern: { type: 'strided' } as never }), /^attention: options\.pattern\.type: expected one of 'local', 'longformer', 'bigbird', got "strided"$/],
  ['local pattern without window', (l) => l.attention(q, k, v, { pattern: { type: 'local' } as never }), /^attention: options\.pattern\.window: expected an integer >= 0, got undefined$/],
  ['negative window', (l) => l.attention(q, k, v, { pattern: { type: 'local', window: -1 } }), /^attention: options\.pattern\.window: expected an integer >= 0, got -1$/],
  ['fractional window', (l) => l.attention(q, k, v, { pattern: { type: 'longformer', window: 1.5 } }), /^attention: options\.pattern\.window: expected an integer >= 0, got 1\.5$/],
  ['local pattern with globals', (l) => l.attention(q, k, v, { pattern: { type: 'local', window: 1, global: [0] } as never }), /^attention: options\.pattern: unknown option 'global'; expected one of type, window$/],
  ['global token out of range', (l) => l.attention(q, k, v, { pattern: { type: 'longformer', window: 1, global: [0, 7] } }), /^attention: options\.pattern\.global: expected token indices in \[0, 5\), got 7 at index 1$/],
  ['global not an array', (l) => l.attention(q, k, v, { pattern: { type: 'longformer', window: 1, global: 3 as never } }), /^attention: options\.pattern\.global: expected an array of token indices, got 3$/],
  ['bigbird without blockSize', (l) => l.attention(q, k, v, { pattern: { type: 'bigbird' } as never }), /^attention: options\.pattern\.blockSize: expected an integer >= 1, got undefined$/],
  ['bigbird blockSize 0', (l) => l.attention(q, k, v, { pattern: { type: 'bigbird', blockSize: 0 } }), /^attention: options\.pattern\.blockSize: expected an integer >= 1, got 0$/],
  ['bigbird global block out of range', (l) => l.attention(q, k, v, { pattern: { type: 'bigbird', blockSize: 2, globalBlocks: [3] } }), /^attention: options\.pattern\.globalBlocks: expected block indices in \[0, 3\), got 3 at index 0$/],
  ['bigbird negative seed', (l) => l.attention(q, k, v, { pattern: { type: 'bigbird', blockSize: 2, seed: -1 } }), /^attention: options\.pattern\.seed: expected an integer >= 0, got -1$/],
  ['bigbird fractional randomBlocks', (l) => l.attention(q, k, v, { pattern: { type: 'bigbird', blockSize: 2, randomBlocks: 0.5 } }), /^attention: options\.pattern\.randomBlocks: expected an integer >= 0, got 0\.5$/],
  ['pattern with the additive score', (l) => l.attention(q, k, v, { pattern: local, score: 'additive', params: { Wq: f32([5, 4]), Wk: f32([5, 4]), wv: f32([5]) } }), /^attention: options\.score: expected 'scaled_dot' or 'dot' with options\.pattern, got 'additive'$/],
  ['pattern with a mask that does not broadcast', (l) => l.attention(q, k, v, { pattern: local, attnMask: { data: new Uint8Array(4), shape: [4] } }), /^attention: options\.attnMask: expected a shape that broadcasts to \[2, 3, 5\], got \[4\]$/],
  ['pattern with validLens out of range', (l) => l.attention(q, k, v, { pattern: local, validLens: new Int32Array([2, 6]) }), /^attention: options\.validLens: expected values in \[0, 5\] \(the number of keys\), got 6 at index 1$/],
  // attentionPattern
  ['attentionPattern Sq negative', (l) => l.attentionPattern(local, -1, 4), /^attentionPattern: Sq: expected an integer >= 0, got -1$/],
  ['attentionPattern Sk fractional', (l) => l.attentionPattern(local, 4, 2.5), /^attentionPattern: Sk: expected an integer >= 0, got 2\.5$/],
  ['attentionPattern without a pattern', (l) => l.attentionPattern(null as never, 4, 4), /^attentionPattern: pattern: expected a pattern \{ type: 'local' \| 'longformer' \| 'bigbird', \.\.\. \}, got null$/],
  ['attentionPattern causal not a boolean', (l) => l.attentionPattern(local, 4, 4, { causal: 1 as never }), /^attentionPattern: options\.causal: expected a boolean, got 1$/],
  ['attentionPattern too large for the heap', (l) => l.attentionPattern(local, 1 << 16, 1 << 16), /^attentionPattern: out of memory: 4294967296 bytes exceeds the WebAssembly heap's 2 GiB limit$/],
  // alibi
  ['alibi slopes of the wrong length', (l) => l.attention(q, k, v, { alibi: new Float32Array(3) }), /^attention: options\.alibi: expected true or a Float32Array of 2 slopes \(one per head, q's dimension -3\), got Float32Array\(3\)$/],
  ['alibi negative slope', (l) => l.attention(q, k, v, { alibi: Float32Array.from([0.5, -1]) }), /^attention: options\.alibi: expected slopes that are finite and >= 0, got -1 at index 1$/],
  ['alibi NaN slope', (l) => l.attention(q, k, v, { alibi: Float32Array.from([NaN, 1]) }), /^attention: options\.alibi: expected slopes that are finite and >= 0, got NaN at index 0$/],
  ['alibi a string', (l) => l.attention(q, k, v, { alibi: 'yes' as never }), /^attention: options\.alibi: expected true or a Float32Array of 2 slopes \(one per head, q's dimension -3\), got "yes"$/],
  ['multi-head alibi of the wrong length', (l) => l.multiHeadAttention(x1, x1, x1, mhaParams, { alibi: new Float32Array(4) }), /^multiHeadAttention: options\.alibi: expected true or a Float32Array of 2 slopes \(one per head, numHeads\), got Float32Array\(4\)$/],
  // rope
  ['rope of an odd feature size', (l) => l.rope(f32([3, 5])), /^rope: x: expected an even last dimension >= 2 for rotary embedding \(features turn in pairs\), got shape \[3, 5\]$/],
  ['rope of rank 1', (l) => l.rope(f32([4])), /^rope: x: expected a tensor of rank >= 2 \[\.\.\., S, D\], got shape \[4\]$/],
  ['rope base 0', (l) => l.rope(x1, { base: 0 }), /^rope: options\.base: expected a finite number > 0, got 0$/],
  ['rope negative offset', (l) => l.rope(x1, { offset: -1 }), /^rope: options\.offset: expected an integer >= 0, got -1$/],
  ['rope unknown pairs', (l) => l.rope(x1, { pairs: 'split' as never }), /^rope: options\.pairs: expected one of 'interleaved', 'halves', got "split"$/],
  ['rope unknown option', (l) => l.rope(x1, { theta: 10 } as never), /^rope: options: unknown option 'theta'; expected one of base, offset, pairs$/],
  // false reached the core as a NaN base ("rope: rope: expected base > 0 ..., got base nan"); true
  // and null, and null fields, passed as the defaults.
  ['rope options false', (l) => l.rope(x1, false as never), /^rope: options: expected an object, got false$/],
  ['rope options true', (l) => l.rope(x1, true as never), /^rope: options: expected an object, got true$/],
  ['rope options null', (l) => l.rope(x1, null as never), /^rope: options: expected an object, got null$/],
  ['rope base null', (l) => l.rope(x1, { base: null } as never), /^rope: options\.base: expected a finite number > 0, got null$/],
  ['attention rope offset null', (l) => l.attention(q, k, v, { rope: { offset: null } as never }), /^attention: options\.rope\.offset: expected an integer >= 0, got null$/],
  ['attention rope with an odd q size', (l) => l.attention(f32([2, 3, 3]), f32([2, 5, 3]), v, { rope: true }), /^attention: q: expected an even last dimension >= 2 for rotary embedding \(features turn in pairs\), got shape \[2, 3, 3\]$/],
  ['attention rope options checked', (l) => l.attention(q, k, v, { rope: { base: -2 } }), /^attention: options\.rope\.base: expected a finite number > 0, got -2$/],
  ['multi-head rope with an odd head size', (l) => l.multiHeadAttention(f32([3, 6]), f32([3, 6]), f32([3, 6]), { numHeads: 2, inProjWeight: f32([18, 6]), outProjWeight: f32([6, 6]) }, { rope: true }), /^multiHeadAttention: options\.rope: expected an even head size E \/ numHeads \(features turn in pairs\), got 6 \/ 2 = 3$/],
  // linearAttention
  ['linear method unknown', (l) => l.linearAttention(q, k, v, { method: 'cosformer' as never }), /^linearAttention: options\.method: expected one of 'elu', 'favor\+', 'linformer', got "cosformer"$/],
  ['favor+ with 0 features', (l) => l.linearAttention(q, k, v, { method: 'favor+', features: 0 }), /^linearAttention: options\.features: expected an integer >= 1, got 0$/],
  ['favor+ negative seed', (l) => l.linearAttention(q, k, v, { method: 'favor+', seed: -3 }), /^linearAttention: options\.seed: expected an integer >= 0, got -3$/],
  ['elu with features', (l) => l.linearAttention(q, k, v, { features: 4 } as never), /^linearAttention: options: unknown option 'features'; expected one of method, causal$/],
  ['linformer causal', (l) => l.linearAttention(q, k, v, { method: 'linformer', causal: true } as never), /^linearAttention: options\.causal: Linformer projects the whole sequence, so it has no causal form; use method 'elu' or 'favor\+'$/],
  ['linformer projection of the wrong width', (l) => l.linearAttention(q, k, v, { method: 'linformer', projection: { E: f32([3, 4]) } }), /^linearAttention: options\.projection\.E: expected shape \[rank >= 1, 5\] \(\[rank, Sk\]\), got \[3, 4\]$/],
  ['linformer rank disagreeing with the projection', (l) => l.linearAttention(q, k, v, { method: 'linformer', rank: 2, projection: { E: f32([3, 5]) } }), /^linearAttention: options\.projection\.E: expected shape \[2, 5\] \(\[rank, Sk\]\), got \[3, 5\]$/],
  ['linformer F unlike E', (l) => l.linearAttention(q, k, v, { method: 'linformer', projection: { E: f32([3, 5]), F: f32([2, 5]) } }), /^linearAttention: options\.projection\.F: expected shape \[3, 5\] \(\[rank, Sk\]\), got \[2, 5\]$/],
  ['linear k of another feature size', (l) => l.linearAttention(q, f32([2, 5, 3]), v), /^linearAttention: k: expected the last dimension to equal q's \(4\), got shape \[2, 5, 3\]$/],
  ['linear v rows differ from k', (l) => l.linearAttention(q, k, f32([2, 4, 6])), /^linearAttention: v: expected 5 rows \(Sk, as k\), got shape \[2, 4, 6\]$/],
  ['linear batch dims differ', (l) => l.linearAttention(q, f32([3, 5, 4]), v), /^linearAttention: k: expected leading dimensions \[2\] \(as q\), got shape \[3, 5, 4\]$/],
  ['linear NaN in q', (l) => l.linearAttention({ data: Float32Array.from(q.data, (x, i) => (i === 5 ? NaN : x)), shape: q.shape }, k, v), /^linearAttention: q: expected finite values, got NaN at index 5$/],
  ['linear options not an object', (l) => l.linearAttention(q, k, v, 'elu' as never), /^linearAttention: options: expected an object, got "elu"$/],
];

const libs = useVariants();

describe.each(VARIANTS)('%s', (variant) => {
  it('has at least 40 cases', () => expect(cases.length).toBeGreaterThanOrEqual(40));

  it.each(cases)('%s', (_name, call, message) => {
    const lib = libs[variant];
    expect(() => call(lib)).toThrowError(message);
    // The instance still works, and gives the right answer.
    const got = lib.attention(q, k, v, { causal: true });
    expect(maxError(got.output.data, refAttention(q, k, v, { causal: true }).output.data)).toBeLessThanOrEqual(1e-5);
  });

  it('errors are Error instances, not WebAssembly exceptions', () => {
    for (const [, call] of cases) {
      try {
        call(libs[variant]);
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(Error);
        expect(e).not.toBeInstanceOf(WebAssembly.RuntimeError);
      }
    }
  });

  it('the heap is unchanged by failed calls', () => {
    const lib = libs[variant];
    lib.attention(q, k, v, { pattern: local });
    const before = lib.heapStats().used;
    for (const [, call] of cases) expect(() => call(lib)).toThrow();
    expect(lib.heapStats().used).toBe(before);
  });
});
