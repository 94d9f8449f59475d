// What the WebAssembly microbenchmarks here share: `measure(bytes)` (self-contained, so it can be
// sent to a page as text) run in this Node process, with whatever flags it was started with, and
// in headless Chromium (Debian's, under playwright-core); and their reports' machine line.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { chromium } from 'playwright-core';

export async function inNodeAndChromium(measure, bytes) {
  const node = await measure(bytes);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
  });
  try {
    const page = await browser.newPage();
    const ua = await page.evaluate(() => navigator.userAgent);
    const chrome = await page.evaluate(`(${measure.toString()})(${JSON.stringify(bytes)})`);
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD']).toString().trim();
    const machine = `- machine: ${os.cpus()[0].model.trim()}, ${os.cpus().length} cores; node ${process.version}; ` +
      `${ua.match(/HeadlessChrome\/[\d.]+/)?.[0]}; attnlab at ${commit}`;
    return { node, chrome, machine };
  } finally {
    await browser.close();
  }
}
