// The relaxed-SIMD builds (issue 19): load() picks them where the engine validates relaxed SIMD
// and never where it does not; the shipped .wasm files hold f32x4.relaxed_madd and no marker
// import; their results meet the float64 references; and within one build, any thread count gives
// the same bits. The V8 flag is process-wide, so each engine is a child process
// (tests/js/fixtures/relaxed-child.mjs): Node 20 with and without --experimental-wasm-relaxed-simd.
//
// Tolerance: 1e-5 by reference.ts's maxError (absolute up to magnitude 1, relative above), the
// bound every build meets against float64 here; relaxed_madd rounds once where the processor
// has FMA and twice where it has not, so relaxed results differ from SIMD128's in the last bits
// and may differ between machines, but not between thread counts on one machine.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { maxError, randn, refAttention, refMultiHead } from './reference.js';

const TOL = 1e-5;
const child = fileURLToPath(new URL('./fixtures/relaxed-child.mjs', import.meta.url));
const wasm = (v: string) => readFileSync(new URL(`../../dist/wasm/attnlab-${v}.wasm`, import.meta.url));

function runChild(flag: string, mode: string, input?: string) {
  const r = spawnSync(process.execPath, [flag, child, mode], { encoding: 'utf8', input, timeout: 120_000, maxBuffer: 64 << 20 });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout);
}

function contains(bytes: Uint8Array, seq: number[]): boolean {
  outer: for (let i = 0; i + seq.length <= bytes.length; i++) {
    for (let j = 0; j < seq.length; j++) if (bytes[i + j] !== seq[j]) continue outer;
    return true;
  }
  return false;
}

