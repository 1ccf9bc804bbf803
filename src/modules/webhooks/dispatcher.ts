// The webhook dispatcher: claims due deliveries from the database, POSTs them signed, and writes
// each result back. Every process with workers runs one; they share the work through row locks
// (SKIP LOCKED) and leases, so a delivery is attempted by one process at a time, and one claimed
// by a process that died is attempted again once its lease runs out.
//
// Fairness: a claim takes a few due deliveries from each of the next endpoints with work in turn
// (round-robin, not oldest-first across all), and endpoints or owners that already fill their share
// of this process's connections are left out. A slow or dead endpoint therefore only ever holds its
// own share, and one account's backlog cannot keep another account's deliveries waiting.
//
// Which endpoints have work is kept in memory (#turns, in round-robin order), so that a claim
// probes only the endpoints it takes from, whatever the number of endpoints: the NOTIFY sent with
// new deliveries names their endpoints, and a survey of every enabled endpoint (at start, every
// poll interval, on wake()) finds the rest: retries coming due, leases run out, missed
// notifications. An endpoint whose probe finds nothing left leaves the rotation until one of those
// names it again (docs/history/issue-27.md, "Issue 27: webhook claims at 10,000 endpoints").
import type { FastifyBaseLogger } from 'fastify';
import { WakeSignal } from '../../kernel/async/wake-signal.ts';
import type { SecretBox } from '../../kernel/crypto/secrets.ts';
import type { Database } from '../../kernel/database/db.ts';
import type { Metrics } from '../../kernel/observability/metrics.ts';
import type { Egress } from '../../kernel/outbound/egress.ts';
import { DELIVERY_CHANNEL, parseWakePayload } from './outbox.ts';
import { type ClaimedDelivery, judge, type Outcome, writeOutcomes } from './outcomes.ts';
import { pruneOlderThan } from './retention.ts';
import { signatureHeaders } from './signing.ts';

export interface DispatcherSettings {
  /** Attempts in flight at once in this process. */
  concurrency: number;
  /** Attempts in flight at once to one endpoint. */
  endpointConcurrency: number;
  timeoutMs: number;
  /** How often to look for due deliveries when nothing wakes the dispatcher. */
  pollIntervalMs: number;
  /** Events and finished deliveries older than this many days are deleted (hourly). */
  retentionDays: number;
}

const USER_AGENT = 'Tidings-Webhooks/1.0';
const BATCH_WRITE_LIMIT = 500;
const PRUNE_EVERY_MS = 3600_000;

/**
 * Claims due deliveries of the endpoints in $2, in that order (their turns), at most $3[i] of the
 * i-th (the takes add up to $5 at most): first one of each, then a second of each, and so on,
 * leaving out deliveries this process has not settled ($4); leases them until $6. $1 is now.
 */
export const CLAIM_SQL = `
  WITH due AS (
    SELECT c.id FROM unnest($2::text[], $3::int[]) WITH ORDINALITY AS p (endpoint_id, take, turn)
    CROSS JOIN LATERAL (
      SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
       WHERE d.endpoint_id = p.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= $1
         AND (d.locked_until IS NULL OR d.locked_until <= $1)
         AND NOT (d.id = ANY($4::text[]))
         -- (Inside, so that the endpoint is looked up by its key: joined, the planner hashed the
         -- whole table of endpoints for every claim.)
         AND EXISTS (SELECT 1 FROM webhook_endpoints e WHERE e.id = p.endpoint_id AND e.enabled)
       ORDER BY d.next_attempt_at
       LIMIT p.take
       FOR UPDATE SKIP LOCKED
    ) c
    ORDER BY row_number() OVER (PARTITION BY p.endpoint_id ORDER BY c.next_attempt_at), p.turn
    LIMIT $5
  )
  UPDATE webhook_deliveries d SET locked_until = $6
    FROM due, events ev, webhook_endpoints e
   WHERE d.id = due.id AND ev.id = d.event_id AND e.id = d.endpoint_id
  RETURNING d.id, d.endpoint_id, coalesce(e.account_id, e.partner_id) AS owner, d.event_id,
            d.attempt_count, d.attempts_allowed, e.url, e.secret_sealed, e.previous_secret_sealed,
            e.previous_secret_expires_at, ev.payload`;

