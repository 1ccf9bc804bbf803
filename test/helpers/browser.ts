// Real Chromium (Debian's /usr/bin/chromium, or CHROMIUM_PATH) driven by playwright-core against
// a real port: the test file's app (useTestApp, on PGlite or PostgreSQL as usual) listening on
// 127.0.0.1. Without Chromium the browser tests are skipped with a message, except under CI, where
// a missing browser fails them (.ci/run installs it).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { App } from '../../src/app.ts';
import type { TestAppOptions } from './harness.ts';
import { type TestEnv, useTestApp } from './setup.ts';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const present = existsSync(CHROMIUM_PATH);
const inCi = Boolean(process.env.CI) && process.env.CI !== 'false';

if (!present && inCi) {
  throw new Error(
    `No Chromium at ${CHROMIUM_PATH}: the browser tests need it under CI (apt-get install -y chromium, or set CHROMIUM_PATH).`,
  );
}
if (!present) {
  process.stderr.write(
    `\n*** skipping the browser tests: no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium, or set CHROMIUM_PATH)\n\n`,
  );
}

/** describe, or describe.skip when there is no Chromium to drive (never under CI). */
export const describeBrowser = present ? describe : describe.skip;

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

export interface BrowserEnv extends TestEnv {
  browser: Browser;
  /** http://127.0.0.1:<port> */
  base: string;
}

/**
 * The file's app on a real port and one browser for the file. Call inside describeBrowser's
 * callback or at the top of a file whose tests all use it.
 */
export function useBrowser(options: TestAppOptions & { bootstrap?: boolean } = {}): BrowserEnv {
  const env = useTestApp(options) as BrowserEnv;
  beforeAll(async () => {
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    env.base = baseOf(env.app);
    env.browser = await chromium.launch({
      executablePath: CHROMIUM_PATH,
      headless: true,
      // Root (CI containers) cannot use Chromium's sandbox; /dev/shm is small in containers.
      args: [
        ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
        '--disable-dev-shm-usage',
        '--disable-gpu',
      ],
    });
  });
  afterAll(async () => {
    await env.browser?.close();
  });
  return env;
}

export function baseOf(app: App): string {
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('the app is not listening on a port');
  return `http://127.0.0.1:${address.port}`;
}

/**
 * A fresh context (its own cookies) and page at the given size. Errors the page logs, and any
 * Content-Security-Policy violation, are collected: tests expect none.
 */
export async function openPage(
  env: BrowserEnv,
  viewport = DESKTOP,
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await env.browser.newContext({ viewport, baseURL: env.base });
  const page = await context.newPage();
  // A wait fails with its locator's name well within the test's own 30 s.
  page.setDefaultTimeout(8000);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (message) => {
    // Failed API calls the page shows (401 before signing in) are logged by Chromium as resource
    // errors; they are the app's business. Script errors and CSP refusals are not.
    const text = message.text();
    if (message.type() === 'error' && !/Failed to load resource/.test(text)) problems.push(text);
  });
  return { context, page, problems };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * axe-core's serious and critical violations on the page as it is now (WCAG 2 A/AA rules and best
 * practices), one line each. The console's CSP refuses inline scripts, so axe is added through
 * the DevTools protocol (page.evaluate), which the CSP does not govern.
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  const loaded = await page.evaluate('typeof window.axe === "object"');
  if (!loaded) await page.evaluate(axeSource);
  const violations = (await page.evaluate(
    'axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)',
  )) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

export async function expectAccessible(page: Page, where: string): Promise<void> {
  expect(await seriousViolations(page), where).toEqual([]);
}
