// The console served at /console: its files, the single-page fallback, caching (hashed assets for
// ever, the page revalidated), the Content-Security-Policy, hidden from the API document, and a
// clear 503 when the console is not built.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { CONSOLE_DIST } from '../../scripts/console-build.ts';
import { OPENAPI_PATH } from '../../src/kernel/openapi/openapi.ts';
import { CONSOLE_CSP, consoleAppRoutes } from '../../src/modules/console-app/routes.ts';
import { useTestApp } from '../helpers/setup.ts';

const env = useTestApp({ bootstrap: false });

/** The built page's own script (the entry the browser loads first). */
function entryScript(): string {
  const html = readFileSync(join(CONSOLE_DIST, 'index.html'), 'utf8');
  const src = html.match(/<script[^>]*src="([^"]+)"/)?.[1];
  expect(src, 'index.html has an entry script').toMatch(/^\/console\/assets\/.+\.js$/);
  return src!;
}

describe('the console at /console', () => {
  it('answers the page at /console and at any path of the app, never cached unrevalidated', async () => {
    for (const url of ['/console', '/console/', '/console/sign-in', '/console/inbox/conversations/x?y=1']) {
      const res = await env.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toMatch(/^text\/html/);
      expect(res.headers['cache-control'], url).toBe('no-cache');
      expect(res.headers['content-security-policy'], url).toBe(CONSOLE_CSP);
      expect(res.body, url).toContain('<div id="root"></div>');
    }
  });

  it('serves hashed assets as immutable, under the same CSP, and 404s an asset that is not there', async () => {
    const script = entryScript();
    const res = await env.app.inject({ method: 'GET', url: script });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const missing = await env.app.inject({ method: 'GET', url: '/console/assets/gone-0000.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toMatch(/json/);
  });

  it('has a strict CSP: scripts and connections from this origin only (and Meta’s SDK), no inline script, no framing', () => {
    // Meta's Embedded Signup is the one outside origin: its SDK, its popup's frames.
    const directive = (name: string) => CONSOLE_CSP.split('; ').find((d) => d.startsWith(`${name} `));
    expect(directive('script-src')).toBe("script-src 'self' https://connect.facebook.net");
    expect(directive('frame-src')).toBe(
      'frame-src https://www.facebook.com https://web.facebook.com https://staticxx.facebook.com',
    );
    expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    // The built page obeys it: no inline script.
    const html = readFileSync(join(CONSOLE_DIST, 'index.html'), 'utf8');
    for (const tag of html.match(/<script[^>]*>/g) ?? []) expect(tag).toMatch(/\ssrc="/);
  });

  it('is not part of the API document, and leaves the API answers without the CSP', async () => {
    const doc = (await env.app.inject({ method: 'GET', url: OPENAPI_PATH })).json();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/console'))).toEqual([]);
    const health = await env.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.headers['content-security-policy']).toBeUndefined();
  });

  it('loads under 300 KB of JavaScript (gzip) on the first page: its scripts and modulepreloads', () => {
    const html = readFileSync(join(CONSOLE_DIST, 'index.html'), 'utf8');
    const urls = [
      ...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g),
      ...html.matchAll(/<link[^>]*rel="modulepreload"[^>]*href="([^"]+)"/g),
    ].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThan(0);
    const bytes = urls
      .map((url) => gzipSync(readFileSync(join(CONSOLE_DIST, url.replace(/^\/console\//, '')))).length)
      .reduce((a, b) => a + b, 0);
    expect(bytes).toBeLessThan(300 * 1024);
  });

  it('answers 503 with how to build it when packages/console/dist is missing', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'tidings-console-'));
    const app = Fastify();
    try {
      await app.register(consoleAppRoutes({ dir: join(empty, 'dist') }));
      for (const url of ['/console', '/console/sign-in']) {
        const res = await app.inject({ method: 'GET', url });
        expect(res.statusCode, url).toBe(503);
        expect(res.headers['content-type']).toMatch(/^text\/html/);
        expect(res.headers['content-security-policy']).toBe(CONSOLE_CSP);
        expect(res.body).toContain('npm run console:build');
      }
    } finally {
      await app.close();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