/**
 * The enabled endpoints with a delivery due and not leased at $1: one probe of the due-deliveries
 * index per enabled endpoint (about 15 ms at 10,000 endpoints), once per poll interval.
 */
export const SURVEY_SQL = `
  SELECT e.id, coalesce(e.account_id, e.partner_id) AS owner FROM webhook_endpoints e
   WHERE e.enabled AND EXISTS (
     SELECT 1 FROM webhook_deliveries d
      WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.next_attempt_at <= $1
        AND (d.locked_until IS NULL OR d.locked_until <= $1))`;

/** An endpoint in the rotation: its owner, and when it was last named (#named's count then). */
interface Turn {
  owner: string;
  named: number;
}

export class WebhookDispatcher {
  readonly #db: Database;
  readonly #egress: Egress;
  readonly #secrets: SecretBox;
  readonly #metrics: Metrics;
  readonly #now: () => Date;
  readonly #log: FastifyBaseLogger;
  readonly #settings: DispatcherSettings;

  #running = false;
  #loopDone: Promise<void> = Promise.resolve();
  #unlisten: (() => Promise<void>) | null = null;
  #pruneTimer: NodeJS.Timeout | null = null;
  /** Wakes the claiming loop (kernel/async/wake-signal.ts). */
  readonly #signal = new WakeSignal();

  // Endpoints that may have due work, in the order of their turns (a Map keeps insertion order; a
  // served endpoint goes to the back). #named counts every naming, so a claim drops an endpoint it
  // found empty only if nothing named it again while the claim ran.
  readonly #turns = new Map<string, Turn>();
  #named = 0;
  #surveyRequested = true;
  #surveyedAt = Number.NEGATIVE_INFINITY;

  readonly #inFlight = new Map<string, Promise<void>>();
  // Claimed here and not yet written back (in flight, or its result waiting to be written): never
  // claimed again by this process, even if its lease looks run out (a clock jump, a slow write).
  readonly #unsettled = new Set<string>();
  readonly #perEndpoint = new Map<string, number>();
  readonly #perOwner = new Map<string, number>();
  #outcomes: Outcome[] = [];
  #flushTimer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> | null = null;
  readonly #opened = new Map<string, string>();

  constructor(deps: {
    db: Database;
    egress: Egress;
    secrets: SecretBox;
    metrics: Metrics;
    now: () => Date;
    log: FastifyBaseLogger;
    settings: DispatcherSettings;
  }) {
    this.#db = deps.db;
    this.#egress = deps.egress;
    this.#secrets = deps.secrets;
    this.#metrics = deps.metrics;
    this.#now = deps.now;
    this.#log = deps.log;
    this.#settings = deps.settings;
  }

