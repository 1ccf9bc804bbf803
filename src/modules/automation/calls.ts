// The call_webhook action (docs/automation.md § call_webhook). The run writes the call in its own
// transaction (queueCall): the URL, and the JSON to send, fixed then (the action's body rendered,
// with the run and the event added). After commit the CallSender posts it through the egress check,
// signed like webhook deliveries (Standard Webhooks headers, `webhook-id` the call's id) with the
// rule's own secret, and retries a failure on the webhooks' schedule until it is used up: at least
// once, as every webhook. A worker holds a call it took for a lease; one that crashed mid-attempt
// leaves it to be taken again when the lease ends.
import type { FastifyBaseLogger } from 'fastify';
import type { Database, Tx } from '../../kernel/db.ts';
import type { Egress } from '../../kernel/egress.ts';
import { newId } from '../../kernel/ids.ts';
import type { SecretBox } from '../../kernel/secrets.ts';
import { retryDelayMs } from '../webhooks/schedule.ts';
import { signatureHeaders } from '../webhooks/signing.ts';

const USER_AGENT = 'Tidings-Automation/1.0';
/** Calls taken per round. */
const BATCH = 20;

export async function queueCall(
  tx: Tx,
  call: { accountId: string; ruleId: string; runId: string; url: string; payload: object },
  now: Date,
): Promise<string> {
  const id = newId('automationCall');
  await tx.query(
    `INSERT INTO automation_calls (id, account_id, rule_id, run_id, url, payload, next_attempt_at, created_at,
                                   updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $7)`,
    [id, call.accountId, call.ruleId, call.runId, call.url, JSON.stringify(call.payload), now],
  );
  return id;
}

interface Claimed {
  id: string;
  url: string;
  payload: string;
  attempt_count: number;
  signing_secret_sealed: string | null;
}

export interface CallSenderDeps {
  db: Database;
  egress: Egress;
  secrets: SecretBox;
  now: () => Date;
  log: FastifyBaseLogger;
  /** How long a taken call is held: longer than an attempt can last. */
  leaseMs: number;
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
                ORDER BY next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED) due,
              rules r
        WHERE c.id = due.id AND r.id = c.rule_id
        RETURNING c.id, c.url, c.payload, c.attempt_count, r.signing_secret_sealed`,
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
    const result = await this.#d.egress.post(call.url, call.payload, headers);
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const attempts = call.attempt_count + 1;
    const wait = ok ? null : retryDelayMs(attempts, result.retryAfterSeconds);
    const status = ok ? 'succeeded' : wait === null ? 'failed' : 'pending';
    if (status === 'failed') {
      this.#d.log.warn(
        { callId: call.id, error: result.error, statusCode: result.statusCode },
        'call_webhook gave up',
      );
    }
    await this.#d.db.query(
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
