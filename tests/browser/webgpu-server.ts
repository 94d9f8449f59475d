// A static server for the WebGPU browser test: the built package (dist/), the comparison cases of
// tests/js (TypeScript, transpiled per request) and a page that runs them. Cross-origin isolated
// (COOP/COEP), so the page gets the threaded WebAssembly build, as a real deployment would.
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import ts from 'typescript';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
};

// `attnlab` resolves to the built package, as a bundler would resolve the npm import.
const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>attnlab WebGPU comparison</title>
<script type="importmap">{ "imports": { "attnlab": "/dist/index.js" } }</script>
<script type="module" src="/tests/browser/webgpu-page.js"></script>
`;

/** Resolves a request path to a file under the repo, or null outside the served folders. */
function resolveFile(root: string, path: string): { file: string; transpile: boolean } | null {
  const clean = normalize(decodeURIComponent(path)).replace(/^(\.\.[/\\])+/, '');
  if (clean.startsWith('/dist/')) return { file: join(root, clean), transpile: false };
  // Test modules are TypeScript; the page asks for them by their .js names, as Node's ESM does.
  if ((clean.startsWith('/tests/js/') || clean.startsWith('/tests/browser/')) && clean.endsWith('.js')) {
    return { file: join(root, clean.replace(/\.js$/, '.ts')), transpile: true };
  }
  return null;
}

export async function startServer(root: string): Promise<{ url: string; server: Server }> {
  const server = createServer(async (req, res) => {
    const headers = {
      'Cross-Origin-Opener-Policy': 'same-origin',
      'Cross-Origin-Embedder-Policy': 'require-corp',
      'Cache-Control': 'no-store',
    };
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/') {
      res.writeHead(200, { ...headers, 'Content-Type': TYPES['.html'] });
      res.end(PAGE);
      return;
    }
    const target = resolveFile(root, path);
    try {
      if (!target) throw new Error('not served');
      let body: string | Buffer = await readFile(target.file);
      if (target.transpile) {
        body = ts.transpileModule(body.toString('utf8'), {
          compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ES2022 },
        }).outputText;
      }
      res.writeHead(200, { ...headers, 'Content-Type': TYPES[target.transpile ? '.js' : extname(target.file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404, headers);
      res.end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // localhost (not 127.0.0.1) in the URL: a secure context, which WebGPU requires.
  return { url: `http://localhost:${(server.address() as AddressInfo).port}/`, server };
}
