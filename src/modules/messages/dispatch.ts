// The dispatch job: hands accepted messages to their provider. Each of a process's dispatch loops
// takes a batch of jobs and sends their messages concurrently (those to the same number one after
// another, in the order they were accepted; at most TIDINGS_DISPATCH_CONCURRENCY in flight in the
// whole process), and records the outcomes through applyStatuses: the batch's in one transaction
// when they all come back within RECORD_WITHIN_MS, else those back so far while a slow hand-over
// is still out, so one provider that hangs holds up neither its batch nor the other loops:
//   accepted → sent (and, on the sandbox, the simulated delivery: played at once where its delay
//              is 0, scheduled otherwise);
//   rejected → failed, refunded;
//   retry    → a new job after a growing delay (or the provider's Retry-After), until the retries
//              run out → failed, refunded.
//
// Exactly once, across crashes. A message is sent only while it is `queued`, and only after its
// hand-over was claimed: `handover_started_at` set and committed before the provider is called. A
// job run again (its worker died, or it failed after calling the provider) finds its messages
// claimed and still queued: in doubt, since the provider may have taken them. They are not sent
// again at once. WhatsApp echoes our message id (biz_opaque_callback_data) in the status callback
// of every message it took, which settles the message as sent with its provider id; only a
// message no callback has claimed after TIDINGS_DISPATCH_IN_DOUBT_SECONDS is sent again (then at
// least once: a callback that never came). The sandbox has no outside effect, so it resends at once.
import type { FastifyBaseLogger } from 'fastify';
import { ChannelNotConfigured, type Channels } from '../../channels/registry.ts';
import { simulatedStatuses } from '../../channels/sandbox/simulation.ts';
import { sandboxUserId, sandboxUsername } from '../../channels/sandbox/user-ids.ts';
import type { ChannelConfig } from '../../channels/settings.ts';
import type { MessageContent, ProviderError, SendOutcome } from '../../channels/types.ts';
import { Slots } from '../../kernel/async/slots.ts';
import type { Database, Sql } from '../../kernel/database/db.ts';
import type { JobDefinition, Jobs } from '../../kernel/jobs/jobs.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { idAt } from '../../kernel/values/ids.ts';
import { type IdentityReport, rememberIdentities } from '../contacts/index.ts';
import { ERASED } from '../erasure/index.ts';
import type { MediaStore } from '../media/index.ts';
import type { TemplateRow } from '../templates/index.ts';
import { type ChannelRow, noteTokenRefused, toChannelConfig } from '../whatsapp-channel/index.ts';
import { DISPATCH_JOB } from './accept.ts';
import { AccountBudget } from './account-budget.ts';
import { PhoneOrder } from './phone-order.ts';
import { addressOf, MESSAGE_COLUMNS, type MessageRow, type OutboundContent } from './repo.ts';
import { changesOf, type SandboxPlay, scheduleLater, split } from './sandbox-job.ts';
import { applyStatuses, type TargetedChange } from './status.ts';

export interface DispatchDeps {
  db: Database;
  /** Gives sends by upload id the provider's id for the file. */
  media: Pick<MediaStore, 'withProviderMedia'>;
  jobs: Jobs;
  events: EventOutbox;
  channels: Channels;
  now: () => Date;
  log: FastifyBaseLogger;
  /** Messages handed to providers at once by each process (by all its dispatch loops together). */
  concurrency: number;
  /** Messages of one account each process holds for hand-over at once (account-budget.ts). */
  accountConcurrency: number;
  /** How long a provider call may take: a message is never sent again before it has timed out. */
  providerTimeoutMs: number;
  retryLimit: number;
  retryDelaySeconds: number;
  /** How long a message in doubt waits for its provider's callback before it is sent again. */
  inDoubtSeconds: number;
  /** How long a job may run before pg-boss presumes its worker dead and runs it again. */
  expireInSeconds: number;
}

/** A batch's messages (those accepted, or retried, together), and how many tries they have had. */
export interface DispatchJob {
  messageIds: string[];
  /** Retries so far. */
  attempt?: number;
}

