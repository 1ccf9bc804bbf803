// The OpenAPI fuzzer: every operation of the document the app serves gets generated bad requests
// (malformed JSON, wrong types, missing and unknown fields, huge and deeply nested bodies, odd
// Unicode and numbers, wrong content types, bad credentials, garbage headers, path parameters and
// query strings), sent with real keys of a real tenant so that they get past authentication and
// reach validation and the handlers. It proves that the service answers every one of them as its
// document says: never a 5xx, only documented statuses, the documented error body with a code
// listed for its status, a refusal for every request built to be invalid, and nothing stored for
// a refused request. Operations come from the document, so a new route is fuzzed without editing
// this file.
//
// Deterministic: FUZZ_SEED (printed) fixes the cases; FUZZ_RUNS sets the cases per operation.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import { changedTables, DatabaseSnapshots } from '../helpers/db-snapshot.ts';
import { type ErrorBodyCheck, errorBodyCheck, problemsOf } from '../helpers/fuzz-checks.ts';
import { fuzzContext, signInAgain } from '../helpers/fuzz-context.ts';
import {
  badRequests,
  describeRequest,
  type FuzzContext,
  type FuzzRequest,
} from '../helpers/fuzz-requests.ts';
import { type OpenApiDocument, type Operation, operationsOf } from '../helpers/openapi-operations.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_125);
const RUNS = Number(process.env.FUZZ_RUNS ?? 20);

// Webhook URLs are checked by resolving their host; a fixed public address keeps DNS out of it.
const env = useTestApp({ resolver: async () => ['93.184.216.34'] });

/** Codes that mean a request was stopped at the door, before validation or the handler. */
const DOOR_CODES = new Set([
  'INVALID_API_KEY',
  'INVALID_SESSION',
  'INVALID_BOOTSTRAP_TOKEN',
  'FORBIDDEN',
  'RATE_LIMITED',
]);

let doc: OpenApiDocument;
let operations: Operation[];
let ctx: FuzzContext;
let checkErrorBody: ErrorBodyCheck;

beforeAll(async () => {
  const res = await call(env.app, 'GET', '/api/v1/public/openapi.json');
  expect(res.status).toBe(200);
  doc = res.body;
  operations = operationsOf(doc);
  checkErrorBody = errorBodyCheck(doc.components.schemas.ErrorBody!);
  ctx = await fuzzContext(env);
  console.info(`OpenAPI fuzzer: seed ${SEED} (FUZZ_SEED), ${RUNS} cases per operation (FUZZ_RUNS)`);
});

async function send(req: FuzzRequest) {
  return env.app.inject({
    method: req.method as 'GET',
    url: req.url,
    headers: req.headers,
    ...(req.payload === undefined ? {} : { payload: req.payload }),
  });
}

describe('OpenAPI fuzzer', () => {
  it('reads every operation of the document', () => {
    expect(operations.length).toBeGreaterThan(70);
    for (const op of operations) expect(badRequests(op, ctx).length, op.name).toBeGreaterThan(0);
  });

  it('answers every bad request as documented, and a refused one stores nothing', async () => {
    const snapshots = new DatabaseSnapshots(env.tdb.db);
    const failures: string[] = [];
    const statuses: Record<number, number> = {};
    let sent = 0;
    for (const [index, op] of operations.entries()) {
      const kinds = badRequests(op, ctx);
      let current = await snapshots.take();
      let pastTheDoor = op.access === 'public';
      const property = fc.asyncProperty(fc.oneof(...kinds.map((k) => k.arbitrary)), async (req) => {
        const res = await send(req);
        sent++;
        // A sign-out ended the fuzzer's session: a new one, before the snapshot.
        if (op.access === 'session' && op.method !== 'GET' && res.statusCode < 300)
          await signInAgain(env, ctx);
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        const before = current;
        current = await snapshots.take();
        const problems = problemsOf(op, req, res, checkErrorBody);
        const changed = res.statusCode >= 400 ? changedTables(before, current) : [];
        if (changed.length > 0) problems.push(`a refused request changed ${changed.join(', ')}`);
        const code = res.statusCode >= 400 ? (res.json().error?.code as string) : null;
        if (!code || !DOOR_CODES.has(code)) pastTheDoor = true;
        if (problems.length > 0) throw new Error(`${problems.join('; ')}\n    ${describeRequest(req)}`);
      });
      const seed = SEED + index;
      const run = await fc.check(property, { seed, numRuns: RUNS });
      if (run.failed) {
        const reason =
          run.errorInstance instanceof Error ? run.errorInstance.message : String(run.errorInstance);
        failures.push(`${op.name} (seed ${seed}, path ${run.counterexamplePath}): ${reason}`);
      }
      if (!pastTheDoor) failures.push(`${op.name}: no request got past authentication`);
    }
    console.info(
      `OpenAPI fuzzer: ${operations.length} operations, ${sent} requests, statuses ${JSON.stringify(statuses)}`,
    );
    // A rate limit answering everything would hide the rest.
    expect(statuses[429] ?? 0).toBeLessThan(sent / 10);
    expect(failures, failures.join('\n\n')).toEqual([]);
  }, 600_000);
});

// Cases the fuzzer found, kept as fixed assertions.
describe('OpenAPI fuzzer regressions', () => {
  it('refuses a NUL in a path parameter (PostgreSQL cannot compare it: it was a 500)', async () => {
    expectError(await call(env.app, 'GET', '/contacts/%00', { key: ctx.liveKey }), 400, 'INVALID_REQUEST');
    expectError(
      await call(env.app, 'DELETE', '/partner/keys/%00', { key: ctx.partnerKey }),
      400,
      'INVALID_REQUEST',
    );
  });

  it('answers an over-long path parameter with the error body (it was a bare 414)', async () => {
    const res = await call(env.app, 'GET', `/team/members/${'x'.repeat(101)}`, { key: ctx.liveKey });
    expectError(res, 400, 'INVALID_REQUEST');
  });

  it("answers a path that is not percent-encoded UTF-8 with the error body (it was Fastify's own)", async () => {
    expectError(await call(env.app, 'POST', '/api/v1/callbacks/whatsapp/%C0%AF'), 400, 'INVALID_REQUEST');
  });

  it('refuses a deeply nested body (it overflowed the stack in JSON.stringify: a 500)', async () => {
    const depth = 100_000;
    const res = await call(env.app, 'POST', '/bulk/contacts', {
      key: ctx.liveKey,
      body: `{"contacts":[${'['.repeat(depth)}${']'.repeat(depth)}]}`,
    });
    expectError(res, 400, 'INVALID_REQUEST');
  });

  it('refuses text that cannot be stored in a body, and stores nothing', async () => {
    const snapshots = new DatabaseSnapshots(env.tdb.db);
    const before = await snapshots.take();
    for (const name of ['nul\u0000inside', 'lone \ud800']) {
      const res = await call(env.app, 'POST', '/contacts', {
        key: ctx.liveKey,
        body: { phone: '+14155550199', name },
      });
      expectError(res, 400, 'INVALID_REQUEST');
      expect(res.body.error.details).toEqual([{ field: 'name', issue: expect.stringContaining('NUL') }]);
    }
    expect(changedTables(before, await snapshots.take())).toEqual([]);
  });
});