describe('relaxed builds', () => {
  it('ship f32x4.relaxed_madd (fd 85 02), which the SIMD128 build does not use', () => {
    for (const v of ['relaxed-simd', 'relaxed-simd-threads']) expect(contains(wasm(v), [0xfd, 0x85, 0x02]), v).toBe(true);
    // The opcode bytes may occur by chance in data; what matters is that an engine without
    // relaxed SIMD rejects the relaxed modules and accepts the SIMD128 one (next test).
  });

  it('ship the int8 product on i32x4.relaxed_dot_i8x16_i7x16_add_s (fd 93 02) in their nn and checkpoint modules, which Node 20 does not use', () => {
    for (const v of ['relaxed-simd', 'relaxed-simd-threads'])
      for (const m of ['nn', 'pretrained']) expect(contains(wasm(`${m}-${v}`), [0xfd, 0x93, 0x02]), `${m}-${v}`).toBe(true);
    // Node 20's V8 gets that instruction wrong before it optimises a function (loader.ts), so
    // there new int8 weights keep SIMD128's kernel even when asked; the quads' own bits are
    // checked in Chromium (tests/browser/q8-quads.browser.test.ts).
    const r = runChild('--experimental-wasm-relaxed-simd', 'q8');
    const [major, minor] = r.v8.split('.').map(Number);
    const trusted = major > 11 || (major === 11 && minor >= 4);
    expect(r['relaxed-simd'].nn).toBe(r['relaxed-simd'].pretrained);
    if (!trusted) expect(r['relaxed-simd']).toMatchObject({ nn: false, pretrained: false });
    expect(r.simd).toEqual({ nn: false, pretrained: false, asked: false });  // no relaxed dot product to ask for
  });

  it('an engine without relaxed SIMD never gets them: load() falls back to SIMD128', () => {
    const r = runChild('--no-experimental-wasm-relaxed-simd', 'load');
    expect(r.validates).toEqual({ simd: true, 'relaxed-simd': false, 'relaxed-simd-threads': false });
    expect(r.default.variant).toBe('simd-threads');
    expect(r.default.isa).toBe('simd128');
    expect(r.default.reason).toMatch(/'relaxed-simd-threads' needs WebAssembly relaxed SIMD, which this engine lacks/);
    // Asked for explicitly, the relaxed build gives way to the SIMD128 one of the same threading.
    expect(r.relaxedSimd.variant).toBe('simd');
    expect(r.relaxedSimd.reason).toMatch(/'relaxed-simd' needs WebAssembly relaxed SIMD/);
    expect(r.simd.variant).toBe('simd');
  });

  it('an engine with relaxed SIMD gets them by default, and a SIMD128 build when asked', () => {
    const r = runChild('--experimental-wasm-relaxed-simd', 'load');
    expect(r.validates).toEqual({ simd: true, 'relaxed-simd': true, 'relaxed-simd-threads': true });
    // The marker import is gone: the relaxed modules import exactly what the SIMD128 one does.
    expect(r.imports['relaxed-simd']).toBe(r.imports.simd);
    expect(typeof r.imports.simd).toBe('number');
    expect(r.default).toMatchObject({ variant: 'relaxed-simd-threads', isa: 'relaxed-simd128' });
    expect(r.relaxedSimd).toMatchObject({ variant: 'relaxed-simd', isa: 'relaxed-simd128' });
    expect(r.simd).toMatchObject({ variant: 'simd', isa: 'simd128' });
  });

  it('meet the float64 references within 1e-5 and give the same bits at 1, 2 and 3 threads', () => {
    // 130 queries x 150 keys: several 4-row tiles and 8-key panels, and tails of both.
    const q = randn([1, 4, 130, 32], 1), k = randn([1, 4, 150, 32], 2), v = randn([1, 4, 150, 16], 3);
    const mq = randn([2, 40, 32], 4), mk = randn([2, 50, 32], 5), mv = randn([2, 50, 32], 6);
    const wi = randn([96, 32], 7, 0.3), wo = randn([32, 32], 8, 0.3);
    const plain = (x: { data: Float32Array; shape: number[] }) => ({ data: Array.from(x.data), shape: x.shape });
    const r = runChild('--experimental-wasm-relaxed-simd', 'compute', JSON.stringify([q, k, v, mq, mk, mv, wi, wo].map(plain)));
    const f32 = (b64: string) => {
      const b = Buffer.from(b64, 'base64');
      return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
    };
    const causal = refAttention(q, k, v, { causal: true });
    const dense = refAttention(q, k, v, {});
    const mha = refMultiHead(mq, mk, mv, { numHeads: 4, inProjWeight: wi, outProjWeight: wo }, {});
    for (const name of ['relaxed-t1', 'relaxed-t2', 'relaxed-t3', 'relaxed-simd', 'simd']) {
      expect(maxError(f32(r[name].causal), causal.output.data), `${name} causal`).toBeLessThanOrEqual(TOL);
      expect(maxError(f32(r[name].weights), causal.weights.data), `${name} weights`).toBeLessThanOrEqual(TOL);
      expect(maxError(f32(r[name].dense), dense.output.data), `${name} dense`).toBeLessThanOrEqual(TOL);
      expect(maxError(f32(r[name].mha), mha.output.data), `${name} mha`).toBeLessThanOrEqual(TOL);
    }
    // Bit-identical across thread counts within the relaxed build, with its single-threaded twin,
    // and between a first call (V8's baseline tier) and a call after tier-up.
    for (const name of ['relaxed-t2', 'relaxed-t3', 'relaxed-simd']) {
      for (const out of ['causal', 'weights', 'dense', 'mha']) expect(r[name][out], `${name} ${out}`).toBe(r['relaxed-t1'][out]);
    }
    for (const name of ['relaxed-t1', 'relaxed-t2', 'relaxed-simd', 'simd']) expect(r[name].firstDense, `${name} first call`).toBe(r[name].dense);
  });

  it('attention and linear run on groups of 4 or 6 rows (loader.ts times both): attention meets float64 either way and keeps dense bits, linear keeps every bit', () => {
    // Row counts around the groups' sizes and past a 60-row task; dense, causal and per-row valid lengths.
    const cases = [];
    let seed = 40;
    for (const [B, Sq, Sk, D] of [[2, 1, 9, 8], [1, 5, 33, 16], [2, 6, 70, 64], [1, 7, 64, 32], [2, 12, 100, 24], [1, 61, 130, 64], [1, 130, 130, 32]]) {
      const q = randn([B, Sq, D], seed++), k = randn([B, Sk, D], seed++), v = randn([B, Sk, D], seed++);
      cases.push({ q, k, v, options: {} });
      if (Sq === Sk) cases.push({ q, k, v, options: { causal: true } });
      cases.push({ q, k, v, options: { validLens: Int32Array.from({ length: B * Sq }, (_, i) => 1 + (i * 7) % Sk) } });  // per row
    }
    const plain = (x: { data: Float32Array; shape: number[] }) => ({ data: Array.from(x.data), shape: x.shape });
    // Dense layers: rows around both group sizes and past a task (36..132 rows), widths with and
    // without a partial 8-column panel, with and without bias.
    const layers = [[1, 8, 3, true], [5, 33, 17, false], [7, 64, 40, true], [13, 24, 16, true], [150, 64, 72, true], [6, 16, 9, false]]
      .map(([rows, inF, outF, bias]) => ({ x: randn([rows as number, inF as number], seed++), w: randn([outF as number, inF as number], seed++),
        b: bias ? randn([outF as number], seed++) : null }));
    const input = {
      attention: cases.map(({ q, k, v, options }) => ({
        q: plain(q), k: plain(k), v: plain(v), options: { ...options, ...('validLens' in options ? { validLens: Array.from(options.validLens) } : {}) },
      })),
      linear: layers.map(({ x, w, b }) => ({ x: plain(x), w: plain(w), b: b && plain(b) })),
    };
    const r = runChild('--experimental-wasm-relaxed-simd', 'rows', JSON.stringify(input));
    expect(r.set).toEqual({ 'relaxed-simd': [6, 4], 'relaxed-simd-threads': [6, 4], simd: [4, 4] });
    const f32 = (b64: string) => {
      const b = Buffer.from(b64, 'base64');
      return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
    };
    cases.forEach(({ q, k, v, options }, i) => {
      const ref = refAttention(q, k, v, options);
      for (const rows of [4, 6]) {
        expect(maxError(f32(r[rows][i].output), ref.output.data), `case ${i}, ${rows} rows`).toBeLessThanOrEqual(TOL);
        expect(maxError(f32(r[rows][i].weights), ref.weights.data), `case ${i}, ${rows} rows, weights`).toBeLessThanOrEqual(TOL);
      }
      // Rows that see the same keys get the same bits in either group.
      if (Object.keys(options).length === 0) expect(r[6][i], `case ${i}`).toEqual(r[4][i]);
    });
    layers.forEach(({ x, w, b }, i) => {
      const [rows, inF] = x.shape, outF = w.shape[0];
      const ref = new Float64Array(rows * outF);
      for (let r0 = 0; r0 < rows; r0++) for (let j = 0; j < outF; j++) {
        let acc = b ? b.data[j] : 0;
        for (let c = 0; c < inF; c++) acc += x.data[r0 * inF + c] * w.data[j * inF + c];
        ref[r0 * outF + j] = acc;
      }
      expect(maxError(f32(r.linear4[i]), ref), `layer ${i}`).toBeLessThanOrEqual(TOL);
      expect(r.linear6[i], `layer ${i}: 6 rows against 4`).toBe(r.linear4[i]);
    });
  });
});