const MAX_RETRY_DELAY_SECONDS = 3600;
/** Dispatch loops in each process: a batch waiting on a slow provider holds up only its own jobs. */
const DISPATCH_LOOPS = 4;
/**
 * How long a finished hand-over waits to be recorded with the rest of its batch. A batch whose
 * messages all come back sooner is recorded in one transaction; one with a slow hand-over records
 * the others meanwhile instead of keeping them `queued` until the slow one ends (a timeout, 15 s).
 */
const RECORD_WITHIN_MS = 200;
/**
 * How long a loop waits for its batch's hand-overs before it moves on to its next batch. Slower
 * ones go on without it and are recorded when they end; a loop is never held by a hung provider.
 */
const HOLD_LOOP_MS = 200;
/** How long a message waits for one of its account's places before it is given back for later. */
const BUDGET_WAIT_MS = 1000;
/** When messages given back come back for another try. */
const DEFER_MS = 1000;
/**
 * An older message to the same number accepted less than this long ago and not claimed yet holds
 * a newer one back at its claim (phone-order.ts), so that the older goes first. Older than this,
 * it is waiting out a provider's retry delay, and the newer ones no longer wait for it.
 */
const ORDER_WINDOW_MS = 60_000;

function contentOf(message: MessageRow, template: Loaded['template']): MessageContent | ProviderError {
  // Queued when its contact was erased: nothing of it is left to send, nor anyone to send it to.
  if (message.phone === ERASED) {
    return {
      code: 'CONTACT_ERASED',
      message: 'The contact was erased before the message went.',
      providerCode: null,
    };
  }
  // Only outbound messages are dispatched.
  const c = message.content as OutboundContent;
  if ('template' in c) {
    if (!template) {
      return {
        code: 'TEMPLATE_NOT_USABLE',
        message: 'The template was deleted before the message was sent.',
        providerCode: null,
      };
    }
    const { parameters, buttonPayloads } = c.template;
    return {
      type: 'template',
      template: { ...template, parameters, ...(buttonPayloads ? { buttonPayloads } : {}) },
    };
  }
  if ('text' in c) return { type: 'text', text: c.text };
  if ('media' in c) {
    // Stored as sent (`id`: an upload); the adapter gets it as `mediaId`.
    const { id, ...media } = c.media as Extract<MessageContent, { type: 'media' }>['media'] & { id?: string };
    return { type: 'media', media: id === undefined ? media : { ...media, mediaId: id } };
  }
  if ('location' in c) {
    const { latitude, longitude, name, address } = c.location;
    const location = { latitude, longitude, ...(name ? { name } : {}), ...(address ? { address } : {}) };
    return { type: 'location', location };
  }
  if ('contacts' in c)
    return {
      type: 'contacts',
      contacts: c.contacts as unknown as Extract<MessageContent, { type: 'contacts' }>['contacts'],
    };
  if ('reaction' in c) {
    const { providerMessageId, emoji } = c.reaction;
    return { type: 'reaction', reaction: { providerMessageId: providerMessageId ?? '', emoji } };
  }
  return {
    type: 'interactive',
    interactive: c.interactive as unknown as Extract<MessageContent, { type: 'interactive' }>['interactive'],
  };
}

/**
 * A claimed message that waited for an earlier one to its number (up to a provider's timeout), as
 * it is now: its contact may have been erased meanwhile, and then it is not sent (contentOf).
 */
async function erasedMeanwhile(d: DispatchDeps, l: Loaded): Promise<Loaded> {
  const { rows } = await d.db.query<{ phone: string }>('SELECT phone FROM messages WHERE id = $1', [
    l.message.id,
  ]);
  return rows[0]?.phone === ERASED ? { ...l, message: { ...l.message, phone: ERASED } } : l;
}

/** A queued message with what sending it needs: its account's channel and its template. */
interface Loaded {
  message: MessageRow;
  channel: ChannelConfig;
  template: Pick<TemplateRow, 'name' | 'language' | 'category' | 'components'> | null;
  /** Its claim before this one (a hand-over in doubt), restored if it is left for later. */
  previous: Date | null;
}

