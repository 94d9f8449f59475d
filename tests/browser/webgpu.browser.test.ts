// The WebGPU backend in Debian's Chromium on SwiftShader: the Node test's comparison cases
// (tests/js/webgpu-cases.ts) run in a localhost page against navigator.gpu. Needs dist/ built.
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GPU_CASES, GPU_TOL } from '../js/webgpu-cases.js';
import type { PageReport } from './webgpu-page.js';
import { startServer } from './webgpu-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const CHROMIUM_ARGS = [
  '--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync',
  '--no-first-run', '--disable-quic',
  '--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-vulkan=swiftshader', '--use-webgpu-adapter=swiftshader',
];

let server: Server;
let browser: Browser;
let report: PageReport;
const pageErrors: string[] = [];

beforeAll(async () => {
  const started = await startServer(root);
  server = started.server;
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  const page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(started.url);
  // Shader compilation on SwiftShader dominates: minutes on a 2-core machine.
  await page.waitForFunction(() => 'attnlabWebGpuReport' in globalThis, null, { timeout: 60_000 });
  report = await page.evaluate(() => (globalThis as unknown as { attnlabWebGpuReport: Promise<PageReport> }).attnlabWebGpuReport);
}, 600_000);

afterAll(async () => {
  await browser?.close();
  server?.close();
});

describe('WebGPU in Chromium against WebAssembly', () => {
  it('runs on the SwiftShader adapter, in a cross-origin isolated page', () => {
    expect(pageErrors).toEqual([]);
    expect(report.backend).toBe('webgpu');
    expect(report.autoBackend).toBe('webgpu');
    expect(report.adapter).toMatchObject({ architecture: 'swiftshader' });
    expect(report.crossOriginIsolated).toBe(true);
    expect(report.wasmVariant).toBe('relaxed-simd-threads');  // Chromium has relaxed SIMD: load() picks its fastest build
  });

  it.each(GPU_CASES.map((c) => c.name))('%s', (name) => {
    const r = report.comparisons.find((c) => c.name === name);
    expect(r).toBeDefined();
    expect(r).not.toHaveProperty('error');
    if (!r || 'error' in r) return;
    expect(r.shapesMatch).toBe(true);
    expect(r.maxAbsError).toBeLessThanOrEqual(GPU_TOL);
    expect(r.zeroMismatches).toBe(0);
  });
});
