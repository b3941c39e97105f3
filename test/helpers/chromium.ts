import { existsSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Debian's Chromium for the browser tests, driven by playwright-core (a test tool's own browser
 * download cannot work here). `.ci/run` installs it; where it is missing the suites skip.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

/**
 * Where the browser tests write their screenshots: .scratch/screenshots, or CONSOLE_SCREENSHOTS
 * (`CONSOLE_SCREENSHOTS=docs/screenshots` refreshes the ones the README shows).
 */
const SHOTS = resolve(process.env.CONSOLE_SCREENSHOTS ?? '.scratch/screenshots');

/** Headless, with the flags this machine's closed network needs. */
export function launchChromium(): Promise<Browser> {
  mkdirSync(SHOTS, { recursive: true });
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
}

/** A screenshot named `name`.png in SHOTS: the whole page, or only the viewport. */
export function shot(page: Page, name: string, { fullPage = true } = {}): Promise<Buffer> {
  return page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage });
}

/**
 * The visible form fields (and any `also` selectors) without a label or an aria-label, as HTML.
 * Browser-side code is passed as text: the project's TypeScript has no DOM library.
 */
export function unlabelledFields(page: Page, also = ''): Promise<unknown> {
  const selector = `input:not([type=hidden]), select, textarea${also === '' ? '' : `, ${also}`}`;
  return page.evaluate(`[...document.querySelectorAll(${JSON.stringify(selector)})]
      .filter((el) => !(el.id && document.querySelector('label[for="' + el.id + '"]')) && !el.getAttribute('aria-label'))
      .map((el) => el.outerHTML)`);
}
