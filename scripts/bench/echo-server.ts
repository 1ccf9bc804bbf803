// The baseline of HTTP overhead: a minimal Fastify app with one echo route, run as its own process
// and started as the Tidings server is (support.ts startServer: the same Node, HOST and PORT), so
// that what request-path.ts measures beyond it is Tidings' own work on a request.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
// Answers the API key it was sent (request-path.ts sends one, as to the authenticated route).
app.get('/echo', async (request) => ({ echo: request.headers['x-api-key'] ?? null }));
await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT) });
const close = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', close);
process.once('SIGINT', close);
