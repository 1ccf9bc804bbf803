// The call_webhook action (docs/automation.md § call_webhook). The run writes the call in its own
// transaction (queueCall): the URL, and the JSON to send, fixed then (the action's body rendered,
// with the run and the event added). After commit the CallSender posts it through the egress check,
// signed like webhook deliveries (Standard Webhooks headers, `webhook-id` the call's id) with the
// rule's own secret, and retries a failure on the webhooks' schedule until it is used up: at least
// once, as every webhook. A worker holds a call it took for a lease; one that crashed mid-attempt
// leaves it to be taken again when the lease ends.
// A voice script's webhook action queues its call here too (`voiceScriptId`, the run being the call),
// signed with the script's secret, on the webhooks' schedule.
// A journey's webhook node queues its call here too (`journeyId`, `nodeId`), signed with the
// journey's secret, with at most JOURNEY_ATTEMPTS attempts (none after a 4xx but 408 and 429): its
// run waits for the outcome, which the sender hands it when the call succeeds or gives up (the
// answer in `run.vars.<node>`, the run due at once, to leave by `next` or `failed`).
import type { FastifyBaseLogger } from 'fastify';
import type { SecretBox } from '../../kernel/crypto/secrets.ts';
import type { Database, Tx } from '../../kernel/database/db.ts';
import type { Egress } from '../../kernel/outbound/egress.ts';
import { newId } from '../../kernel/values/ids.ts';
import { retryDelayMs, signatureHeaders } from '../webhooks/index.ts';

const USER_AGENT = 'Tidings-Automation/1.0';
/** Calls taken per round. */
const BATCH = 20;
/** A journey's webhook node tries this many times (after 5 s, then a minute), then fails. */
export const JOURNEY_ATTEMPTS = 3;
const JOURNEY_RETRY_MS = [5_000, 60_000];
/** How much of a journey call's answer is kept (its run's variables hold it). */
const JOURNEY_ANSWER_BYTES = 16 * 1024;

export async function queueCall(
  tx: Tx,
  call: {
    accountId: string;
    runId: string;
    url: string;
    payload: object;
  } & ({ ruleId: string } | { journeyId: string; nodeId: string } | { voiceScriptId: string }),
  now: Date,
): Promise<string> {
  const id = newId('automationCall');
  const journey = 'journeyId' in call;
  await tx.query(
    `INSERT INTO automation_calls (id, account_id, rule_id, journey_id, node_id, max_attempts, voice_script_id, run_id,
                                   url, payload, next_attempt_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $11)`,
    [
      id,
      call.accountId,
      'ruleId' in call ? call.ruleId : null,
      journey ? call.journeyId : null,
      journey ? call.nodeId : null,
      journey ? JOURNEY_ATTEMPTS : null,
      'voiceScriptId' in call ? call.voiceScriptId : null,
      call.runId,
      call.url,
      JSON.stringify(call.payload),
      now,
    ],
  );
  return id;
}

interface Claimed {
  id: string;
  url: string;
  payload: string;
  attempt_count: number;
  signing_secret_sealed: string | null;
  run_id: string;
  journey_id: string | null;
  node_id: string | null;
  max_attempts: number | null;
}

/**
 * The wait before a call's next attempt, or null when it has had its last. A journey's call is not
 * tried again after a 4xx answer other than 408 and 429 (the request itself was refused; the run
 * should go on by `failed` now, not in a minute).
 */
function nextWait(
  call: Claimed,
  attempts: number,
  result: { statusCode: number | null; retryAfterSeconds: number | null },
): number | null {
  const { statusCode, retryAfterSeconds } = result;
  if (call.max_attempts === null) return retryDelayMs(attempts, retryAfterSeconds);
  if (attempts >= call.max_attempts) return null;
  if (
    statusCode !== null &&
    statusCode >= 400 &&
    statusCode < 500 &&
    statusCode !== 408 &&
    statusCode !== 429
  )
    return null;
  const wait = JOURNEY_RETRY_MS[attempts - 1] ?? JOURNEY_RETRY_MS.at(-1)!;
  return retryAfterSeconds === null ? wait : Math.max(wait, Math.min(retryAfterSeconds * 1000, 300_000));
}

/** A call's answer as a run keeps it: the status and the body (as JSON when it is). */
function answerOf(statusCode: number | null, excerpt: string | null, error: string | null) {
  let body: unknown = excerpt;
  if (excerpt !== null) {
    try {
      body = JSON.parse(excerpt);
    } catch {
      // Not JSON (or cut short): kept as text.
    }
  }
  return { status: statusCode, body, ...(error ? { error } : {}) };
}

