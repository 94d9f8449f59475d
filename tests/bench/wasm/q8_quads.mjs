// The int8 product's two kernels as they run in the engine (issue 19): gemm_q8_8 (int8 weights,
// 14-bit activations, i32x4.dot_i16x8_s + add on k-pairs; the weights widened once per pass) and
// gemm_q8_quad (relaxed SIMD's i32x4.relaxed_dot_i8x16_i7x16_add_s on k-quads, the activations
// split into two 7-bit bytes, 4 accumulators a row). relaxed_dot.mjs times each instruction alone
// in accumulator chains; this times the kernels' loops over whole tiles (K = 256; 64 and 1000
// tiles: 128 KB in cache, 2 MB streamed), 1-5 rows, checks both against exact sums, and says where
// the engine gets the relaxed dot product wrong. Built with binaryen (clang 14 cannot emit the
// final relaxed opcodes), run in Node 20 (--experimental-wasm-relaxed-simd) and headless Chromium.
//   node --experimental-wasm-relaxed-simd tests/bench/wasm/q8_quads.mjs   # prints a markdown table
import binaryen from 'binaryen';
import { inNodeAndChromium } from './engines.mjs';

const zero = '(v128.const i32x4 0 0 0 0)';
const repeat = (n, f) => [...Array(n).keys()].map(f).join('\n');
// pairs<R>(w, x, ldx bytes, kp, tiles, out): simd128.hpp's gemm_q8_8 loop over `tiles` tiles.
const pairs = (R) => `(func (export "pairs${R}") (param $w i32) (param $x i32) (param $ldx i32) (param $kp i32) (param $tiles i32) (param $out i32)
  (local $t i32) (local $p i32) (local $xp i32) (local $wv v128) (local $lo v128) (local $hi v128) (local $xs v128)
  ${repeat(R, (r) => `(local $a${r} v128) (local $b${r} v128)`)}
  (block $done (loop $tl (br_if $done (i32.ge_u (local.get $t) (local.get $tiles)))
    ${repeat(R, (r) => `(local.set $a${r} ${zero}) (local.set $b${r} ${zero})`)}
    (local.set $p (i32.const 0)) (local.set $xp (local.get $x))
    (block $pd (loop $pl (br_if $pd (i32.ge_u (local.get $p) (local.get $kp)))
      (local.set $wv (v128.load (local.get $w)))
      (local.set $lo (i16x8.extend_low_i8x16_s (local.get $wv))) (local.set $hi (i16x8.extend_high_i8x16_s (local.get $wv)))
      ${repeat(R, (r) => `(local.set $xs (v128.load32_splat (i32.add (local.get $xp) (i32.mul (local.get $ldx) (i32.const ${r})))))
      (local.set $a${r} (i32x4.add (local.get $a${r}) (i32x4.dot_i16x8_s (local.get $xs) (local.get $lo))))
      (local.set $b${r} (i32x4.add (local.get $b${r}) (i32x4.dot_i16x8_s (local.get $xs) (local.get $hi))))`)}
      (local.set $w (i32.add (local.get $w) (i32.const 16))) (local.set $xp (i32.add (local.get $xp) (i32.const 4)))
      (local.set $p (i32.add (local.get $p) (i32.const 1))) (br $pl)))
    ${repeat(R, (r) => `(v128.store offset=${32 * r} (local.get $out) (local.get $a${r})) (v128.store offset=${32 * r + 16} (local.get $out) (local.get $b${r}))`)}
    (local.set $t (i32.add (local.get $t) (i32.const 1))) (br $tl))))`;
