// Two local origins for the trainer's embedding tests: one stands in for a CDN and serves the
// built package (dist/) with CORS `*` and CORP cross-origin; the other stands in for a course site
// and serves generated pages, optionally cross-origin isolated (COOP/COEP). Only 127.0.0.1.
import { createServer, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.wasm': 'application/wasm', '.json': 'application/json', '.atl': 'application/octet-stream',
};

export interface Origin {
  url: string;
  close(): Promise<void>;
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<Origin> {
  const server: Server = createServer(handler);
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise<void>((ok) => server.close(() => ok())) };
}

/** The "CDN": files under root/dist, readable from any origin. */
export function servePackage(root: string): Promise<Origin> {
  const base = resolve(root, 'dist');
  return listen(async (req, res) => {
    const cors = { 'Access-Control-Allow-Origin': '*', 'Cross-Origin-Resource-Policy': 'cross-origin' };
    try {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).replace(/^\/dist\//, '/');
      const file = normalize(join(base, path));
      if (!file.startsWith(base)) throw new Error('outside dist');
      const body = await readFile(file);
      res.writeHead(200, { ...cors, 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404, cors).end('not found');
    }
  });
}

/** The "course site": pages by path; `isolated` pages get COOP/COEP, `headers` are added. */
export function servePages(pages: Record<string, { html: string; isolated?: boolean; headers?: Record<string, string> }>): Promise<Origin> {
  return listen((req, res) => {
    const page = pages[new URL(req.url ?? '/', 'http://x').pathname];
    if (!page) {
      res.writeHead(404).end('not found');
      return;
    }
    const headers: Record<string, string> = { 'Content-Type': TYPES['.html'], ...page.headers };
    if (page.isolated) {
      headers['Cross-Origin-Opener-Policy'] = 'same-origin';
      headers['Cross-Origin-Embedder-Policy'] = 'require-corp';
    }
    res.writeHead(200, headers).end(page.html);
  });
}
