// npm's prepack: refuses to pack a checkout whose package.json points at files that are not
// there (an unbuilt checkout packed a 4-file tarball without dist/, and npm said nothing).
// Usage: node scripts/check-pack.mjs [path/to/package.json] (default: the package.json in the
// working directory, which is where npm runs it).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const pkgPath = resolve(process.argv[2] ?? 'package.json');
const dir = dirname(pkgPath);
const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));

// Every path in an "exports" or "typesVersions" value: strings, arrays and condition objects.
const leaves = (v) => typeof v === 'string' ? [v] : Array.isArray(v) ? v.flatMap(leaves) : v && typeof v === 'object' ? Object.values(v).flatMap(leaves) : [];
const targets = [
  ...[pkg.main, pkg.types, pkg.typings].filter((t) => typeof t === 'string'),
  ...leaves(pkg.exports),
  ...leaves(pkg.typesVersions),
  ...(pkg.files ?? []),
];
// A pattern ('dist/*.js') needs the directory before its first '*'; anything else must exist as written.
const onDisk = (t) => resolve(dir, t.includes('*') ? t.slice(0, t.lastIndexOf('/', t.indexOf('*')) + 1) : t);
const missing = [...new Set(targets)].filter((t) => !existsSync(onDisk(t)));

// What builds the missing files: no dist/ at all needs everything (the WebAssembly builds too).
const noDist = !existsSync(resolve(dir, 'dist'));
const builder = (t) => {
  const p = t.replace(/^\.\//, '');
  if (!p.startsWith('dist')) return null;
  if (noDist) return 'npm run build';
  if (p.startsWith('dist/components/')) return 'npm run build:components';
  if (p.startsWith('dist/wasm/')) return 'bash scripts/build-wasm.sh';
  return 'npx tsc -p tsconfig.json';
};

if (missing.length) {
  const commands = [...new Set(missing.map(builder).filter(Boolean))];
  const one = missing.length === 1;
  console.error(`check-pack: ${pkgPath} points at ${one ? 'a file' : 'files'} that ${one ? 'is' : 'are'} not there: ${missing.join(', ')}; ` +
    (commands.length ? `build dist/ with ${commands.join(', then ')}, and pack again` : 'no build step makes them'));
  process.exit(1);
}