// quads<R>(w, hi, lo, ldx bytes, kq, tiles, out): simd128.hpp's gemm_q8_quad loop (without the
// weight-sum correction, which the check applies).
const quads = (R) => `(func (export "quads${R}") (param $w i32) (param $hi i32) (param $lo i32) (param $ldx i32) (param $kq i32) (param $tiles i32) (param $out i32)
  (local $t i32) (local $q i32) (local $hp i32) (local $lp i32) (local $w0 v128) (local $w1 v128) (local $xh v128) (local $xl v128)
  ${repeat(R, (r) => `(local $h0${r} v128) (local $h1${r} v128) (local $l0${r} v128) (local $l1${r} v128)`)}
  (block $done (loop $tl (br_if $done (i32.ge_u (local.get $t) (local.get $tiles)))
    ${repeat(R, (r) => `(local.set $h0${r} ${zero}) (local.set $h1${r} ${zero}) (local.set $l0${r} ${zero}) (local.set $l1${r} ${zero})`)}
    (local.set $q (i32.const 0)) (local.set $hp (local.get $hi)) (local.set $lp (local.get $lo))
    (block $qd (loop $ql (br_if $qd (i32.ge_u (local.get $q) (local.get $kq)))
      (local.set $w0 (v128.load (local.get $w))) (local.set $w1 (v128.load offset=16 (local.get $w)))
      ${repeat(R, (r) => `(local.set $xh (v128.load32_splat (i32.add (local.get $hp) (i32.mul (local.get $ldx) (i32.const ${r})))))
      (local.set $xl (v128.load32_splat (i32.add (local.get $lp) (i32.mul (local.get $ldx) (i32.const ${r})))))
      (local.set $h0${r} (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $w0) (local.get $xh) (local.get $h0${r})))
      (local.set $h1${r} (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $w1) (local.get $xh) (local.get $h1${r})))
      (local.set $l0${r} (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $w0) (local.get $xl) (local.get $l0${r})))
      (local.set $l1${r} (i32x4.relaxed_dot_i8x16_i7x16_add_s (local.get $w1) (local.get $xl) (local.get $l1${r})))`)}
      (local.set $w (i32.add (local.get $w) (i32.const 32)))
      (local.set $hp (i32.add (local.get $hp) (i32.const 4))) (local.set $lp (i32.add (local.get $lp) (i32.const 4)))
      (local.set $q (i32.add (local.get $q) (i32.const 1))) (br $ql)))
    ${repeat(R, (r) => `(v128.store offset=${32 * r} (local.get $out) (i32x4.add (i32x4.shl (local.get $h0${r}) (i32.const 7)) (local.get $l0${r})))
    (v128.store offset=${32 * r + 16} (local.get $out) (i32x4.add (i32x4.shl (local.get $h1${r}) (i32.const 7)) (local.get $l1${r})))`)}
    (local.set $t (i32.add (local.get $t) (i32.const 1))) (br $tl))))`;
const m = binaryen.parseText(`(module (memory (export "mem") 512) ${[1, 2, 3, 4, 5].map(pairs).join('\n')} ${[1, 2, 3, 4].map(quads).join('\n')})`);
m.setFeatures(binaryen.Features.MVP | binaryen.Features.SIMD128 | binaryen.Features.RelaxedSIMD);
if (!m.validate()) throw new Error('q8_quads: the module does not validate');
binaryen.setOptimizeLevel(2);
m.optimize();
const bytes = [...m.emitBinary()];