  get running(): boolean {
    return this.#running;
  }

  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    this.#surveyRequested = true;
    this.#unlisten = await this.#db.listen(DELIVERY_CHANNEL, (payload) => {
      const named = parseWakePayload(payload);
      if (named === null) this.#surveyRequested = true;
      else for (const { endpoint, owner } of named) this.#name(endpoint, owner);
      this.#kick();
    });
    this.#loopDone = this.#loop();
    this.#pruneTimer = setInterval(() => void this.prune(), PRUNE_EVERY_MS).unref();
  }

  /** Deletes events and finished deliveries past the retention period; answers how many. */
  async prune(): Promise<{ deliveries: number; events: number }> {
    const cutoff = new Date(this.#now().getTime() - this.#settings.retentionDays * 24 * 3600 * 1000);
    try {
      const pruned = await pruneOlderThan(this.#db, cutoff);
      if (pruned.deliveries + pruned.events > 0) this.#log.info(pruned, 'pruned old events and deliveries');
      return pruned;
    } catch (err) {
      this.#log.warn({ err }, 'could not prune old events');
      return { deliveries: 0, events: 0 };
    }
  }

  /** Looks at every endpoint for due deliveries now (a test that moved the clock, say). */
  wake(): void {
    this.#surveyRequested = true;
    this.#kick();
  }

  /** Claims again now (new work named, or a slot freed). */
  #kick(): void {
    this.#signal.wake();
  }

  /** Stops claiming, waits up to timeoutMs for attempts in flight, and writes their results. */
  async stop(timeoutMs = this.#settings.timeoutMs + 1000): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    if (this.#pruneTimer) clearInterval(this.#pruneTimer);
    this.#kick();
    await this.#unlisten?.();
    await this.#loopDone;
    await Promise.race([
      Promise.allSettled(this.#inFlight.values()),
      new Promise((resolve) => setTimeout(resolve, timeoutMs).unref()),
    ]);
    await this.#flush();
  }

  // Lease: long enough for the slowest attempt and the write of its result.
  get #leaseMs(): number {
    return 2 * this.#settings.timeoutMs + 5000;
  }

  async #loop(): Promise<void> {
    while (this.#running) {
      const mark = this.#signal.mark;
      const free = this.#settings.concurrency - this.#inFlight.size;
      let claimed = 0;
      try {
        if (this.#surveyRequested || performance.now() - this.#surveyedAt >= this.#settings.pollIntervalMs) {
          await this.#survey();
        }
        if (free > 0) claimed = await this.#claimAndSend(free);
      } catch (err) {
        this.#log.warn({ err }, 'webhook dispatcher could not claim deliveries');
      }
      if (!this.#running) break;
      // A claim that found work may have left more; loop at once if there is room for it.
      if (
        this.#signal.wokenSince(mark) ||
        (claimed > 0 && this.#inFlight.size < this.#settings.concurrency)
      ) {
        continue;
      }
      await this.#signal.sleep(this.#settings.pollIntervalMs);
    }
  }

  /** Puts an endpoint in the rotation (at the back), or marks it named again where it stands. */
  #name(endpoint: string, owner: string): void {
    this.#turns.set(endpoint, { owner, named: ++this.#named });
  }

  async #survey(): Promise<void> {
    this.#surveyRequested = false;
    this.#surveyedAt = performance.now();
    try {
      const { rows } = await this.#db.query<{ id: string; owner: string }>(SURVEY_SQL, [this.#now()]);
      for (const row of rows) this.#name(row.id, row.owner);
    } catch (err) {
      this.#surveyRequested = true;
      throw err;
    }
  }

  async #claimAndSend(free: number): Promise<number> {
    const { endpointConcurrency, concurrency } = this.#settings;
    const ownerLimit = Math.max(endpointConcurrency, Math.floor(concurrency / 2));
    // The next endpoints in turn, as many as there are free slots, leaving out those already using
    // their share; each takes one delivery, and the slots left are dealt out among them in turn, so
    // that the probes lock no more deliveries than the claim can send.
    const picked: { endpoint: string; room: number; take: number }[] = [];
    for (const [endpoint, turn] of this.#turns) {
      if (picked.length >= free) break;
      const room = endpointConcurrency - (this.#perEndpoint.get(endpoint) ?? 0);
      if (room <= 0 || (this.#perOwner.get(turn.owner) ?? 0) >= ownerLimit) continue;
      picked.push({ endpoint, room, take: 1 });
    }
    for (let left = free - picked.length, dealt = 1; left > 0 && dealt > 0; ) {
      dealt = 0;
      for (const p of picked) {
        if (left === 0) break;
        if (p.take < p.room) {
          p.take++;
          left--;
          dealt++;
        }
      }
    }
    if (picked.length === 0) return 0;
    const namedBefore = this.#named;
    const now = this.#now();
    const { rows } = await this.#db.query<ClaimedDelivery>(CLAIM_SQL, [
      now,
      picked.map((p) => p.endpoint),
      picked.map((p) => p.take),
      [...this.#unsettled],
      free,
      new Date(now.getTime() + this.#leaseMs),
    ]);
    const got = new Map<string, number>();
    for (const claimed of rows) got.set(claimed.endpoint_id, (got.get(claimed.endpoint_id) ?? 0) + 1);
    for (const { endpoint, take } of picked) {
      const turn = this.#turns.get(endpoint);
      if (!turn) continue;
      const n = got.get(endpoint) ?? 0;
      // Fewer than asked: nothing else of its is due now.
      const drained = n < take;
      this.#turns.delete(endpoint);
      if (!drained || turn.named > namedBefore) this.#turns.set(endpoint, turn);
    }
    for (const claimed of rows) this.#start(claimed);
    return rows.length;
  }

  #start(claimed: ClaimedDelivery): void {
    const bump = (counts: Map<string, number>, key: string, by: number) => {
      const n = (counts.get(key) ?? 0) + by;
      if (n > 0) counts.set(key, n);
      else counts.delete(key);
    };
    this.#unsettled.add(claimed.id);
    bump(this.#perEndpoint, claimed.endpoint_id, 1);
    bump(this.#perOwner, claimed.owner, 1);
    const attempt = this.#attempt(claimed)
      .catch((err) => {
        // No result to write: the lease runs out and the delivery is attempted again.
        this.#unsettled.delete(claimed.id);
        this.#log.error({ err, deliveryId: claimed.id }, 'webhook attempt crashed');
      })
      .finally(() => {
        this.#inFlight.delete(claimed.id);
        bump(this.#perEndpoint, claimed.endpoint_id, -1);
        bump(this.#perOwner, claimed.owner, -1);
        this.#kick();
      });
    this.#inFlight.set(claimed.id, attempt);
  }

  #open(sealed: string): string {
    let plain = this.#opened.get(sealed);
    if (plain === undefined) {
      if (this.#opened.size > 10_000) this.#opened.clear();
      plain = this.#secrets.open(sealed);
      this.#opened.set(sealed, plain);
    }
    return plain;
  }

  async #attempt(claimed: ClaimedDelivery): Promise<void> {
    const attemptedAt = this.#now();
    const secrets = [this.#open(claimed.secret_sealed)];
    if (
      claimed.previous_secret_sealed &&
      claimed.previous_secret_expires_at &&
      claimed.previous_secret_expires_at > attemptedAt
    ) {
      secrets.push(this.#open(claimed.previous_secret_sealed));
    }
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      ...signatureHeaders(
        secrets,
        claimed.event_id,
        Math.floor(attemptedAt.getTime() / 1000),
        claimed.payload,
      ),
    };
    const result = await this.#egress.post(claimed.url, claimed.payload, headers);
    const outcome = judge(claimed, result, attemptedAt);
    const label = outcome.status === 'pending' ? 'retrying' : outcome.status;
    this.#metrics.webhookAttempts.inc({ outcome: label });
    this.#metrics.webhookLatency.observe({ outcome: label }, result.latencyMs / 1000);
    this.#outcomes.push(outcome);
    this.#scheduleFlush();
  }

  #scheduleFlush(): void {
    if (this.#flushTimer || this.#flushing) return;
    // A few milliseconds of gathering turns many results into one write.
    this.#flushTimer = setTimeout(() => {
      this.#flushTimer = null;
      void this.#flush();
    }, 2);
  }

  async #flush(): Promise<void> {
    if (this.#flushing) return this.#flushing;
    this.#flushing = (async () => {
      let failures = 0;
      while (this.#outcomes.length > 0) {
        const batch = this.#outcomes.splice(0, BATCH_WRITE_LIMIT);
        try {
          const disabled = await writeOutcomes(this.#db, batch, this.#now());
          for (const o of batch) this.#unsettled.delete(o.deliveryId);
          if (disabled.length > 0) this.#log.info({ webhookIds: disabled }, 'webhooks disabled');
          failures = 0;
        } catch (err) {
          // The database is away: keep the results and try again; the leases keep the deliveries
          // from being attempted twice meanwhile.
          this.#outcomes.unshift(...batch);
          this.#log.warn({ err }, 'could not record webhook attempts');
          if (++failures >= 5 && !this.#running) break;
          await new Promise((resolve) => setTimeout(resolve, 500 * failures).unref());
        }
      }
    })();
    try {
      await this.#flushing;
    } finally {
      this.#flushing = null;
    }
    if (this.#outcomes.length > 0 && this.#running) this.#scheduleFlush();
  }
}
