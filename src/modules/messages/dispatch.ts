// The dispatch job: hands accepted messages to their provider. A worker takes a batch of jobs and
// sends their messages concurrently (those to the same number one after another, in the order
// they were accepted), then records every outcome of the batch in one transaction through
// applyStatuses:
//   accepted → sent (and, on the sandbox, the simulated delivery: played at once where its delay
//              is 0, scheduled otherwise);
//   rejected → failed, refunded;
//   retry    → a new job after a growing delay (or the provider's Retry-After), until the retries
//              run out → failed, refunded.
// A message is sent only while it is `queued`, so a job run twice (a worker died after the provider
// took the message but before recording it) is the only way a message can go out twice: delivery
// to the provider is at least once, like every provider API without idempotency keys.
import type { FastifyBaseLogger } from 'fastify';
import { ChannelNotConfigured, type Channels } from '../../channels/registry.ts';
import { simulatedStatuses } from '../../channels/sandbox/simulation.ts';
import type { MessageContent, ProviderError, SendOutcome } from '../../channels/types.ts';
import type { Database } from '../../kernel/db.ts';
import type { EventOutbox } from '../../kernel/events.ts';
import type { JobDefinition, Jobs } from '../../kernel/jobs.ts';
import { loadChannel } from '../channel/repo.ts';
import type { ChannelConfig } from '../channel/settings.ts';
import { type TemplateRow, toDefinition } from '../templates/repo.ts';
import { DISPATCH_JOB } from './accept.ts';
import { MESSAGE_COLUMNS, type MessageRow } from './repo.ts';
import { changesOf, type SandboxPlay, scheduleLater, split } from './sandbox-job.ts';
import { applyStatuses, type TargetedChange } from './status.ts';

export interface DispatchDeps {
  db: Database;
  jobs: Jobs;
  events: EventOutbox;
  channels: Channels;
  now: () => Date;
  log: FastifyBaseLogger;
  /** Jobs fetched, and messages sent, at once by each process. */
  concurrency: number;
  retryLimit: number;
  retryDelaySeconds: number;
}

export interface DispatchJob {
  messageId: string;
  /** Retries so far. */
  attempt?: number;
}

const MAX_RETRY_DELAY_SECONDS = 3600;

function contentOf(message: MessageRow, template: TemplateRow | null): MessageContent | ProviderError {
  const c = message.content;
  if ('template' in c) {
    if (!template) {
      return {
        code: 'TEMPLATE_NOT_USABLE',
        message: 'The template was deleted before the message was sent.',
        providerCode: null,
      };
    }
    return { type: 'template', template: { ...toDefinition(template), parameters: c.template.parameters } };
  }
  if ('text' in c) return { type: 'text', text: c.text };
  if ('media' in c)
    return { type: 'media', media: c.media as Extract<MessageContent, { type: 'media' }>['media'] };
  return {
    type: 'interactive',
    interactive: c.interactive as unknown as Extract<MessageContent, { type: 'interactive' }>['interactive'],
  };
}

/** Loads each key once per batch. */
function memo<V>(load: (key: string) => Promise<V>): (key: string) => Promise<V> {
  const seen = new Map<string, Promise<V>>();
  return (key) => {
    let found = seen.get(key);
    if (!found) {
      found = load(key);
      seen.set(key, found);
    }
    return found;
  };
}

/** The channels and templates a batch's messages need, each read once. */
function batchOf(db: Database) {
  return {
    channel: memo((accountId) => loadChannel(db, accountId)),
    // Keyed "account id/template id": a template is only ever looked up in its own account.
    template: memo((key) => {
      const [accountId, id] = key.split('/');
      return db
        .query<TemplateRow>('SELECT * FROM templates WHERE account_id = $1 AND id = $2', [accountId, id])
        .then((r) => r.rows[0] ?? null);
    }),
  };
}

type Batch = ReturnType<typeof batchOf>;

