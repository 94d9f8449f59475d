// Bytes of each WebAssembly build's files, raw and gzipped as the site's budget test measures
// them (zlib's gzipSync at its default level).
//   node tests/bench/wasm_sizes.mjs AFTER_DIR            one column pair
//   node tests/bench/wasm_sizes.mjs BEFORE_DIR AFTER_DIR  before, after and the change
// A file present on one side only (the classic .js glue the single-glue build no longer ships)
// shows as '-' on the other.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

const dirs = process.argv.slice(2);
if (dirs.length < 1 || dirs.length > 2) throw new Error('usage: wasm_sizes.mjs [BEFORE_DIR] AFTER_DIR');
const sizes = dirs.map((d) => new Map(readdirSync(d).filter((f) => /\.(wasm|m?js)$/.test(f)).map((f) => {
  const b = readFileSync(join(d, f));
  return [f, { raw: b.length, gz: gzipSync(b).length }];
})));
const names = [...new Set(sizes.flatMap((m) => [...m.keys()]))].sort();
const cell = (s) => (s ? `${s.raw} | ${s.gz}` : '- | -');
const pct = (a, b) => (a && b ? `${(((b - a) / a) * 100).toFixed(1)}%` : '-');
if (dirs.length === 1) {
  console.log('| file | bytes | gzip bytes |\n|---|---|---|');
  for (const n of names) console.log(`| ${n} | ${cell(sizes[0].get(n))} |`);
} else {
  console.log('| file | before bytes | before gzip | after bytes | after gzip | change (raw) | change (gzip) |\n|---|---|---|---|---|---|---|');
  for (const n of names) {
    const [a, b] = sizes.map((m) => m.get(n));
    console.log(`| ${n} | ${cell(a)} | ${cell(b)} | ${pct(a?.raw, b?.raw)} | ${pct(a?.gz, b?.gz)} |`);
  }
}
const total = (m) => [...m.values()].reduce((t, s) => ({ raw: t.raw + s.raw, gz: t.gz + s.gz }), { raw: 0, gz: 0 });
console.log(`| all | ${sizes.map((m) => cell(total(m))).join(' | ')} |${dirs.length === 2 ? ` ${pct(total(sizes[0]).raw, total(sizes[1]).raw)} | ${pct(total(sizes[0]).gz, total(sizes[1]).gz)} |` : ''}`);