/** An older message of the claim's message `m` to its address in `column`, not claimed yet. */
const olderUnclaimed = (column: 'phone' | 'whatsapp_user_id') => `
                 SELECT 1 FROM messages o
                  WHERE o.account_id = m.account_id AND o.${column} = m.${column}
                    AND o.id < m.id AND o.id > $4 AND o.id <> ALL($1::text[])
                    AND o.status = 'queued' AND o.accepted_at IS NULL AND o.handover_started_at IS NULL`;

/**
 * Claims the hand-over of the jobs' messages that may go now, and loads each with its channel and
 * template, in one statement committed before any provider call. A message may go if it is queued
 * and either never handed over, or in doubt for longer than the wait, or on the sandbox (which has
 * no outside effect).
 */
async function claim(d: DispatchDeps, ids: string[]): Promise<{ claimedAt: Date; loaded: Loaded[] }> {
  const now = d.now();
  const { rows } = await d.db.query<
    MessageRow & { previous: Date | null; channel: ChannelRow | null; template: Loaded['template'] }
  >(
    `WITH wanted AS (SELECT id, handover_started_at AS previous FROM messages WHERE id = ANY($1::text[])),
          claimed AS (
            UPDATE messages m SET handover_started_at = $3
              FROM wanted
             WHERE m.id = wanted.id AND m.status = 'queued' AND m.accepted_at IS NULL
               AND (m.handover_started_at IS NULL OR m.handover_started_at <= $2 OR m.provider = 'sandbox')
               -- An older message to the address, not claimed yet, goes first (phone-order.ts): to
               -- the number, or to the user id (an outbound message has one of the two).
               AND NOT EXISTS (${olderUnclaimed('phone')})
               AND NOT EXISTS (${olderUnclaimed('whatsapp_user_id')})
             RETURNING ${MESSAGE_COLUMNS.split(', ')
               .map((c) => `m.${c}`)
               .join(', ')}, wanted.previous)
     SELECT claimed.*,
            CASE WHEN c.account_id IS NULL THEN NULL
                 ELSE jsonb_build_object('provider', c.provider, 'settings', c.settings,
                                         'secrets_sealed', c.secrets_sealed, 'updated_at', c.updated_at) END AS channel,
            CASE WHEN t.id IS NULL THEN NULL
                 ELSE jsonb_build_object('name', t.name, 'language', t.language, 'category', t.category,
                                         'components', t.components) END AS template
       FROM claimed
       LEFT JOIN account_channels c ON c.account_id = claimed.account_id
       -- A template is only ever looked up in its own account.
       LEFT JOIN templates t ON t.account_id = claimed.account_id AND t.id = claimed.template_id
      ORDER BY claimed.id`,
    [
      ids,
      new Date(now.getTime() - d.inDoubtSeconds * 1000),
      now,
      idAt('message', new Date(now.getTime() - ORDER_WINDOW_MS)),
    ],
  );
  const resent = rows.filter((r) => r.previous !== null);
  if (resent.length > 0) {
    d.log.warn(
      { messageIds: resent.map((r) => r.id), inDoubtSeconds: d.inDoubtSeconds },
      'messages whose hand-over was cut off, and that no provider callback has settled, are sent again',
    );
  }
  const loaded = rows.map(({ previous, channel, template, ...message }) => ({
    message,
    channel: toChannelConfig(channel ? { ...channel, updated_at: new Date(channel.updated_at) } : null),
    template,
    previous,
  }));
  return { claimedAt: now, loaded };
}

/**
 * Leaves claimed messages for a later try: their claim is undone (if it is still this one) and a
 * job brings them back DEFER_MS from now, with the tries they had.
 */
async function defer(d: DispatchDeps, left: Loaded[], claimedAt: Date, attemptOf: Map<string, number>) {
  if (left.length === 0) return;
  await d.db.transaction(async (tx) => {
    await tx.query(
      `UPDATE messages m SET handover_started_at = r.previous
         FROM unnest($1::text[], $2::timestamptz[]) AS r (id, previous)
        WHERE m.id = r.id AND m.handover_started_at = $3`,
      [left.map((l) => l.message.id), left.map((l) => l.previous), claimedAt],
    );
    await bringBack(
      d,
      tx,
      left.map((l) => l.message.id),
      attemptOf,
      new Date(Date.now() + DEFER_MS),
    );
  });
}

