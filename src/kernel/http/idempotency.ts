// Idempotency-Key on every authenticated POST (docs/decisions.md § Idempotency), as Stripe does it:
//   - the same key with the same request within 24 h replays the first answer (status and body,
//     plus `Idempotent-Replayed: true`) and has no second effect;
//   - the same key with another request (method, path or body) → 422 IDEMPOTENCY_KEY_REUSED;
//   - the same key while the first request is still running → 409 IDEMPOTENCY_IN_PROGRESS.
// Keys belong to the account acted on (on partner routes, to the partner).
//
// What is kept: an answer the route's own logic gave (2xx and 4xx). Requests refused before the
// handler (bad key, rate limit, failed validation) do not use the key up, and neither does a 5xx:
// its transaction rolled back, so the client may retry with the same key.
//
// The claim is written before the handler runs and the answer after it; a process that dies in
// between leaves a claim that is taken over once `locked_until` passes.

import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Database, deleteInBatches, type Sql } from '../database/db.ts';
import { canonicalJson } from '../values/canonical-json.ts';
import { ApiError, invalid } from './errors.ts';

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;
/** How long an unanswered claim holds its key before it counts as abandoned. */
const CLAIM_MS = 60_000;
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

declare module 'fastify' {
  interface FastifyRequest {
    idempotency: { owner: string; key: string; fingerprint: string; claimed: boolean } | null;
  }
}