// Per shape: each kernel's GMAC/s (best median), and whether its results were exact.
async function measure(bytes) {
  const { instance } = await WebAssembly.instantiate(new Uint8Array(bytes));
  const e = instance.exports, mem = new Uint8Array(e.mem.buffer), i32 = new Int32Array(e.mem.buffer);
  const K = 256, maxR = 5, rows = [];
  let seed = 1;
  const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296;
  for (const tiles of [64, 1000]) {
    const V = 8 * tiles, W = Int8Array.from({ length: V * K }, () => Math.floor(rnd() * 255) - 127);
    const X = Int16Array.from({ length: maxR * K }, () => Math.floor(rnd() * 16383) - 8191);
    const wA = 0, wB = V * K + 64, x16 = wB + V * K + 64, xh = x16 + 2 * maxR * K + 64, xl = xh + maxR * K + 64, o = xl + maxR * K + 64;
    for (let t = 0; t < tiles; t++) for (let k = 0; k < K; k++) for (let j = 0; j < 8; j++) {
      const w = W[(8 * t + j) * K + k] & 255;
      mem[wA + t * 8 * K + 16 * (k >> 1) + 2 * j + (k & 1)] = w;
      mem[wB + t * 8 * K + 32 * (k >> 2) + 16 * (j >> 2) + 4 * (j & 3) + (k & 3)] = w;
    }
    const dv = new DataView(e.mem.buffer);
    for (let i = 0; i < maxR * K; i++) {
      dv.setInt16(x16 + 2 * i, X[i], true);
      mem[xh + i] = (X[i] + 8192) >> 7;
      mem[xl + i] = (X[i] + 8192) & 127;
    }
    const exact = (R, quads) => {
      if (quads) e[`quads${R}`](wB, xh, xl, K, K / 4, 1, o);
      else e[`pairs${R}`](wA, x16, 2 * K, K / 2, 1, o);
      for (let r = 0; r < R; r++) for (let j = 0; j < 8; j++) {
        let want = 0, sum = 0;
        for (let k = 0; k < K; k++) want += W[j * K + k] * X[r * K + k], sum += W[j * K + k];
        if ((i32[(o >> 2) + 8 * r + j] - (quads ? 8192 * sum : 0) | 0) !== want) return false;
      }
      return true;
    };
    const reps = Math.max(1, Math.round(4e8 / (V * K * 5)));
    const cases = [1, 2, 3, 4, 5].map((R) => ({ name: 'pairs', R, f: () => e[`pairs${R}`](wA, x16, 2 * K, K / 2, tiles, o) }))
      .concat([1, 2, 3, 4].map((R) => ({ name: 'quads', R, f: () => e[`quads${R}`](wB, xh, xl, K, K / 4, tiles, o) })));
    for (const c of cases) { c.exact = exact(c.R, c.name === 'quads'); c.best = Infinity; }
    for (let round = 0; round < 5; round++) for (const c of cases) {
      const ts = [];
      for (let s = 0; s < 5; s++) { const t0 = performance.now(); for (let i = 0; i < reps; i++) c.f(); ts.push((performance.now() - t0) / reps); }
      c.best = Math.min(c.best, ts.sort((a, b) => a - b)[2]);
    }
    for (const c of cases) rows.push({ bytes: V * K, kernel: c.name, R: c.R, gmacs: (c.R * V * K) / c.best / 1e6, exact: c.exact });
  }
  return rows;
}
const { node, chrome, machine } = await inNodeAndChromium(measure, bytes);
console.log(`# int8 product kernels: gemm_q8_8 (pairs) against gemm_q8_quad (relaxed dot), ${new Date().toISOString().slice(0, 10)}\n`);
console.log(machine);
console.log('- K = 256, 8-row tiles; best of 5 rounds (median of 5 timed runs each); GMAC/s = rows x weights / time; "wrong": the results were not the exact sums\n');
console.log('| engine | weights | pairs, rows 1 / 2 / 3 / 4 / 5 | quads, rows 1 / 2 / 3 / 4 |');
console.log('|---|---|---|---|');
for (const [name, rs] of [['Node ' + process.version + ' (flag)', node], ['Chromium', chrome]])
  for (const size of [...new Set(rs.map((r) => r.bytes))]) {
    const cell = (k) => rs.filter((r) => r.bytes === size && r.kernel === k).map((r) => r.exact ? r.gmacs.toFixed(1) : `${r.gmacs.toFixed(1)} (wrong)`).join(' / ');
    console.log(`| ${name} | ${size >> 10} KB | ${cell('pairs')} | ${cell('quads')} |`);
  }