async function send(d: DispatchDeps, { message, channel, template }: Loaded): Promise<SendOutcome> {
  const checked = contentOf(message, template);
  if (!('type' in checked)) return { kind: 'rejected', error: checked };
  try {
    const adapter = d.channels.adapter(channel, message.provider);
    // A send by upload id goes to Meta by Meta's id for the file (uploaded first if need be).
    const content =
      message.provider === 'whatsapp_cloud'
        ? await d.media.withProviderMedia(message.account_id, channel, checked)
        : checked;
    if (!('type' in content)) return content;
    // A quoted reply names the earlier message by the provider's id found when it was accepted.
    const replyTo = (message.content as OutboundContent).context?.providerMessageId ?? null;
    return await adapter.send({ id: message.id, to: addressOf(message), content, replyTo });
  } catch (err) {
    if (!(err instanceof ChannelNotConfigured)) throw err;
    return {
      kind: 'rejected',
      error: {
        code: 'CHANNEL_NOT_CONFIGURED',
        message: `The message was accepted for the WhatsApp Cloud API, but ${err.message}.`,
        providerCode: null,
      },
    };
  }
}

interface Outcome {
  attempt: number;
  message: MessageRow;
  outcome: SendOutcome;
  channel: ChannelConfig;
}

/** Records a batch's outcomes in one transaction. */
async function settle(d: DispatchDeps, outcomes: Outcome[]): Promise<void> {
  const retries = new Map<string, { data: DispatchJob; startAfter: Date }>();
  const changes: TargetedChange[] = [];
  const plays: SandboxPlay[] = [];
  const identities: IdentityReport[] = [];
  const inDoubt: string[] = [];
  const attempts = new Map<string, number>();
  // Campaigns whose messages the provider throttled: they slow down (campaigns/pace.ts).
  const throttled: string[] = [];
  // Accounts whose token Meta refused (190): their channel needs reconnecting (told once).
  const tokenRefused = new Map<string, ProviderError>();
  const at = d.now();
  for (const { attempt, message, outcome, channel } of outcomes) {
    const target = { accountId: message.account_id, id: message.id };
    if (outcome.kind === 'retry' && outcome.error.code === 'PROVIDER_THROTTLED' && message.campaign_id) {
      throttled.push(message.campaign_id);
    }
    if (outcome.kind === 'retry' && attempt < d.retryLimit) {
      const backoff = Math.min(MAX_RETRY_DELAY_SECONDS, d.retryDelaySeconds * 2 ** attempt);
      const seconds = Math.max(backoff, outcome.retryAfterSeconds ?? 0);
      d.log.info(
        { messageId: message.id, attempt, code: outcome.error.code, retryInSeconds: seconds },
        'message will be retried',
      );
      // Messages retried after the same wait go back as one job.
      const key = `${attempt + 1}/${seconds}`;
      const retry = retries.get(key) ?? {
        data: { messageIds: [], attempt: attempt + 1 },
        startAfter: new Date(Date.now() + seconds * 1000),
      };
      retry.data.messageIds.push(message.id);
      retries.set(key, retry);
      continue;
    }
    if (outcome.kind === 'in_doubt' && attempt < d.retryLimit) {
      // The provider may have it: the claim stays, and its callback or the in-doubt wait settles it.
      d.log.warn(
        { messageId: message.id, attempt, reason: outcome.error.message, inDoubtSeconds: d.inDoubtSeconds },
        'hand-over in doubt: waiting for the provider to say whether it took the message',
      );
      inDoubt.push(message.id);
      attempts.set(message.id, attempt + 1);
      continue;
    }
    if (outcome.kind !== 'accepted') {
      changes.push({ target, change: { status: 'failed', at, error: outcome.error } });
      if (outcome.kind === 'rejected' && outcome.error.providerCode === 190 && message.provider !== 'sandbox')
        tokenRefused.set(message.account_id, outcome.error);
      continue;
    }
    if (message.provider !== 'sandbox') {
      // Taken, not yet sent: the provider's `sent` callback says when it is (and its time is sentAt).
      changes.push({
        target,
        change: {
          status: 'accepted',
          at,
          providerMessageId: outcome.providerMessageId,
          ...(outcome.providerStatus ? { providerStatus: outcome.providerStatus } : {}),
        },
      });
    } else {
      changes.push({ target, change: { status: 'sent', at, providerMessageId: outcome.providerMessageId } });
    }
    if (outcome.recipientWaId && message.contact_id) {
      identities.push({
        accountId: message.account_id,
        contactId: message.contact_id,
        waId: outcome.recipientWaId,
      });
    }
    if (message.provider === 'sandbox' && message.contact_id && message.phone && message.phone !== ERASED) {
      // The sandbox's statuses name the recipient by user id too, as Meta's do (recipient_user_id,
      // with the username on delivered and read): the contact learns it (channels/sandbox/user-ids.ts).
      identities.push({
        accountId: message.account_id,
        contactId: message.contact_id,
        userId: sandboxUserId(message.account_id, message.phone),
        username: sandboxUsername(message.phone),
      });
    }
    if (message.provider === 'sandbox') {
      const play = split(
        { accountId: message.account_id, messageId: message.id },
        // Meta reports only `sent` for a reaction: the sandbox plays no delivery for one either.
        message.type === 'reaction' ? [] : simulatedStatuses(addressOf(message), channel.sandbox),
        false,
      );
      changes.push(...changesOf(play, at));
      plays.push(play);
    }
  }
  const notTaken = [...retries.values()].flatMap((r) => r.data.messageIds);
  await d.db.transaction(async (tx) => {
    // The provider answered that it did not take these: their next hand-over is a new claim.
    if (notTaken.length > 0) {
      await tx.query(
        `UPDATE messages SET handover_started_at = NULL WHERE id = ANY($1::text[]) AND status = 'queued'`,
        [notTaken],
      );
    }
    // Contacts before messages, the order inbound processing locks them in.
    await rememberIdentities(d, tx, identities);
    const results = await applyStatuses(d, tx, changes);
    const sent = new Set(results.flatMap((r) => (r && r.status !== 'queued' ? [r.id] : [])));
    await scheduleLater(
      d.jobs,
      tx,
      plays.filter((p) => sent.has(p.messageId)),
    );
    await d.jobs.enqueueMany(tx, DISPATCH_JOB, [...retries.values()]);
    await comeBackLater(d, tx, inDoubt, attempts);
    for (const [accountId, error] of [...tokenRefused].sort(([a], [b]) => a.localeCompare(b)))
      await noteTokenRefused(d, tx, accountId, error, at);
  });
  if (throttled.length > 0) {
    await d.db.transaction((tx) =>
      d.events.hook(tx, 'messages.campaign-throttled', { campaignIds: throttled, at }),
    );
  }
}

