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

export function launchFirefox(): Promise<Browser> {
  return puppeteer.launch({
    browser: 'firefox', executablePath: '/usr/bin/firefox-esr', protocol: 'webDriverBiDi', headless: true,
    extraPrefsFirefox: PREFS,
  });
}

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
