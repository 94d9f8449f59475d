// Once per run of the browser tests: a folder in which the first test file that builds the demo
// site leaves a copy of the build for the others (site-server.ts's buildSite), so a dozen files
// copy it instead of running the same `vite build` again. Removed when the run ends.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder for the shared site build (site-server.ts). */
    siteBuildCache: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'attnlab-site-cache-'));
  project.provide('siteBuildCache', dir);
  return () => rm(dir, { recursive: true, force: true });
}
