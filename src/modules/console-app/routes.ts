// The console (packages/console, a built single-page app) served at /console by this process:
// its files by @fastify/static, any other /console/* path answered with index.html (the app's
// router reads the path), hashed assets cached for ever, index.html never without revalidating, and
// a strict Content-Security-Policy on every answer. Not part of the API: hidden from the document.
// Without a build (packages/console/dist missing), /console answers 503 saying how to build it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { ApiError } from '../../kernel/http/errors.ts';

export const CONSOLE_PREFIX = '/console';
export const DEFAULT_CONSOLE_DIST = fileURLToPath(new URL('../../../packages/console/dist', import.meta.url));

// Scripts, styles, images and API calls from this origin only: no inline script or style, no eval,
// no framing (clickjacking), no plugins, no <base> or form posts elsewhere. The one exception is
// Meta's: the Connect WhatsApp page loads Meta's JavaScript SDK (and only that page: it adds the
// script when it opens), whose Embedded Signup runs in Meta's popup and hidden frames; the photos
// of business profiles are Meta's too (pps.whatsapp.net).
const META_SDK = 'https://connect.facebook.net';
const META_FRAMES = 'https://www.facebook.com https://web.facebook.com https://staticxx.facebook.com';
export const CONSOLE_CSP = [
  "default-src 'none'",
  `script-src 'self' ${META_SDK}`,
  "style-src 'self'",
  "img-src 'self' data: blob: https://pps.whatsapp.net https://*.fbcdn.net https://www.facebook.com",
  "font-src 'self'",
  `connect-src 'self' ${META_SDK} https://www.facebook.com`,
  `frame-src ${META_FRAMES}`,
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

function securityHeaders(reply: FastifyReply): void {
  reply.header('content-security-policy', CONSOLE_CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('x-frame-options', 'DENY');
  reply.header('referrer-policy', 'no-referrer');
  // Not `same-origin`: Meta's Embedded Signup popup hands its result back to this window, which
  // `same-origin` would cut off (the popup is another origin). Other popups stay cut off.
  reply.header('cross-origin-opener-policy', 'same-origin-allow-popups');
}

const NOT_BUILT = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Tidings console: not built</title></head>
<body>
<h1>The console is not built</h1>
<p>This server has no build of the console (<code>packages/console/dist</code> is missing).
Run <code>npm run console:build</code> (or <code>npm start</code>, which builds it when needed),
then restart the server.</p>
<p>The API itself is up: <a href="/docs">/docs</a>.</p>
</body>
</html>
`;

export function consoleAppRoutes(options: { dir?: string } = {}): FastifyPluginAsync {
  const dir = options.dir ?? DEFAULT_CONSOLE_DIST;
  return async (app: FastifyInstance) => {
    // Encapsulated (no fastify-plugin): these headers go on the console's answers only.
    app.addHook('onRequest', async (_request, reply) => securityHeaders(reply));

    if (!existsSync(`${dir}/index.html`)) {
      const notBuilt = async (_request: unknown, reply: FastifyReply) =>
        reply
          .code(503)
          .header('cache-control', 'no-store')
          .header('retry-after', '60')
          .type('text/html; charset=utf-8')
          .send(NOT_BUILT);
      app.get(CONSOLE_PREFIX, { schema: { hide: true } }, notBuilt);
      app.get(`${CONSOLE_PREFIX}/*`, { schema: { hide: true } }, notBuilt);
      return;
    }

    await app.register(fastifyStatic, {
      root: dir,
      prefix: `${CONSOLE_PREFIX}/`,
      // One route per file found now (a new build needs a restart): every other path falls
      // through to the SPA answer below instead of a 404.
      wildcard: false,
      index: false,
      cacheControl: false,
      schemaHide: true,
      setHeaders: (reply, path) => {
        // Vite names everything under assets/ by its content's hash.
        const hashed = path.replaceAll('\\', '/').includes('/assets/');
        reply.header('cache-control', hashed ? IMMUTABLE : REVALIDATE);
      },
    });

    const page = async (_request: unknown, reply: FastifyReply) =>
      reply.header('cache-control', REVALIDATE).sendFile('index.html');
    app.get(CONSOLE_PREFIX, { schema: { hide: true } }, page);
    app.get(`${CONSOLE_PREFIX}/*`, { schema: { hide: true } }, async (request, reply) => {
      // A hashed file that is not there (an old page asking for a replaced build) is a 404, not
      // the page: HTML where a script was expected only hides the problem.
      if (request.url.startsWith(`${CONSOLE_PREFIX}/assets/`)) {
        throw new ApiError(
          'RESOURCE_NOT_FOUND',
          `No console file ${request.url.split('?')[0]}: the console was built again since this page loaded; reload it.`,
        );
      }
      return page(request, reply);
    });
  };
}
