// A minimal static file server for browser tests: serves one directory, with or without the
// COOP/COEP headers that make a page cross-origin isolated. Only ever listens on 127.0.0.1.
// Options make it stand in for a CDN (CORS and CORP headers) or a course site (pages given as
// strings, reached as http://localhost:port: another origin than 127.0.0.1's, still secure).
import { createServer, type Server } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript',
  '.css': 'text/css', '.wasm': 'application/wasm', '.json': 'application/json', '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

export interface StaticServer {
  url: string;
  close(): Promise<void>;
}

export interface ServeOptions {
  /** Sent with every response (e.g. CORS and CORP for a CDN). */
  headers?: Record<string, string>;
  /** Pages served from memory by path ('/course.html'), before the directory. */
  pages?: Record<string, string>;
  /** The host name in `url`: '127.0.0.1' (default) or 'localhost', a different origin. */
  host?: '127.0.0.1' | 'localhost';
}

export async function serveStatic(root: string, isolated: boolean, options: ServeOptions = {}): Promise<StaticServer> {
  const base = resolve(root);
  const server: Server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
      const page = options.pages?.[path];
      if (page !== undefined) {
        res.writeHead(200, { ...isolation(isolated), ...options.headers, 'Content-Type': TYPES['.html'] }).end(page);
        return;
      }
      let file = normalize(join(base, path));
      if (!file.startsWith(base)) {
        res.writeHead(403).end();
        return;
      }
      if ((await stat(file).catch(() => null))?.isDirectory()) file = join(file, 'index.html');
      const body = await readFile(file);
      res.writeHead(200, { ...isolation(isolated), ...options.headers, 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404, options.headers).end('not found');
    }
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `http://${options.host ?? '127.0.0.1'}:${port}/`,
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}

function isolation(isolated: boolean): Record<string, string> {
  return isolated ? { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } : {};
}
