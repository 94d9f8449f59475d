// The demo site: `vite --config web/demo/vite.config.ts` (dev), `vite build` / `vite preview`.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { CONTENT_SECURITY_POLICY } from './csp';
import { FIRST_PAINT_FILE, staticHeader } from './site/static-header';

const demoRoot = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

// SharedArrayBuffer (the 'simd-threads' build) exists only on cross-origin isolated pages.
// The other two are what a framed site needs (the hosting requirement the README states): a frame
// sandboxed without allow-same-origin has an opaque origin, so even the site's own module scripts,
// stylesheet and .wasm are cross-origin to it and load only with CORS; and a cross-origin isolated
// course page may frame or load only what says Cross-Origin-Resource-Policy: cross-origin.
const headers = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Access-Control-Allow-Origin': '*',
  'Cross-Origin-Resource-Policy': 'cross-origin',
};

// Every page gets the policy as its first <head> element, before anything it governs.
const csp: Plugin = {
  name: 'attnlab-csp',
  transformIndexHtml: () => [
    { tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: CONTENT_SECURITY_POLICY }, injectTo: 'head-prepend' },
  ],
};

// The offline service worker (sw.js): its template with this build's file lists filled in. SHELL,
// precached on install, is what the pages render with: every page (by its clean path too: './'
// is index.html), the script at the top of their <body> (site/static-header.ts), the
// stylesheet, the scripts each page imports statically and the ones they import as they start
// (the library, imported so the page paints first). ON_DEMAND is the rest, content-hashed, kept
// as first used: the WebAssembly builds and their loaders, Workers, chunks imported on demand and
// the tiny checkpoints. Models (.atl) are in neither: the translation and heads pages keep the
// ones they download (site/models.ts).
const serviceWorker: Plugin = {
  name: 'attnlab-service-worker',
  apply: 'build',
  // writeBundle, not generateBundle: the pages join the bundle late, from Vite's own HTML plugin.
  writeBundle(options, bundle) {
    const files = Object.keys(bundle).filter((f) => !f.endsWith('.atl') && !f.endsWith('.map')).sort();
    const shell = new Set([...files.filter((f) => f.endsWith('.html')), FIRST_PAINT_FILE]);
    const add = (f: string) => {
      const chunk = bundle[f];
      if (shell.has(f) || chunk?.type !== 'chunk') return;
      shell.add(f);
      for (const css of chunk.viteMetadata?.importedCss ?? []) shell.add(css);
      chunk.imports.forEach(add);
      chunk.dynamicImports.forEach(add);
    };
    for (const [f, chunk] of Object.entries(bundle)) if (chunk.type === 'chunk' && chunk.isEntry) add(f);
    const version = createHash('sha256').update(files.join('\n')).digest('hex').slice(0, 12);
    const source = readFileSync(resolve(demoRoot, 'sw.js'), 'utf8')
      .replace('__VERSION__', JSON.stringify(version))
      .replace('__SHELL__', JSON.stringify(['./', ...[...shell].sort().map((f) => `./${f}`)]))
      .replace('__ON_DEMAND__', JSON.stringify(files.filter((f) => !shell.has(f)).map((f) => `./${f}`)));
    writeFileSync(resolve(options.dir!, 'sw.js'), source);
  },
};

// The package version the embed page's CDN URLs pin (attnlab@x.y.z).
const { version } = JSON.parse(readFileSync(resolve(repoRoot, 'package.json'), 'utf8')) as { version: string };

const port = Number(process.env.PORT ?? 5173);
const host = process.env.HOST ?? '127.0.0.1';

export default defineConfig({
  root: demoRoot,
  // Relative asset URLs: the built site works from any sub-path, not only from /.
  base: './',
  // staticHeader before csp: see static-header.ts.
  plugins: [staticHeader(), csp, serviceWorker],
  define: { __ATTNLAB_VERSION__: JSON.stringify(version) },
  // `import … from 'attnlab'` needs no alias: the demo lives inside the package, and Vite (like
  // Node) resolves a package's own name through its package.json "exports" (self-reference).
  // attnlab finds its .wasm/.mjs/.worker.js with new URL('./wasm/…', import.meta.url):
  // pre-bundling would move the module away from those files.
  optimizeDeps: { exclude: ['attnlab', 'attnlab-models'] },
  // cors: false leaves Access-Control-Allow-Origin to `headers` (Vite's own CORS handling would
  // answer only localhost origins, never a sandboxed frame's 'null').
  server: { host, port, strictPort: true, headers, cors: false, fs: { allow: [repoRoot] } },
  preview: { host, port, strictPort: true, headers, cors: false },
  // The pages' Workers import attnlab, whose builds load with dynamic import(): ES workers.
  worker: { format: 'es' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Every page of the site (web/demo/*.html) is an entry.
    rollupOptions: {
      input: Object.fromEntries(
        readdirSync(demoRoot).filter((f) => f.endsWith('.html')).map((f) => [f.replace(/\.html$/, ''), resolve(demoRoot, f)]),
      ),
      // The library, which the pages import as they start: named for what it is, not 'dist'.
      output: { chunkFileNames: (c) => (c.facadeModuleId === resolve(repoRoot, 'dist/index.js') ? 'assets/attnlab-[hash].js' : 'assets/[name]-[hash].js') },
    },
  },
});
