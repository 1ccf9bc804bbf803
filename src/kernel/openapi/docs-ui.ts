// The API reference page at /docs (Scalar), loaded on its first visit.
//
// @scalar/fastify-api-reference is one 4.2 MB module that holds the whole browser bundle as a
// string: importing it keeps about 18 MiB alive in every server (10 MiB of JavaScript heap, 8 MiB
// of external string), whether or not anyone opens the page, and the embedded server's memory is
// a target (docs/history/issue-27.md). So the server answers the plugin's three routes itself
// and, on the first request to one of them, imports the plugin into a small Fastify instance of its
// own that never listens; each request is handed to that instance with `inject` and its answer
// copied back. The page and the script are what the plugin serves, unchanged.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';

const DOCS_PREFIX = '/docs';
/** The plugin's routes under its prefix: a redirect to the slash, the page, and its script. */
const DOCS_ROUTES = [DOCS_PREFIX, `${DOCS_PREFIX}/`, `${DOCS_PREFIX}/js/scalar.js`];
/** Answer headers the outer server sets for itself. */
const OWN_HEADERS = new Set(['content-length', 'connection', 'date', 'keep-alive', 'transfer-encoding']);

export function installDocsUi(app: FastifyInstance, configuration: Record<string, unknown>): void {
  let inner: Promise<FastifyInstance> | null = null;
  const load = async () => {
    const { default: scalar } = await import('@scalar/fastify-api-reference');
    const docs = Fastify({ logger: false });
    await docs.register(scalar, { routePrefix: DOCS_PREFIX, configuration });
    await docs.ready();
    return docs;
  };
  const handler = async (request: FastifyRequest, reply: FastifyReply) => {
    // A failed load is tried again by the next request rather than cached.
    inner ??= load().catch((err) => {
      inner = null;
      throw err;
    });
    const res = await (await inner).inject({
      method: 'GET',
      url: request.url,
      headers: { host: request.headers.host ?? 'localhost' },
    });
    for (const [name, value] of Object.entries(res.headers)) {
      if (value !== undefined && !OWN_HEADERS.has(name)) reply.header(name, value);
    }
    return reply.code(res.statusCode).send(res.rawPayload);
  };
  for (const url of DOCS_ROUTES) app.get(url, { schema: { hide: true } }, handler);
  app.addHook('onClose', async () => {
    if (inner) await (await inner.catch(() => null))?.close();
  });
}