/** How long a claimed message waits before it may be claimed again: the in-doubt wait, at least the provider's timeout. */
function waitSeconds(d: DispatchDeps): number {
  return Math.max(d.inDoubtSeconds, Math.ceil(d.providerTimeoutMs / 1000));
}

/** A dispatch job for these messages at `startAfter`, with the tries each had. */
async function bringBack(
  d: DispatchDeps,
  sql: Sql,
  ids: string[],
  attemptOf: Map<string, number>,
  startAfter: Date,
): Promise<void> {
  const byAttempt = new Map<number, string[]>();
  for (const id of ids) {
    const attempt = attemptOf.get(id) ?? 0;
    byAttempt.set(attempt, [...(byAttempt.get(attempt) ?? []), id]);
  }
  await d.jobs.enqueueMany(
    sql,
    DISPATCH_JOB,
    [...byAttempt].map(([attempt, messageIds]) => ({ data: { messageIds, attempt }, startAfter })),
  );
}

/**
 * The jobs' messages not claimed and still to send: a job for each when it may be claimed. Those
 * in doubt (another run handed them over lately and never recorded the answer) at the end of their
 * wait, unless a callback settles them; those held behind an older message to their number a
 * moment from now.
 */
async function comeBackLater(
  d: DispatchDeps,
  sql: Sql,
  ids: string[],
  attemptOf: Map<string, number>,
): Promise<void> {
  if (ids.length === 0) return;
  const { rows } = await sql.query<{ id: string; handover_started_at: Date | null }>(
    `SELECT id, handover_started_at FROM messages
      WHERE id = ANY($1::text[]) AND status = 'queued' AND accepted_at IS NULL`,
    [ids],
  );
  const inDoubt = rows.filter((r) => r.handover_started_at !== null);
  if (inDoubt.length > 0) {
    d.log.warn(
      { messageIds: inDoubt.map((r) => r.id) },
      "messages in doubt wait for their provider's callback",
    );
  }
  const behindOlder = rows.filter((r) => r.handover_started_at === null).map((r) => r.id);
  if (behindOlder.length > 0)
    await bringBack(d, sql, behindOlder, attemptOf, new Date(Date.now() + DEFER_MS));
  await d.jobs.enqueueMany(
    sql,
    DISPATCH_JOB,
    inDoubt.map((r) => ({
      data: { messageIds: [r.id], attempt: attemptOf.get(r.id) ?? 0 },
      // A second past the wait, so the claim's `<=` finds it due; never before the hand-over can
      // have timed out (a hand-over still under way is not in doubt yet).
      startAfter: new Date(new Date(r.handover_started_at!).getTime() + (waitSeconds(d) + 1) * 1000),
    })),
  );
}

