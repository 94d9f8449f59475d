// The site's Content-Security-Policy, put into every page as a <meta> tag at build (and dev) time
// so it holds on any static host, including ones that cannot set headers.
//   script-src: only the site's own files; 'wasm-unsafe-eval' lets WebAssembly compile, and
//     nothing else may (no eval, no inline scripts, no inline event handlers).
//   style-src 'unsafe-inline': where an engine lacks constructable stylesheets (Safari before
//     16.4), the widgets style their shadow roots with <style> elements (components/base.ts).
//   worker-src blob:: Emscripten may start its pthread workers from a blob URL.
//   connect-src: the Real models page fetches checkpoints a learner asks for from Hugging Face:
//     huggingface.co answers resolve/main/ URLs and redirects large files to its CDN hosts
//     (cdn-lfs.huggingface.co, cdn-lfs-us-1.hf.co, cas-bridge.xethub.hf.co, …).
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "connect-src 'self' https://huggingface.co https://*.huggingface.co https://*.hf.co",
  "worker-src 'self' blob:",
  "frame-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'none'",
].join('; ');
