// What an attempt's result means for its delivery and endpoint, and how the results of many
// attempts are written back: a few statements per batch, so that throughput is not one
// transaction per delivery.
import type { Database } from '../../kernel/database/db.ts';
import type { PostResult } from '../../kernel/outbound/egress.ts';
import { failPendingDeliveries } from './repo.ts';
import { DISABLE_AFTER_FAILING_MS, retryDelayMs } from './schedule.ts';

export interface ClaimedDelivery {
  id: string;
  endpoint_id: string;
  owner: string;
  event_id: string;
  attempt_count: number;
  attempts_allowed: number;
  url: string;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  payload: string;
}

export interface Outcome {
  deliveryId: string;
  endpointId: string;
  attemptedAt: Date;
  result: PostResult;
  status: 'pending' | 'succeeded' | 'failed';
  attemptCount: number;
  nextAttemptAt: Date | null;
  /** Set when this answer disables the endpoint (410 Gone). */
  disableReason: string | null;
}

export function judge(claimed: ClaimedDelivery, result: PostResult, attemptedAt: Date): Outcome {
  const attemptCount = claimed.attempt_count + 1;
  const base = { deliveryId: claimed.id, endpointId: claimed.endpoint_id, attemptedAt, result, attemptCount };
  const code = result.statusCode;
  if (code !== null && code >= 200 && code < 300) {
    return { ...base, status: 'succeeded', nextAttemptAt: null, disableReason: null };
  }
  if (code === 410) {
    return {
      ...base,
      status: 'failed',
      nextAttemptAt: null,
      disableReason: 'the endpoint answered 410 Gone',
    };
  }
  const delay =
    attemptCount < claimed.attempts_allowed ? retryDelayMs(attemptCount, result.retryAfterSeconds) : null;
  return delay === null
    ? { ...base, status: 'failed', nextAttemptAt: null, disableReason: null }
    : {
        ...base,
        status: 'pending',
        nextAttemptAt: new Date(attemptedAt.getTime() + delay),
        disableReason: null,
      };
}

const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * Writes a batch of outcomes in one transaction; answers the endpoints it disabled. An attempt at
 * an event erased since it was sent keeps no excerpt of the answer (a receiver may echo what it was
 * sent): the deliveries are updated first, in a statement of their own, so that an erasure under
 * way (which locks the deliveries of the events it erases, erasure/erase.ts) has committed before
 * the attempts are written, or waits for them and erases them itself.
 */
export async function writeOutcomes(db: Database, outcomes: Outcome[], now: Date): Promise<string[]> {
  return db.transaction(async (tx) => {
    const { rows: updated } = await tx.query<{ id: string; event_id: string }>(
      `UPDATE webhook_deliveries d
          SET status = o.status, attempt_count = o.attempt_count,
              next_attempt_at = o.next_attempt_at::timestamptz, locked_until = NULL,
              last_attempt_at = o.attempted_at::timestamptz, last_status_code = o.status_code,
              last_error = o.error, updated_at = o.attempted_at::timestamptz
         FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::int[], $7::text[])
           AS o (id, status, attempt_count, next_attempt_at, attempted_at, status_code, error)
        WHERE d.id = o.id
       RETURNING d.id, d.event_id`,
      [
        outcomes.map((o) => o.deliveryId),
        outcomes.map((o) => o.status),
        outcomes.map((o) => o.attemptCount),
        outcomes.map((o) => isoOrNull(o.nextAttemptAt)),
        outcomes.map((o) => o.attemptedAt.toISOString()),
        outcomes.map((o) => o.result.statusCode),
        outcomes.map((o) => o.result.error),
      ],
    );
    const eventOf = new Map(updated.map((d) => [d.id, d.event_id]));
    const attempts = outcomes.filter((o) => eventOf.has(o.deliveryId));
    await tx.query(
      `INSERT INTO webhook_attempts (delivery_id, attempted_at, status_code, latency_ms, response_excerpt, error)
       SELECT a.delivery_id, a.attempted_at::timestamptz, a.status_code, a.latency_ms,
              CASE WHEN event_erased(ev.payload) THEN NULL ELSE a.excerpt END, a.error
         FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::text[], $6::text[], $7::text[])
           AS a (delivery_id, attempted_at, status_code, latency_ms, excerpt, error, event_id)
         LEFT JOIN events ev ON ev.id = a.event_id`,
      [
        attempts.map((o) => o.deliveryId),
        attempts.map((o) => o.attemptedAt.toISOString()),
        attempts.map((o) => o.result.statusCode),
        attempts.map((o) => o.result.latencyMs),
        // NUL cannot be stored in a text column; a binary answer is not worth keeping anyway.
        attempts.map((o) => o.result.excerpt?.replaceAll('\u0000', '') ?? null),
        attempts.map((o) => o.result.error),
        attempts.map((o) => eventOf.get(o.deliveryId)!),
      ],
    );

    // The endpoint's failure streak: the last attempt in the batch decides.
    const last = new Map<string, Outcome>();
    for (const o of outcomes) last.set(o.endpointId, o);
    const healthy = [...last.values()].filter((o) => o.status === 'succeeded').map((o) => o.endpointId);
    const failing = [...last.values()].filter((o) => o.status !== 'succeeded');
    if (healthy.length > 0) {
      await tx.query(
        'UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ANY($1::text[]) AND failing_since IS NOT NULL',
        [healthy],
      );
    }
    const disabled = new Map<string, string>();
    for (const o of failing) if (o.disableReason) disabled.set(o.endpointId, o.disableReason);
    if (failing.length > 0) {
      const { rows } = await tx.query<{ id: string; too_long: boolean }>(
        `WITH f AS (SELECT * FROM unnest($1::text[], $2::text[]) AS f (id, since))
         UPDATE webhook_endpoints e SET failing_since = coalesce(e.failing_since, f.since::timestamptz)
           FROM f WHERE e.id = f.id AND e.enabled
         RETURNING e.id, e.failing_since <= $3::timestamptz AS too_long`,
        [
          failing.map((o) => o.endpointId),
          failing.map((o) => o.attemptedAt.toISOString()),
          new Date(now.getTime() - DISABLE_AFTER_FAILING_MS).toISOString(),
        ],
      );
      for (const row of rows) {
        if (row.too_long && !disabled.has(row.id)) disabled.set(row.id, 'every attempt failed for 5 days');
      }
    }
    for (const [id, reason] of disabled) {
      const { rowCount } = await tx.query(
        `UPDATE webhook_endpoints SET enabled = false, disabled_reason = $2, updated_at = $3
          WHERE id = $1 AND enabled`,
        [id, reason, now],
      );
      if (rowCount > 0) {
        await failPendingDeliveries(tx, [id], `not attempted: the webhook was disabled (${reason})`, now);
      }
    }
    return [...disabled.keys()];
  });
}
