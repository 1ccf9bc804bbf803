// Every change of an outbound message's state comes through applyStatuses, whoever reports it (the
// dispatcher handing messages over, the sandbox's simulation, a provider's callback), so they all
// follow the rules of transition.ts, emit the same `message.*` events, and move money the same way:
//
// - A failed message that was charged and never delivered is refunded, once, by a compensating
//   `refund` transaction in the same database transaction: WhatsApp charges only for delivered
//   messages, and neither do we.
// - What the provider then bills settles the charge (settlement.ts): one `adjustment` transaction
//   per difference, never taking the wallet below zero (a debit it cannot pay in full takes what
//   there is; the rest is recorded as unpaid and not asked for again).
// - A bulk send counts a message as processed once it is handed over (accepted) or has failed.
//
// A batch of changes (a dispatcher's batch, a callback from Meta with many statuses) costs one
// statement to lock its messages, one to write them and one for their events, whatever its size.
import type { Tx } from '../../kernel/database/db.ts';
import type { EventInput, EventOutbox, EventType } from '../../kernel/outbox/events.ts';
import { changeBalance } from '../billing/index.ts';
import { ERASED, ERASED_ERROR_MESSAGE } from '../erasure/index.ts';
import { MESSAGE_COLUMNS, type MessageRow } from './repo.ts';
import { adjustmentDue, settleCharge } from './settlement.ts';
import { nextState, type StatusChange } from './transition.ts';
import { toMessage } from './view.ts';

declare module '../../kernel/outbox/hooks.ts' {
  interface HookPayloads {
    /**
     * Messages of bulk sends handed over (`sent`) or failed, counted per job, in the transaction
     * that recorded them (modules/bulk subscribes: a job completes with its last message).
     */
    'messages.bulk-counted': { jobId: string; sent: number; failed: number }[];
    /** Campaign messages the provider throttled, once their dispatch committed (modules/campaigns). */
    'messages.campaign-throttled': { campaignIds: string[]; at: Date };
  }
}

export type { StatusChange } from './transition.ts';

export interface StatusServices {
  events: EventOutbox;
  now: () => Date;
}

export type MessageTarget = { accountId: string } & ({ id: string } | { providerMessageId: string });

export interface TargetedChange {
  target: MessageTarget;
  change: StatusChange;
}

/**
 * Locks the messages the changes are about, in id order (two batches never wait on each other in
 * a cycle). Ids are looked up by the primary key, provider ids by (account, provider id); a row of
 * another account than its target names is left out.
 */
