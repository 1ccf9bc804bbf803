// The webhook dispatcher: claims due deliveries from the database, POSTs them signed, and writes
// each result back. Every process with workers runs one; they share the work through row locks
// (SKIP LOCKED) and leases, so a delivery is attempted by one process at a time, and one claimed
// by a process that died is attempted again once its lease runs out.
//
// Fairness: a claim takes a few due deliveries from every endpoint with work (round-robin, not
// oldest-first across all), and endpoints or owners that already fill their share of this process's
// connections are left out. A slow or dead endpoint therefore only ever holds its own share, and
// one account's backlog cannot keep another account's deliveries waiting.
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../kernel/db.ts';
import type { Egress } from '../../kernel/egress.ts';
import type { Metrics } from '../../kernel/metrics.ts';
import type { SecretBox } from '../../kernel/secrets.ts';
import { DELIVERY_CHANNEL } from './outbox.ts';
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
 * Claims due deliveries: at most $2 per endpoint, round-robin across endpoints, leaving out busy
 * endpoints ($3), busy owners ($4) and deliveries this process has not settled ($7); leases them
 * until $6. $1 is now, $5 the most to claim.
 */
export const CLAIM_SQL = `
  WITH due AS (
    SELECT c.id FROM webhook_endpoints e
    CROSS JOIN LATERAL (
      SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
       WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.next_attempt_at <= $1
         AND (d.locked_until IS NULL OR d.locked_until <= $1)
         AND NOT (d.id = ANY($7::text[]))
       ORDER BY d.next_attempt_at
       LIMIT $2
       FOR UPDATE SKIP LOCKED
    ) c
    WHERE e.enabled AND NOT (e.id = ANY($3::text[]))
      AND NOT (coalesce(e.account_id, e.partner_id) = ANY($4::text[]))
    ORDER BY row_number() OVER (PARTITION BY e.id ORDER BY c.next_attempt_at), random()
    LIMIT $5
  )
  UPDATE webhook_deliveries d SET locked_until = $6
    FROM due, events ev, webhook_endpoints e
   WHERE d.id = due.id AND ev.id = d.event_id AND e.id = d.endpoint_id
  RETURNING d.id, d.endpoint_id, coalesce(e.account_id, e.partner_id) AS owner, d.event_id,
            d.attempt_count, d.attempts_allowed, e.url, e.secret_sealed, e.previous_secret_sealed,
            e.previous_secret_expires_at, ev.payload`;

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
  #wakeRequested = false;
  #wakeUp: (() => void) | null = null;

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
    this.#unlisten = await this.#db.listen(DELIVERY_CHANNEL, () => this.wake());
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

  /** Looks for due deliveries now (a NOTIFY, a freed slot, or a test that moved the clock). */
  wake(): void {
    this.#wakeRequested = true;
    const wakeUp = this.#wakeUp;
    this.#wakeUp = null;
    wakeUp?.();
  }

  /** Stops claiming, waits up to timeoutMs for attempts in flight, and writes their results. */
  async stop(timeoutMs = this.#settings.timeoutMs + 1000): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    if (this.#pruneTimer) clearInterval(this.#pruneTimer);
    this.wake();
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
      this.#wakeRequested = false;
      const free = this.#settings.concurrency - this.#inFlight.size;
      let claimed = 0;
      if (free > 0) {
        try {
          claimed = await this.#claimAndSend(free);
        } catch (err) {
          this.#log.warn({ err }, 'webhook dispatcher could not claim deliveries');
        }
      }
      if (!this.#running) break;
      // A full claim means more may be waiting; loop at once if there is room for it.
      if (this.#wakeRequested || (claimed === free && this.#inFlight.size < this.#settings.concurrency)) {
        continue;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.#settings.pollIntervalMs);
        this.#wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wakeUp = null;
    }
  }

  #busy(counts: Map<string, number>, limit: number): string[] {
    return [...counts].filter(([, n]) => n >= limit).map(([id]) => id);
  }

  async #claimAndSend(free: number): Promise<number> {
    const now = this.#now();
    const { endpointConcurrency, concurrency } = this.#settings;
    const ownerLimit = Math.max(endpointConcurrency, Math.floor(concurrency / 2));
    const { rows } = await this.#db.query<ClaimedDelivery>(CLAIM_SQL, [
      now,
      endpointConcurrency,
      this.#busy(this.#perEndpoint, endpointConcurrency),
      this.#busy(this.#perOwner, ownerLimit),
      free,
      new Date(now.getTime() + this.#leaseMs),
      [...this.#unsettled],
    ]);
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
        this.wake();
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
