// The status of an outbound message moves forward only: queued → sent → delivered → read, or to
// failed from queued or sent. Every status change comes through applyStatuses, whoever reports it
// (the dispatcher handing messages over, the sandbox's simulation, the WhatsApp callback), so they
// all record the same timestamps, emit the same `message.*` events and refund the same way:
//
// - A status that arrives after a later one (delivered after read: callbacks are not ordered) only
//   fills in its timestamp; no event.
// - A status that skips ahead (read with no delivered) fills in the skipped timestamps and emits
//   one event, for the status reached.
// - Failed after delivered, or anything after failed, is ignored.
// - A failed message that was charged and never delivered is refunded, once, by a compensating
//   `refund` transaction in the same database transaction: WhatsApp charges only for delivered
//   messages, and neither do we.
//
// A batch of changes (a dispatcher's batch, a callback from Meta with many statuses) costs one
// statement to lock its messages, one to write them and one for their events, whatever its size.
import type {
  MessageStatusUpdate,
  ProviderConversation,
  ProviderError,
  ProviderPricing,
} from '../../channels/types.ts';
import { canonicalJson } from '../../kernel/canonical-json.ts';
import type { Tx } from '../../kernel/db.ts';
import type { EventInput, EventOutbox, EventType } from '../../kernel/events.ts';
import { changeBalance } from '../billing/wallet.ts';
import { noteHandedOver } from '../bulk/messages-progress.ts';
import { MESSAGE_COLUMNS, type MessageRow, type MessageStatus } from './repo.ts';
import { toMessage } from './view.ts';

export interface StatusServices {
  events: EventOutbox;
  now: () => Date;
}

export interface StatusChange {
  status: MessageStatusUpdate;
  /** When it happened, as the provider reports it. */
  at: Date;
  /** The provider's id, learnt when it takes the message. */
  providerMessageId?: string;
  error?: ProviderError;
  /** What the provider says it bills for the message, and the conversation it counted it in. */
  pricing?: ProviderPricing;
  conversation?: ProviderConversation;
}

export type MessageTarget = { accountId: string } & ({ id: string } | { providerMessageId: string });

export interface TargetedChange {
  target: MessageTarget;
  change: StatusChange;
}

const RANK: Record<MessageStatus, number> = {
  queued: 0,
  sent: 1,
  delivered: 2,
  read: 3,
  failed: 4,
  received: 4,
};

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

/** The provider's reports a change carries, laid over the row's (the latest report wins). */
function withReports(row: MessageRow, change: StatusChange): MessageRow {
  const { pricing, conversation } = change;
  if (!pricing && !conversation) return row;
  return {
    ...row,
    provider_pricing: pricing ?? row.provider_pricing,
    provider_conversation: conversation
      ? { ...conversation, expiresAt: conversation.expiresAt?.toISOString() ?? null }
      : row.provider_conversation,
  };
}

// Compared key order aside: a jsonb column gives its keys back in an order of its own.
const sameJson = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

/** The row after the change, and whether its status moved (then an event is due); null when moot. */
function next(before: MessageRow, change: StatusChange): { row: MessageRow; moved: boolean } | null {
  const at = change.at;
  const row = withReports(before, change);
  const providerMessageId = row.provider_message_id ?? change.providerMessageId ?? null;
  if (row.status === 'failed' || row.status === 'received') return null;
  if (change.status === 'failed') {
    if (row.status === 'delivered' || row.status === 'read') return null;
    return {
      row: {
        ...row,
        status: 'failed',
        failed_at: at,
        error: change.error ?? null,
        provider_message_id: providerMessageId,
      },
      moved: true,
    };
  }
  const rank = RANK[change.status];
  const moved = rank > RANK[row.status];
  const filled: MessageRow = {
    ...row,
    status: moved ? change.status : row.status,
    provider_message_id: providerMessageId,
    sent_at: row.sent_at ?? at,
    delivered_at: rank >= 2 ? (row.delivered_at ?? at) : row.delivered_at,
    read_at: rank >= 3 ? (row.read_at ?? at) : row.read_at,
  };
  const changed =
    moved ||
    filled.sent_at !== row.sent_at ||
    filled.delivered_at !== row.delivered_at ||
    filled.read_at !== row.read_at ||
    filled.provider_message_id !== row.provider_message_id ||
    !sameJson(row.provider_pricing, before.provider_pricing) ||
    !sameJson(row.provider_conversation, before.provider_conversation);
  return changed ? { row: filled, moved } : null;
}

const WRITE_SQL = `
  UPDATE messages m
     SET status = u.status, error = u.error, provider_message_id = u.provider_message_id, sent_at = u.sent_at,
         delivered_at = u.delivered_at, read_at = u.read_at, failed_at = u.failed_at,
         refunded_at = u.refunded_at, updated_at = u.updated_at, provider_pricing = u.provider_pricing,
         provider_conversation = u.provider_conversation
    FROM jsonb_to_recordset($1::jsonb) AS u (id text, status text, error jsonb, provider_message_id text,
         sent_at timestamptz, delivered_at timestamptz, read_at timestamptz, failed_at timestamptz,
         refunded_at timestamptz, updated_at timestamptz, provider_pricing jsonb, provider_conversation jsonb)
   WHERE m.id = u.id`;

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
  const handedOver = new Map<string, { sent: number; failed: number }>();
  const results: (MessageRow | null)[] = [];
  for (const { target, change } of changes) {
    const before = current.get(keyOf(target));
    const result = before ? next(before, change) : null;
    if (!before || !result) {
      results.push(null);
      continue;
    }
    let row: MessageRow = { ...result.row, updated_at: now };
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
    if (row.bulk_job_id && before.status === 'queued') {
      const counts = handedOver.get(row.bulk_job_id) ?? { sent: 0, failed: 0 };
      counts[row.status === 'failed' ? 'failed' : 'sent']++;
      handedOver.set(row.bulk_job_id, counts);
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
        })),
      ),
    ]);
  }
  await s.events.emitMany(tx, events);
  for (const [jobId, counts] of handedOver) await noteHandedOver(s, tx, jobId, counts);
  return results;
}
