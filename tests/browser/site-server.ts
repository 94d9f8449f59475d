// The built demo site for the browser tests of its pages: `vite build` into a temporary folder
// (the work tree is left as it was), served by static-server.ts, and Chromium to visit it.
import { cp, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, inject } from 'vitest';
import { launch } from './helpers';
import { serveStatic, type StaticServer } from './static-server';

/** The demo site's Vite config (for build, preview and the dev server). */
export const siteConfig = fileURLToPath(new URL('../../web/demo/vite.config.ts', import.meta.url));

/**
 * Builds the site into a new temporary folder, attnlab-`name`-…, and returns its path; `define`
 * replaces constants as Vite's own option does. Without `define`, the run's first build is kept
 * (global-setup.ts) and later calls get a copy of it: the same files, in a folder of their own.
 */
export async function buildSite(name: string, define?: Record<string, string>): Promise<string> {
  const outDir = await mkdtemp(join(tmpdir(), `attnlab-${name}-`));
  const cache = define ? undefined : inject('siteBuildCache');  // unset under another config
  const kept = cache && join(cache, 'site');
  try {
    if (kept && (await stat(kept).catch(() => null))) {
      await cp(kept, outDir, { recursive: true });
    } else {
      await build({ configFile: siteConfig, logLevel: 'warn', ...(define && { define }), build: { outDir } });
      if (kept) await keep(outDir, kept);
    }
  } catch (e) {
    await rm(outDir, { recursive: true, force: true });
    throw e;
  }
  return outDir;
}

/** Copies a finished build to `kept`, whole or not at all (a rename), for buildSite's later calls. */
async function keep(outDir: string, kept: string): Promise<void> {
  const part = `${kept}-${process.pid}`;
  await cp(outDir, part, { recursive: true });
  // Another file's build got there first (files in parallel): theirs is as good.
  await rename(part, kept).catch(() => rm(part, { recursive: true, force: true }));
}

export interface Site {
  browser: Browser;
  /** The build; close() removes it. */
  outDir: string;
  /** The site served cross-origin isolated (COOP and COEP, as deployed): threads. */
  isolated: StaticServer;
  /** The site served without those headers: one thread. */
  plain: StaticServer;
  /** Closes the browser and the servers, and removes the build. */
  close(): Promise<void>;
}

/**
 * Registers the test file's hooks: before its tests the site is built (see buildSite), then
 * `prepare`d (a test's own files added to the build), served both ways, and Chromium launched;
 * after them all that is closed and removed. Call at the top level; the object returned is filled
 * in before the first test.
 */
export function useSite(name: string, prepare?: (outDir: string) => Promise<unknown>): Site {
  const site = {} as Site;
  beforeAll(async () => {
    Object.assign(site, await serveSite(name, prepare));
  }, 180_000);
  afterAll(() => site.close?.());
  return site;
}

/** useSite's setup; on a failure what was started is closed again. */
async function serveSite(name: string, prepare?: (outDir: string) => Promise<unknown>): Promise<Site> {
  const outDir = await buildSite(name);
  const started = await Promise.allSettled([prepare?.(outDir), launch(), serveStatic(outDir, true), serveStatic(outDir, false)]);
  const [, browser, isolated, plain] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined)) as [unknown, Browser?, StaticServer?, StaticServer?];
  const close = async () => {
    await browser?.close();
    await Promise.all([isolated?.close(), plain?.close()]);
    await rm(outDir, { recursive: true, force: true });
  };
  const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await close();
    throw failed.reason;
  }
  return { browser: browser!, outDir, isolated: isolated!, plain: plain!, close };
}