/**
 * Records a batch's outcomes as they come, each within RECORD_WITHIN_MS: those that came together
 * in one transaction, one transaction at a time (so a number's messages are recorded in order).
 * A failed recording fails the batch at the end (finish()), once every hand-over has come back.
 */
function recordAsTheyCome(d: DispatchDeps, onRecorded: (ids: string[]) => void) {
  let ready: Outcome[] = [];
  let timer: NodeJS.Timeout | null = null;
  let recorded: Promise<void> = Promise.resolve();
  let failure: { error: unknown } | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    const outcomes = ready;
    ready = [];
    if (outcomes.length > 0) {
      recorded = recorded
        .then(() => settle(d, outcomes))
        .then(() => onRecorded(outcomes.map((o) => o.message.id)))
        .catch((error) => {
          failure ??= { error };
        });
    }
    return recorded;
  };
  return {
    add(outcome: Outcome) {
      ready.push(outcome);
      timer ??= setTimeout(flush, RECORD_WITHIN_MS);
    },
    async finish() {
      await flush();
      if (failure) throw failure.error;
    },
  };
}

/**
 * What the dispatch loops of a process share: the hand-over slots, each number's turn, each
 * account's budget, and the hand-overs still running after their loop moved on.
 */
interface Shared {
  slots: Slots;
  order: PhoneOrder;
  budget: AccountBudget;
  running: Set<Promise<void>>;
}

