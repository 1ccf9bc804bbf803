// The baselines of the request path: a minimal Fastify app, run as its own process and started as
// the Tidings server is (support.ts startServer: the same Node, HOST and PORT), so that what
// request-path.ts measures beyond it is Tidings' own work on a request.
//   GET /echo             answers the API key it was sent: HTTP and JSON alone.
//   GET /account-reads    the database reads GET /account needs (the account's row and its month's
//                         calls), through a plain pg pool of Tidings' default size, for the account
//                         named in X-Account-Id.
//   POST /contacts-insert the INSERT of POST /contacts through the same plain pool, one statement.
// The last two exist when DATABASE_URL is set.
import Fastify from 'fastify';
import pg from 'pg';
import { newId } from '../src/kernel/values/ids.ts';

const app = Fastify({ logger: false });
app.get('/echo', async (request) => ({ echo: request.headers['x-api-key'] ?? null }));

const url = process.env.DATABASE_URL;
if (url) {
  const pool = new pg.Pool({ connectionString: url, max: Number(process.env.BENCH_POOL_SIZE ?? 10) });
  // The bench drops the database before the last phase (the bare route alone): an idle client's
  // loss is expected then.
  pool.on('error', () => {});
  app.get('/account-reads', async (request) => {
    const { rows } = await pool.query({
      name: 'account_reads',
      text: `SELECT a.*, (SELECT calls FROM api_usage_monthly WHERE account_id = a.id AND period = $2) AS month_calls
               FROM accounts a WHERE a.id = $1`,
      values: [request.headers['x-account-id'], new Date().toISOString().slice(0, 7)],
    });
    return rows[0];
  });
  app.post('/contacts-insert', async (request, reply) => {
    const body = request.body as { phone: string; name: string };
    const now = new Date();
    const { rows } = await pool.query({
      name: 'contacts_insert',
      text: `INSERT INTO contacts (id, account_id, phone, name, email, tags, attributes, opted_in, marketing_opt_out,
                                   created_at, updated_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
             ON CONFLICT (account_id, phone) DO NOTHING RETURNING *`,
      values: [
        newId('contact'),
        request.headers['x-account-id'],
        body.phone,
        body.name,
        null,
        [],
        '{}',
        false,
        false,
        now,
      ],
    });
    reply.code(rows[0] ? 201 : 409);
    return rows[0] ?? { conflict: true };
  });
  app.addHook('onClose', () => pool.end());
}

await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT) });
const close = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', close);
process.once('SIGINT', close);