async function send(
  d: DispatchDeps,
  batch: Batch,
  message: MessageRow,
): Promise<{ outcome: SendOutcome; channel: ChannelConfig }> {
  const channel = await batch.channel(message.account_id);
  const template = message.template_id
    ? await batch.template(`${message.account_id}/${message.template_id}`)
    : null;
  const content = contentOf(message, template);
  if (!('type' in content)) return { outcome: { kind: 'rejected', error: content }, channel };
  try {
    const adapter = d.channels.adapter(channel, message.provider);
    return { outcome: await adapter.send({ id: message.id, to: message.phone, content }), channel };
  } catch (err) {
    if (!(err instanceof ChannelNotConfigured)) throw err;
    return {
      outcome: {
        kind: 'rejected',
        error: {
          code: 'CHANNEL_NOT_CONFIGURED',
          message: `The message was accepted for the WhatsApp Cloud API, but ${err.message}.`,
          providerCode: null,
        },
      },
      channel,
    };
  }
}

interface Outcome {
  job: DispatchJob;
  message: MessageRow;
  outcome: SendOutcome;
  channel: ChannelConfig;
}

/** Records a batch's outcomes in one transaction. */
async function settle(d: DispatchDeps, outcomes: Outcome[]): Promise<void> {
  const retries: { data: DispatchJob; startAfter: Date }[] = [];
  const changes: TargetedChange[] = [];
  const plays: SandboxPlay[] = [];
  const at = d.now();
  for (const { job, message, outcome, channel } of outcomes) {
    const target = { accountId: message.account_id, id: message.id };
    const attempt = job.attempt ?? 0;
    if (outcome.kind === 'retry' && attempt < d.retryLimit) {
      const backoff = Math.min(MAX_RETRY_DELAY_SECONDS, d.retryDelaySeconds * 2 ** attempt);
      const seconds = Math.max(backoff, outcome.retryAfterSeconds ?? 0);
      d.log.info(
        { messageId: message.id, attempt, code: outcome.error.code, retryInSeconds: seconds },
        'message will be retried',
      );
      retries.push({
        data: { messageId: message.id, attempt: attempt + 1 },
        startAfter: new Date(Date.now() + seconds * 1000),
      });
      continue;
    }
    if (outcome.kind !== 'accepted') {
      changes.push({ target, change: { status: 'failed', at, error: outcome.error } });
      continue;
    }
    changes.push({ target, change: { status: 'sent', at, providerMessageId: outcome.providerMessageId } });
    if (message.provider === 'sandbox') {
      const play = split(
        message.account_id,
        message.id,
        simulatedStatuses(message.phone, channel.sandbox),
        false,
      );
      changes.push(...changesOf(play, at));
      plays.push(play);
    }
  }
  await d.db.transaction(async (tx) => {
    const results = await applyStatuses(d, tx, changes);
    const sent = new Set(results.flatMap((r) => (r && r.status !== 'queued' ? [r.id] : [])));
    await scheduleLater(
      d.jobs,
      tx,
      plays.filter((p) => sent.has(p.messageId)),
    );
    await d.jobs.enqueueMany(tx, DISPATCH_JOB, retries);
  });
}

async function dispatchAll(d: DispatchDeps, jobs: DispatchJob[]): Promise<void> {
  const { rows } = await d.db.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = ANY($1::text[]) AND status = 'queued' ORDER BY id`,
    [jobs.map((j) => j.messageId)],
  );
  const jobOf = new Map(jobs.map((j) => [j.messageId, j]));
  // Messages to one number go out in order; different numbers in parallel.
  const byPhone = new Map<string, MessageRow[]>();
  for (const row of rows) byPhone.set(row.phone, [...(byPhone.get(row.phone) ?? []), row]);
  const batch = batchOf(d.db);
  const outcomes: Outcome[] = [];
  await Promise.all(
    [...byPhone.values()].map(async (messages) => {
      for (const message of messages) {
        const { outcome, channel } = await send(d, batch, message);
        outcomes.push({ job: jobOf.get(message.id)!, message, outcome, channel });
      }
    }),
  );
  // Should this fail (the database went away), pg-boss retries the batch's jobs; the messages it
  // did not record are still queued and go again (at least once, as with any provider call).
  await settle(d, outcomes);
}

export function dispatchJob(d: DispatchDeps): JobDefinition<DispatchJob> {
  return {
    name: DISPATCH_JOB,
    batchSize: d.concurrency,
    retryLimit: 10,
    retryDelaySeconds: 5,
    // Longer than the slowest provider call, so a live run is never presumed dead.
    expireInSeconds: 300,
    handle: (job) => dispatchAll(d, [job]),
    handleBatch: (jobs) =>
      dispatchAll(
        d,
        jobs.map((j) => j.data),
      ),
  };
}
