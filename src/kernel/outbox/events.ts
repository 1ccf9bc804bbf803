// The event outbox. emit(tx, event) writes an event, and what each subscriber adds for it, in the
// caller's transaction: a change and the events it causes commit together, a rolled-back change
// emits nothing, and a committed event survives any crash (each subscriber's consumers find its rows
// in their table). Subscribers are the modules that act on events: webhook fan-out adds one pending
// delivery per matching webhook (modules/webhooks/outbox.ts), automation a row for its engine. The
// kernel knows none of their tables: each subscriber gives the outbox a lookup (a subquery per
// account) and an INSERT, and the outbox writes a batch of events with one lookup statement and one
// write statement whatever the number of subscribers. A NOTIFY, sent by PostgreSQL only at commit,
// wakes a subscriber's consumers.

import type { Tx } from '../database/db.ts';
import { newId } from '../values/ids.ts';
import { type HookName, type HookPayloads, Hooks } from './hooks.ts';

export const EVENT_TYPES = [
  'message.received',
  'message.sent',
  'message.delivered',
  'message.read',
  'message.failed',
  'message.scheduled',
  'message.canceled',
  'contact.created',
  'contact.updated',
  'contact.deleted',
  'contact.erased',
  'contact.merged',
  'contact.tagged',
  'contact.untagged',
  'conversation.opened',
  'conversation.assigned',
  'conversation.closed',
  'conversation.labeled',
  'conversation.mentioned',
  'conversation.snoozed',
  'conversation.unsnoozed',
  'conversation.sla_breached',
  'csat.received',
  'template.status_changed',
  'template.quality_changed',
  'template.category_changed',
  'bulk_job.completed',
  'wallet.credited',
  'wallet.low_balance',
  'account.status_changed',
  'channel.quality_changed',
  'channel.account_updated',
  'channel.error',
  'channel.connected',
  'channel.disconnected',
  'call.status_changed',
  'campaign.status_changed',
  'journey_run.completed',
  'journey_run.failed',
  'rule.run_failed',
  'enrollment.completed',
  'enrollment.exited',
  'webhook.test',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const EVENT_FAMILIES = [...new Set(EVENT_TYPES.map((t) => t.split('.')[0]!))];

/** Why a subscription filter is not valid, or null: an exact type, `family.*` or `*`. */
export function filterProblem(filter: string): string | null {
  if (filter === '*') return null;
  if (filter.endsWith('.*')) {
    return EVENT_FAMILIES.includes(filter.slice(0, -2)) ? null : `"${filter}" names no event family`;
  }
  return (EVENT_TYPES as readonly string[]).includes(filter) ? null : `"${filter}" is not an event type`;
}

/** An event caused by automation names its cause; a chain of such causes is bounded by `depth`. */
export interface CausedBy {
  kind: 'rule' | 'sequence' | 'journey';
  /** The rule, sequence or journey. */
  id: string;
  /** Its run (a rule run, an enrollment, a journey run). */
  runId: string;
  /** 1 for an effect of a run started by a user's event, one more for each automation in between. */
  depth: number;
}

export interface EventInput {
  type: EventType;
  /** The account the event is about; null only for a partner-level event (a partner webhook test). */
  accountId: string | null;
  /** The resource as the API shows it, plus `previousStatus` on status changes. */
  data: object;
  /** Set when automation caused it. */
  causedBy?: CausedBy;
}

/** An event as it is stored and delivered. */
export interface EventEnvelope {
  id: string;
  type: EventType;
  createdAt: string;
  accountId: string | null;
  data: object;
  causedBy?: CausedBy;
}

export interface EmittedEvent extends EventEnvelope {
  /** The ids of the rows each subscriber added for it (`webhooks`: the deliveries made). */
  added: Record<string, string[]>;
}

/**
 * A module that acts on events. Its rows are written in the emitting transaction, so they exist
 * exactly when the event does.
 */
export interface OutboxSubscriber<A = unknown> {
  /** Names its rows in EmittedEvent.added. */
  readonly name: string;
  /**
   * A scalar subquery, over the account row `a` (columns id and partner_id), answering as JSON what
   * the subscriber needs to route that account's events (null when it needs nothing).
   */
  readonly lookup: string;
  /** The rows it adds for one event, each with its own `id`, given the lookup's answer. */
  rows(event: EventEnvelope, audience: A | null): { id: string }[];
  /**
   * One data-modifying CTE body inserting the rows from `jsonb_to_recordset(<rows>)`; `<rows>` and
   * `<now>` are placeholders for the parameters the outbox passes.
   */
  readonly insert: string;
  /** NOTIFY'd at commit when it added rows. */
  readonly channel?: string;
  /** The NOTIFY's payload, given the rows it added ('' when not set). */
  notifyPayload?(rows: { id: string }[]): string;
}

export class EventOutbox {
  readonly #now: () => Date;
  readonly #subscribers: OutboxSubscriber[];
  /** Given to every event emitted through this outbox that names no cause of its own. */
  readonly #cause: CausedBy | null;
  /** The in-transaction hooks (hooks.ts): lower modules run them, higher ones subscribe in app.ts. */
  readonly hooks: Hooks;

  constructor(
    now: () => Date,
    subscribers: OutboxSubscriber<never>[] = [],
    shared?: { subscribers: OutboxSubscriber[]; hooks: Hooks; cause: CausedBy },
  ) {
    this.#now = now;
    this.#subscribers = shared?.subscribers ?? [];
    this.hooks = shared?.hooks ?? new Hooks();
    this.#cause = shared?.cause ?? null;
    for (const s of subscribers) this.subscribe(s);
  }

  /**
   * The same outbox, marking what it emits with `cause`: automation gives it to the services its
   * actions call, so the events they emit say which run caused them.
   */
  withCause(cause: CausedBy): EventOutbox {
    return new EventOutbox(this.#now, [], { subscribers: this.#subscribers, hooks: this.hooks, cause });
  }

  /** Runs a hook (hooks.ts) with this outbox: what its handlers emit carries this outbox's cause. */
  hook<K extends HookName>(tx: Tx, name: K, payload: HookPayloads[K]): Promise<void> {
    return this.hooks.run(tx, name, payload, this);
  }

  subscribe<A>(subscriber: OutboxSubscriber<A>): void {
    if (this.#subscribers.some((s) => s.name === subscriber.name)) {
      throw new Error(`outbox subscriber ${subscriber.name} is already registered`);
    }
    this.#subscribers.push(subscriber as OutboxSubscriber);
  }

  /**
   * Records the event in the caller's transaction with what each subscriber adds for it. `to`
   * skips the lookups: the event goes to the named subscribers alone, with the audience given (a
   * webhook's test event to that one webhook), and belongs to `partnerId` when the account is null.
   */
  async emit(
    tx: Tx,
    event: EventInput,
    options: { to?: { audiences: Record<string, unknown>; partnerId?: string | null } } = {},
  ): Promise<EmittedEvent> {
    if (options.to) {
      const { audiences, partnerId = null } = options.to;
      const [emitted] = await this.#write(tx, [event], (subscriber) =>
        subscriber.name in audiences ? { partnerId, audience: audiences[subscriber.name] } : null,
      );
      return emitted!;
    }
    const [emitted] = await this.emitMany(tx, [event]);
    return emitted!;
  }

  /**
   * Emits several events, of any accounts, at once: one lookup for all their accounts and one
   * statement for all the events and every subscriber's rows (a bulk job's chunk, a batch of
   * statuses).
   */
  async emitMany(tx: Tx, events: EventInput[]): Promise<EmittedEvent[]> {
    if (events.length === 0) return [];
    const accounts = [...new Set(events.map((e) => e.accountId).filter((a): a is string => a !== null))];
    const byAccount = new Map<string, { partnerId: string | null; audiences: unknown[] }>();
    if (accounts.length > 0) {
      const columns = this.#subscribers.map((s, i) => `, (${s.lookup}) AS s${i}`).join('');
      const { rows } = await tx.query<Record<string, unknown> & { id: string; partner_id: string | null }>(
        `SELECT a.id, a.partner_id${columns} FROM accounts a WHERE a.id = ANY($1::text[])`,
        [accounts],
      );
      for (const r of rows) {
        byAccount.set(r.id, {
          partnerId: r.partner_id,
          audiences: this.#subscribers.map((_, i) => r[`s${i}`] ?? null),
        });
      }
    }
    return this.#write(tx, events, (subscriber, event) => {
      const account = byAccount.get(event.accountId ?? '');
      if (!account) return { partnerId: null, audience: null };
      return {
        partnerId: account.partnerId,
        audience: account.audiences[this.#subscribers.indexOf(subscriber)],
      };
    });
  }

  async #write(
    tx: Tx,
    events: EventInput[],
    audienceOf: (
      subscriber: OutboxSubscriber,
      event: EventInput,
    ) => { partnerId: string | null; audience: unknown } | null,
  ): Promise<EmittedEvent[]> {
    const createdAt = this.#now();
    const emitted: EmittedEvent[] = [];
    const rows: {
      id: string;
      account_id: string | null;
      partner_id: string | null;
      type: string;
      payload: string;
    }[] = [];
    const added = this.#subscribers.map(() => [] as { id: string }[]);
    for (const event of events) {
      const envelope: EventEnvelope = {
        id: newId('event'),
        type: event.type,
        createdAt: createdAt.toISOString(),
        accountId: event.accountId,
        data: event.data,
        ...(event.causedBy || this.#cause ? { causedBy: event.causedBy ?? this.#cause! } : {}),
      };
      let partnerId: string | null = null;
      const ids: Record<string, string[]> = {};
      for (const [i, subscriber] of this.#subscribers.entries()) {
        const routed = audienceOf(subscriber, event);
        if (!routed) continue;
        partnerId = routed.partnerId;
        const made = subscriber.rows(envelope, routed.audience);
        ids[subscriber.name] = made.map((r) => r.id);
        added[i]!.push(...made);
      }
      // The envelope is serialised once: every retry sends the same signed bytes.
      rows.push({
        id: envelope.id,
        account_id: event.accountId,
        partner_id: partnerId,
        type: event.type,
        payload: JSON.stringify(envelope),
      });
      emitted.push({ ...envelope, added: ids });
    }
    // One JSON parameter per table: serialising hundreds of rows as JSON is several times cheaper
    // than as PostgreSQL array literals.
    const params: unknown[] = [createdAt, JSON.stringify(rows)];
    const ctes: string[] = [];
    const notifies: string[] = [];
    for (const [i, subscriber] of this.#subscribers.entries()) {
      if (added[i]!.length === 0) continue;
      params.push(JSON.stringify(added[i]));
      const rowsParam = `$${params.length}::jsonb`;
      ctes.push(
        `, s${i} AS (${subscriber.insert.replaceAll('<rows>', rowsParam).replaceAll('<now>', '$1')} RETURNING 1)`,
      );
      if (subscriber.channel) {
        const payload = subscriber.notifyPayload?.(added[i]!) ?? '';
        notifies.push(
          `SELECT pg_notify('${subscriber.channel}', $${params.push(payload)}::text) WHERE EXISTS (SELECT 1 FROM s${i})`,
        );
      }
    }
    await tx.query(
      `WITH new_events AS (
         INSERT INTO events (id, account_id, partner_id, type, payload, created_at)
         SELECT e.id, e.account_id, e.partner_id, e.type, e.payload, $1
           FROM jsonb_to_recordset($2::jsonb) AS e (id text, account_id text, partner_id text, type text, payload text)
         RETURNING 1
       )${ctes.join('')}
       ${notifies.length > 0 ? notifies.join(' UNION ALL ') : 'SELECT 1 WHERE EXISTS (SELECT 1 FROM new_events)'}`,
      params,
    );
    return emitted;
  }
}