async function dispatchAll(d: DispatchDeps, shared: Shared, jobs: DispatchJob[]): Promise<void> {
  const { slots, order, budget } = shared;
  const attemptOf = new Map<string, number>();
  for (const job of jobs) for (const id of job.messageIds) attemptOf.set(id, job.attempt ?? 0);
  // Messages to one number go out one at a time, oldest first, across the process's loops (the
  // order, whose rules are in phone-order.ts); different numbers in parallel, at most
  // TIDINGS_DISPATCH_CONCURRENCY hand-overs at a time in the whole process (the slots).
  const claimTurn = order.beginClaim();
  const byPhone = new Map<string, Loaded[]>();
  let claimedAt: Date;
  let loaded: Loaded[];
  try {
    ({ claimedAt, loaded } = await claim(d, [...attemptOf.keys()]));
    const claimedIds = new Set(loaded.map((l) => l.message.id));
    await comeBackLater(
      d,
      d.db,
      [...attemptOf.keys()].filter((id) => !claimedIds.has(id)),
      attemptOf,
    );
    for (const l of loaded) {
      const key = `${l.message.account_id}/${addressOf(l.message)}`;
      byPhone.set(key, [...(byPhone.get(key) ?? []), l]);
    }
    for (const [key, group] of byPhone) {
      order.hold(
        key,
        group.map((l) => l.message.id),
      );
    }
  } finally {
    claimTurn.held();
  }
  await claimTurn.earlier;
  // Claimed and neither recorded nor given back yet: what a failure leaves in doubt.
  const pending = new Set(loaded.map((l) => l.message.id));
  const record = recordAsTheyCome(d, (ids) => {
    for (const id of ids) pending.delete(id);
  });
  // Given back: their account's places stayed taken too long (a hung provider), so they are tried
  // again later rather than held; a number's later messages go back with them, keeping its order.
  const left: Loaded[] = [];
  // At most TIDINGS_DISPATCH_CONCURRENCY of the batch's numbers waiting for their account's
  // places at once (more would wait past BUDGET_WAIT_MS and be given back), entered only in a
  // message's turn, so a number waiting for its turn holds no place another number needs.
  const pool = new Slots(d.concurrency);
  const handOvers = Promise.all(
    [...byPhone].map(async ([key, group]) => {
      for (const [i, l] of group.entries()) {
        const accountId = l.message.account_id;
        const outcome = await order.inTurn(key, l.message.id, (waited) =>
          pool.use(async () => {
            if (!(await budget.acquire(accountId, BUDGET_WAIT_MS))) return null;
            try {
              const current = waited ? await erasedMeanwhile(d, l) : l;
              return await slots.use(() => send(d, current));
            } finally {
              budget.release(accountId);
            }
          }),
        );
        if (outcome === null) {
          const rest = group.slice(i);
          order.drop(
            key,
            rest.slice(1).map((r) => r.message.id),
          );
          left.push(...rest);
          return;
        }
        record.add({
          attempt: attemptOf.get(l.message.id)!,
          message: l.message,
          outcome,
          channel: l.channel,
        });
      }
    }),
  )
    .then(() => record.finish())
    .then(() => defer(d, left, claimedAt, attemptOf))
    .then(() => {
      for (const l of left) pending.delete(l.message.id);
    });
  // Should a recording fail (the database went away), the messages not recorded are still queued,
  // claimed: in doubt (see the top of this file). Within the hold, pg-boss retries the batch's jobs.
  const finished = await Promise.race([handOvers.then(() => true), sleep(HOLD_LOOP_MS).then(() => false)]);
  if (finished) return;
  // The rest go on without this loop. A job brings them back once their hand-overs must have ended
  // (the provider's timeout), in case the process dies first: it finds nothing to do where they
  // were recorded, hands the sandbox's over again, and leaves a provider's in doubt (waiting for its
  // callback). Should their recording fail, a job is asked for at once, as pg-boss retries a
  // failed batch.
  await bringBack(d, d.db, [...pending], attemptOf, new Date(Date.now() + d.providerTimeoutMs + 1000));
  const running = handOvers.catch(async (err) => {
    const unrecorded = [...pending];
    d.log.error({ err, messageIds: unrecorded }, 'recording hand-overs that outlasted their batch failed');
    for (let tries = 1; tries <= 5; tries++) {
      try {
        return await bringBack(
          d,
          d.db,
          unrecorded,
          attemptOf,
          new Date(Date.now() + d.retryDelaySeconds * 1000),
        );
      } catch {
        await sleep(1000);
      }
    }
  });
  shared.running.add(running);
  void running.finally(() => shared.running.delete(running));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export function dispatchJob(d: DispatchDeps): JobDefinition<DispatchJob> {
  const shared: Shared = {
    slots: new Slots(d.concurrency),
    order: new PhoneOrder(),
    budget: new AccountBudget(Math.min(d.accountConcurrency, d.concurrency)),
    running: new Set(),
  };
  return {
    name: DISPATCH_JOB,
    // Each job is a batch of messages already.
    batchSize: 10,
    workers: DISPATCH_LOOPS,
    retryLimit: 10,
    retryDelaySeconds: 5,
    // Longer than the slowest provider call, so a live run is seldom presumed dead (and if it is,
    // the run after it finds its messages claimed, in doubt, and does not send them twice).
    expireInSeconds: d.expireInSeconds,
    handle: (job) => dispatchAll(d, shared, [job]),
    handleBatch: (jobs) =>
      dispatchAll(
        d,
        shared,
        jobs.map((j) => j.data),
      ),
    // A graceful stop waits for the hand-overs that outlasted their batch, and their recording.
    drain: async (timeoutMs) => {
      await Promise.race([Promise.allSettled([...shared.running]), sleep(timeoutMs)]);
    },
  };
}
