import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's `chromium` (`.ci/run` installs it), driven by playwright-core: no browser download.
 * `CHROMIUM_PATH` points at another build.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const inCi = process.env.CI !== undefined && process.env.CI !== '';

/**
 * Why the browser tests skip, or undefined when they run: only when Chromium is missing outside
 * CI. In CI a missing Chromium fails the tests (the launch names the path) instead of skipping.
 */
export function chromiumSkipReason(): string | undefined {
  if (existsSync(CHROMIUM_PATH) || inCi) return undefined;
  const reason = `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`;
  console.warn(`skipped: the console's browser tests need a browser: ${reason}`);
  return reason;
}

/** Headless Chromium with a fresh profile, nothing fetched from the network on its own. */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`no Chromium at ${CHROMIUM_PATH}: CI installs Debian's chromium (.ci/run)`);
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // playwright-core adds --no-sandbox (root in CI) and a fresh temporary --user-data-dir.
    args: [
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
