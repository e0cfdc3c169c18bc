/**
 * A real headless Chromium for tests: Debian's `chromium` (provisioned by the test set-up), driven by
 * playwright-core through its executable path. Nothing is downloaded.
 */
import { chromium, type Browser } from 'playwright-core';
import { inject } from 'vitest';

/** Flags that keep Chromium off the network (this machine has none) and working as root in a container. */
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Starts Chromium headless, with a fresh profile (playwright-core makes one per launch). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: inject('chromiumBin'), headless: true, args: ARGS, timeout: 60_000 });
}
