// dist/components/*.js import the API by its package name ('attnlab'), which a plain page
// without a bundler or an import map cannot resolve. Point those imports at the package's own
// entry (../index.js) instead: the same module a bundler would pick through "exports".
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const dir = new URL('../dist/components/', import.meta.url);
let changed = 0;
for (const name of await readdir(dir)) {
  if (!/\.(js|d\.ts)$/.test(name)) continue;
  const file = join(dir.pathname, name);
  const text = await readFile(file, 'utf8');
  const out = text.replace(/(from\s+|import\s*\(\s*)(['"])attnlab\2/g, '$1$2../index.js$2');
  if (out !== text) {
    await writeFile(file, out);
    changed++;
  }
}
console.log(`fix-component-imports: ${changed} files now import ../index.js`);