function fingerprintOf(request: FastifyRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.url}\n${canonicalJson(request.body ?? multipartSize(request))}`)
    .digest('base64url');
}

/**
 * A multipart upload (POST /media) is read by its handler as it streams, after the key is claimed:
 * its length stands for it, so that a key reused for another file of another size is refused.
 */
function multipartSize(request: FastifyRequest): { multipartBytes: string } | null {
  const type = String(request.headers['content-type'] ?? '');
  return type.toLowerCase().startsWith('multipart/form-data')
    ? { multipartBytes: String(request.headers['content-length'] ?? '') }
    : null;
}

interface StoredKey {
  fingerprint: string;
  response_status: number | null;
  response_body: string | null;
  response_type: string | null;
}

async function claim(sql: Sql, owner: string, key: string, fingerprint: string, now: Date): Promise<boolean> {
  // Taken over: a key past the window (a fresh start), or an abandoned claim of the same request.
  const { rows } = await sql.query(
    `INSERT INTO idempotency_keys (owner_id, key, fingerprint, locked_until, created_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (owner_id, key) DO UPDATE
        SET fingerprint = EXCLUDED.fingerprint, response_status = NULL, response_body = NULL,
            response_type = NULL, locked_until = EXCLUDED.locked_until, created_at = EXCLUDED.created_at
      WHERE idempotency_keys.created_at < $6
         OR (idempotency_keys.response_status IS NULL AND idempotency_keys.locked_until < $5
             AND idempotency_keys.fingerprint = EXCLUDED.fingerprint)
     RETURNING 1`,
    [
      owner,
      key,
      fingerprint,
      new Date(now.getTime() + CLAIM_MS),
      now,
      new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS),
    ],
  );
  return rows.length === 1;
}

async function storedKey(sql: Sql, owner: string, key: string): Promise<StoredKey | null> {
  const { rows } = await sql.query<StoredKey>(
    `SELECT fingerprint, response_status, response_body, response_type
       FROM idempotency_keys WHERE owner_id = $1 AND key = $2`,
    [owner, key],
  );
  return rows[0] ?? null;
}

async function settle(
  sql: Sql,
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<void> {
  const claimed = request.idempotency!;
  claimed.claimed = false;
  if (reply.statusCode >= 500) {
    await sql.query(
      'DELETE FROM idempotency_keys WHERE owner_id = $1 AND key = $2 AND response_status IS NULL',
      [claimed.owner, claimed.key],
    );
    return;
  }
  const type = reply.getHeader('content-type');
  await sql.query(
    `UPDATE idempotency_keys SET response_status = $3, response_body = $4, response_type = $5
      WHERE owner_id = $1 AND key = $2`,
    [
      claimed.owner,
      claimed.key,
      reply.statusCode,
      typeof payload === 'string' ? payload : '',
      typeof type === 'string' ? type : null,
    ],
  );
}

export interface IdempotencyDeps {
  db: Database;
  now: () => Date;
}

export function installIdempotency(app: FastifyInstance, deps: IdempotencyDeps): void {
  app.decorateRequest('idempotency', null);

  // The body as sent, before validation fills in defaults.
  // Synchronous (done, not async): every request runs it, and most carry no key.
  app.addHook('preValidation', (request, _reply, done) => {
    const header = request.headers['idempotency-key'];
    if (header === undefined || request.method !== 'POST') return done();
    const access = request.routeOptions.config?.access;
    const principal = request.principal;
    if ((access !== 'account' && access !== 'partner') || !principal) return done();
    const key = Array.isArray(header) ? header[0] : header;
    if (key === undefined || !KEY_PATTERN.test(key)) {
      return done(invalid('Idempotency-Key', 'must be 1–255 printable ASCII characters without spaces'));
    }
    const owner = access === 'account' ? principal.account?.id : principal.partnerId;
    if (owner) request.idempotency = { owner, key, fingerprint: fingerprintOf(request), claimed: false };
    done();
  });

  // After validation: a request refused for its shape does not use the key up. The hooks are
  // callback-style so that the requests without a key (nearly all) pass without a promise.
  app.addHook('preHandler', (request, reply, done) => {
    if (!request.idempotency) return done();
    claimOrReplay(deps, request, reply).then((replayed) => {
      if (!replayed) done();
    }, done);
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    // Only a request that claimed its key settles it (not a replay, nor a refusal).
    if (!request.idempotency?.claimed) return done(null, payload);
    settle(deps.db, request, reply, payload).then(
      () => done(null, payload),
      (err) => {
        // The database went away after the handler was done. The answer goes out as it is: a 2xx
        // or 4xx says what was done (turning it into an error would have the client retry a change
        // that was made), and a 503 stays one. The key stays claimed, unanswered: a retry with it
        // gets 409 IDEMPOTENCY_IN_PROGRESS until the claim runs out (CLAIM_MS), then runs again.
        // (Thrown from here, the error became a 500 whose body showed the driver's message.)
        request.log.warn({ err }, 'could not record the answer of an idempotent request');
        done(null, payload);
      },
    );
  });
}

/** Claims the request's key, or replays the answer stored for it (true: the reply was sent). */
async function claimOrReplay(
  deps: IdempotencyDeps,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<boolean> {
  const idem = request.idempotency!;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await claim(deps.db, idem.owner, idem.key, idem.fingerprint, deps.now())) {
      idem.claimed = true;
      return false;
    }
    const stored = await storedKey(deps.db, idem.owner, idem.key);
    // Released (its first request failed with a 5xx) between the two statements: claim again.
    if (!stored) continue;
    if (stored.fingerprint !== idem.fingerprint) {
      throw new ApiError(
        'IDEMPOTENCY_KEY_REUSED',
        'This Idempotency-Key was already used with a different request; use a new key for a new request.',
      );
    }
    if (stored.response_status === null) throw new ApiError('IDEMPOTENCY_IN_PROGRESS');
    reply
      .code(stored.response_status)
      .header('idempotent-replayed', 'true')
      .header('content-type', stored.response_type ?? 'application/json; charset=utf-8');
    reply.send(stored.response_body ?? '');
    return true;
  }
  throw new ApiError('IDEMPOTENCY_IN_PROGRESS');
}

/** Deletes keys past the 24-hour window, in batches (they are already ignored; this frees space). */
export function pruneIdempotencyKeys(sql: Sql, now: Date): Promise<number> {
  return deleteInBatches(
    sql,
    `DELETE FROM idempotency_keys WHERE (owner_id, key) IN (
       SELECT owner_id, key FROM idempotency_keys WHERE created_at < $1 LIMIT 5000)`,
    [new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)],
    5000,
  );
}
