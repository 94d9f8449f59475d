// Debian's Chromium under playwright-core, as every browser test launches it.
import { chromium, type Browser } from 'playwright-core';

// No sandbox: CI runs as root. The rest keeps Chromium from reaching out to the network, which
// this machine's closed network refuses (many times a second otherwise).
const BASE_ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-component-update',
  '--disable-sync', '--no-first-run', '--disable-quic'];

export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({ executablePath: '/usr/bin/chromium', args: [...BASE_ARGS, ...extraArgs] });
}