export interface CallSenderDeps {
  db: Database;
  egress: Egress;
  secrets: SecretBox;
  now: () => Date;
  log: FastifyBaseLogger;
  /** How long a taken call is held: longer than an attempt can last. */
  leaseMs: number;
  /** Told when a journey run's call ended (its run is due now). */
  onJourneyCall?: () => void;
}

export class CallSender {
  readonly #d: CallSenderDeps;

  constructor(deps: CallSenderDeps) {
    this.#d = deps;
  }

  /** Takes the due calls no other worker holds and attempts them; answers how many. */
  async sendDue(): Promise<number> {
    const now = this.#d.now();
    const { rows } = await this.#d.db.query<Claimed>(
      `UPDATE automation_calls c SET locked_until = $2, updated_at = $1
         FROM (SELECT id FROM automation_calls
                WHERE status = 'pending' AND next_attempt_at <= $1 AND (locked_until IS NULL OR locked_until <= $1)
                ORDER BY next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED) due
        WHERE c.id = due.id
        RETURNING c.id, c.url, c.payload, c.attempt_count, c.run_id, c.journey_id, c.node_id, c.max_attempts,
                  coalesce((SELECT r.signing_secret_sealed FROM rules r WHERE r.id = c.rule_id),
                           (SELECT j.signing_secret_sealed FROM journeys j WHERE j.id = c.journey_id),
                           (SELECT v.signing_secret_sealed FROM voice_scripts v WHERE v.id = c.voice_script_id))
                    AS signing_secret_sealed`,
      [now, new Date(now.getTime() + this.#d.leaseMs)],
    );
    await Promise.all(rows.map((call) => this.#attempt(call)));
    return rows.length;
  }

  async #attempt(call: Claimed): Promise<void> {
    const at = this.#d.now();
    const secrets = call.signing_secret_sealed ? [this.#d.secrets.open(call.signing_secret_sealed)] : [];
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      ...(secrets.length
        ? signatureHeaders(secrets, call.id, Math.floor(at.getTime() / 1000), call.payload)
        : {}),
    };
    const result = await this.#d.egress.post(
      call.url,
      call.payload,
      headers,
      call.journey_id ? { excerptBytes: JOURNEY_ANSWER_BYTES } : {},
    );
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const attempts = call.attempt_count + 1;
    const wait = ok ? null : nextWait(call, attempts, result);
    const status = ok ? 'succeeded' : wait === null ? 'failed' : 'pending';
    if (status === 'failed') {
      this.#d.log.warn(
        { callId: call.id, error: result.error, statusCode: result.statusCode },
        call.journey_id ? "a journey's webhook node gave up" : 'call_webhook gave up',
      );
    }
    const ended = call.journey_id !== null && status !== 'pending';
    // The call's outcome and, for a journey's, its run's going on commit together.
    await this.#d.db.transaction(async (tx) => {
      await tx.query(
        `UPDATE automation_calls
            SET status = $2, attempt_count = $3, next_attempt_at = $4, locked_until = NULL,
                last_status_code = $5, last_error = $6, updated_at = $7
          WHERE id = $1`,
        [
          call.id,
          status,
          attempts,
          wait === null ? null : new Date(at.getTime() + wait),
          result.statusCode,
          result.error,
          this.#d.now(),
        ],
      );
      if (!ended) return;
      // The run waiting at the node goes on (if it still waits there: not expired nor canceled).
      await tx.query(
        `UPDATE journey_runs
            SET vars = vars || jsonb_build_object($3::text, $4::jsonb), resume_edge = $5, resume_at = $6,
                updated_at = $6
          WHERE id = $1 AND status = 'waiting' AND current_node_id = $3 AND journey_id = $2`,
        [
          call.run_id,
          call.journey_id,
          call.node_id,
          JSON.stringify(answerOf(result.statusCode, result.excerpt, result.error)),
          ok ? 'next' : 'failed',
          this.#d.now(),
        ],
      );
    });
    if (ended) this.#d.onJourneyCall?.();
  }
}

export interface CallState {
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
}

/** The delivery state of calls, by id (shown with the run records that made them). */
export async function callStates(db: Database, ids: string[]): Promise<Map<string, CallState>> {
  if (ids.length === 0) return new Map();
  const { rows } = await db.query<{
    id: string;
    status: CallState['status'];
    attempt_count: number;
    last_status_code: number | null;
    last_error: string | null;
  }>(
    'SELECT id, status, attempt_count, last_status_code, last_error FROM automation_calls WHERE id = ANY($1)',
    [ids],
  );
  return new Map(
    rows.map((r) => [
      r.id,
      {
        status: r.status,
        attempts: r.attempt_count,
        lastStatusCode: r.last_status_code,
        lastError: r.last_error,
      },
    ]),
  );
}