async function lockMessages(tx: Tx, targets: MessageTarget[]): Promise<MessageRow[]> {
  const wanted = new Set(targets.map(keyOf));
  const ids = targets.flatMap((t) => ('id' in t ? [t.id] : []));
  const providerIds = targets.flatMap((t) => ('providerMessageId' in t ? [t.providerMessageId] : []));
  const rows: MessageRow[] = [];
  if (ids.length > 0) {
    const found = await tx.query<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages
        WHERE id = ANY($1::text[]) AND direction = 'outbound' ORDER BY id FOR UPDATE`,
      [ids],
    );
    rows.push(...found.rows.filter((r) => wanted.has(`id/${r.account_id}/${r.id}`)));
  }
  if (providerIds.length > 0) {
    const accounts = [...new Set(targets.map((t) => t.accountId))];
    const found = await tx.query<MessageRow>(
      `SELECT ${MESSAGE_COLUMNS} FROM messages
        WHERE account_id = ANY($1::text[]) AND provider_message_id = ANY($2::text[]) AND direction = 'outbound'
        ORDER BY id FOR UPDATE`,
      [accounts, providerIds],
    );
    rows.push(...found.rows.filter((r) => wanted.has(`provider/${r.account_id}/${r.provider_message_id}`)));
  }
  return rows;
}

const WRITE_SQL = `
  UPDATE messages m
     SET status = u.status, error = u.error, provider_message_id = u.provider_message_id, sent_at = u.sent_at,
         delivered_at = u.delivered_at, read_at = u.read_at, failed_at = u.failed_at,
         refunded_at = u.refunded_at, updated_at = u.updated_at, provider_pricing = u.provider_pricing,
         provider_conversation = u.provider_conversation, accepted_at = u.accepted_at,
         provider_status = u.provider_status, adjusted_micros = u.adjusted_micros, unpaid_micros = u.unpaid_micros
    FROM jsonb_to_recordset($1::jsonb) AS u (id text, status text, error jsonb, provider_message_id text,
         sent_at timestamptz, delivered_at timestamptz, read_at timestamptz, failed_at timestamptz,
         refunded_at timestamptz, updated_at timestamptz, provider_pricing jsonb, provider_conversation jsonb,
         accepted_at timestamptz, provider_status text, adjusted_micros bigint, unpaid_micros bigint)
   WHERE m.id = u.id`;

/**
 * A message whose contact was erased while a report about it was on its way (a hand-over's answer,
 * a callback) stays erased: it learns its status and times, never the provider's id (Meta's wamid
 * encodes the number) nor the details of an error (erasure/erase.ts keeps the code alone).
 */
function keptErased(before: MessageRow, after: MessageRow): MessageRow {
  if (before.phone !== ERASED) return after;
  const error = after.error;
  return {
    ...after,
    provider_message_id: before.provider_message_id,
    error:
      !error || error === before.error
        ? error
        : {
            code: error.code,
            message: ERASED_ERROR_MESSAGE,
            ...(error.providerCode == null ? {} : { providerCode: error.providerCode }),
          },
  };
}

function keyOf(target: MessageTarget): string {
  return 'id' in target
    ? `id/${target.accountId}/${target.id}`
    : `provider/${target.accountId}/${target.providerMessageId}`;
}

/** Both keys a row is found under, once it has a provider id. */
function keysOf(row: MessageRow): string[] {
  const keys = [`id/${row.account_id}/${row.id}`];
  if (row.provider_message_id) keys.push(`provider/${row.account_id}/${row.provider_message_id}`);
  return keys;
}

/**
 * Applies the changes in order inside `tx` (several may concern one message: sent, then delivered);
 * answers, for each, the message as that change left it, or null when the message is unknown or
 * the change moot.
 */
export async function applyStatuses(
  s: StatusServices,
  tx: Tx,
  changes: TargetedChange[],
): Promise<(MessageRow | null)[]> {
  if (changes.length === 0) return [];
  const locked = await lockMessages(
    tx,
    changes.map((c) => c.target),
  );
  const current = new Map<string, MessageRow>();
  for (const row of locked) for (const key of keysOf(row)) current.set(key, row);
  const now = s.now();
  const written = new Map<string, MessageRow>();
  const refunds: MessageRow[] = [];
  const events: EventInput[] = [];
  const bulkCounts = new Map<string, { sent: number; failed: number }>();
  const results: (MessageRow | null)[] = [];
  for (const { target, change } of changes) {
    const before = current.get(keyOf(target));
    const result = before ? nextState(before, change) : null;
    if (!before || !result) {
      results.push(null);
      continue;
    }
    let row: MessageRow = { ...keptErased(before, result.row), updated_at: now };
    if (row.status === 'failed' && row.charged_micros > 0 && !row.delivered_at && !row.refunded_at) {
      row = { ...row, refunded_at: now };
      refunds.push(row);
    }
    for (const key of keysOf(row)) current.set(key, row);
    written.set(row.id, row);
    if (result.moved) {
      events.push({
        type: `message.${row.status}` as EventType,
        accountId: row.account_id,
        data: { ...toMessage(row), previousStatus: before.status },
      });
    }
    // A bulk send counts a message as processed once it is handed over or has failed.
    const handedOver = (r: MessageRow) => r.status !== 'queued' || r.accepted_at !== null;
    if (row.bulk_job_id && !handedOver(before) && handedOver(row)) {
      const counts = bulkCounts.get(row.bulk_job_id) ?? { sent: 0, failed: 0 };
      counts[row.status === 'failed' ? 'failed' : 'sent']++;
      bulkCounts.set(row.bulk_job_id, counts);
    }
    results.push(row);
  }
  for (const row of refunds) {
    await changeBalance(tx, s.events, row.account_id, {
      type: 'refund',
      amountMicros: row.charged_micros,
      reference: row.id,
      description: `refund: message failed (${row.error?.code ?? 'FAILED'})`,
    });
  }
  // Each message's charge settled once, on its final state in this batch (after its refund).
  for (const row of written.values()) {
    const due = adjustmentDue(row);
    if (due !== 0) written.set(row.id, { ...row, ...(await settleCharge(tx, s.events, row, due)) });
  }
  if (written.size > 0) {
    await tx.query(WRITE_SQL, [
      JSON.stringify(
        [...written.values()].map((r) => ({
          id: r.id,
          status: r.status,
          error: r.error,
          provider_message_id: r.provider_message_id,
          sent_at: r.sent_at,
          delivered_at: r.delivered_at,
          read_at: r.read_at,
          failed_at: r.failed_at,
          refunded_at: r.refunded_at,
          updated_at: r.updated_at,
          provider_pricing: r.provider_pricing,
          provider_conversation: r.provider_conversation,
          accepted_at: r.accepted_at,
          provider_status: r.provider_status,
          adjusted_micros: r.adjusted_micros,
          unpaid_micros: r.unpaid_micros,
        })),
      ),
    ]);
  }
  await s.events.emitMany(tx, events);
  if (bulkCounts.size > 0) {
    const jobs = [...bulkCounts].map(([jobId, counts]) => ({ jobId, ...counts }));
    await s.events.hook(tx, 'messages.bulk-counted', jobs);
  }
  return results;
}
