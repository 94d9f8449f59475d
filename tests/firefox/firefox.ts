// Debian's Firefox ESR under puppeteer-core (WebDriver BiDi), as every Firefox test launches it.
import puppeteer, { type Browser } from 'puppeteer-core';
import { fileURLToPath } from 'node:url';

// This machine has no network beyond 127.0.0.1: puppeteer's own prefs already turn off updates,
// telemetry and safe browsing; these stop the rest of Firefox's background fetches.
const PREFS = {
  'messaging-system.rsexperimentloader.enabled': false,
  'network.captive-portal-service.enabled': false,
  'network.connectivity-service.enabled': false,
  'browser.region.network.url': '',
  'extensions.systemAddon.update.enabled': false,
};

// Pages see prefers-color-scheme: dark. Puppeteer's emulateMediaFeatures is CDP-only (it throws
// over BiDi), so Firefox is told at launch, as a user's dark desktop would.
const DARK = {
  'ui.systemUsesDarkTheme': 1,
  'layout.css.prefers-color-scheme.content-override': 0,
};

export function launchFirefox(options: { dark?: boolean } = {}): Promise<Browser> {
  return puppeteer.launch({
    browser: 'firefox', executablePath: '/usr/bin/firefox-esr', protocol: 'webDriverBiDi', headless: true,
    extraPrefsFirefox: { ...PREFS, ...(options.dark ? DARK : {}) },
  });
}

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
