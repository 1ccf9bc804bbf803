// The status of an outbound message moves forward only: queued → sent → delivered → read, or to
// failed from queued or sent. Every status change comes through applyStatus, whoever reports it
// (the dispatcher handing a message over, the sandbox's simulation, the WhatsApp callback), so they
// all record the same timestamps, emit the same `message.*` events and refund the same way.
//
// - A status that arrives after a later one (delivered after read: callbacks are not ordered) only
//   fills in its timestamp; no event.
// - A status that skips ahead (read with no delivered) fills in the skipped timestamps and emits
//   one event, for the status reached.
// - Failed after delivered, or anything after failed, is ignored.
// - A failed message that was charged and never delivered is refunded, once, by a compensating
//   `refund` transaction in the same database transaction: WhatsApp charges only for delivered
//   messages, and neither do we.
import type { MessageStatusUpdate, ProviderError } from '../../channels/types.ts';
import type { Tx } from '../../kernel/db.ts';
import type { EventOutbox, EventType } from '../../kernel/events.ts';
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
}

export type MessageTarget = { accountId: string } & ({ id: string } | { providerMessageId: string });

const RANK: Record<MessageStatus, number> = {
  queued: 0,
  sent: 1,
  delivered: 2,
  read: 3,
  failed: 4,
  received: 4,
};

async function lockMessage(tx: Tx, target: MessageTarget): Promise<MessageRow | null> {
  const byId = 'id' in target;
  const { rows } = await tx.query<MessageRow>(
    `SELECT ${MESSAGE_COLUMNS} FROM messages
      WHERE account_id = $1 AND ${byId ? 'id' : 'provider_message_id'} = $2 AND direction = 'outbound'
      FOR UPDATE`,
    [target.accountId, byId ? target.id : target.providerMessageId],
  );
  return rows[0] ?? null;
}

/** The row after the change, and whether its status moved (then an event is due). */
function next(row: MessageRow, change: StatusChange): { row: MessageRow; moved: boolean } | null {
  const at = change.at;
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
    filled.provider_message_id !== row.provider_message_id;
  return changed ? { row: filled, moved } : null;
}

/**
 * Applies a status to a message inside `tx`; answers the message as it now is, or null when the
 * message is unknown or the change is moot.
 */
export async function applyStatus(
  s: StatusServices,
  tx: Tx,
  target: MessageTarget,
  change: StatusChange,
): Promise<MessageRow | null> {
  const row = await lockMessage(tx, target);
  if (!row) return null;
  const result = next(row, change);
  if (!result) return null;
  const now = s.now();
  let updated = result.row;
  if (
    updated.status === 'failed' &&
    updated.charged_micros > 0 &&
    !updated.delivered_at &&
    !updated.refunded_at
  ) {
    await changeBalance(tx, s.events, updated.account_id, {
      type: 'refund',
      amountMicros: updated.charged_micros,
      reference: updated.id,
      description: `refund: message failed (${updated.error?.code ?? 'FAILED'})`,
    });
    updated = { ...updated, refunded_at: now };
  }
  const { rows } = await tx.query<MessageRow>(
    `UPDATE messages
        SET status = $2, error = $3, provider_message_id = $4, sent_at = $5, delivered_at = $6, read_at = $7,
            failed_at = $8, refunded_at = $9, updated_at = $10
      WHERE id = $1
      RETURNING ${MESSAGE_COLUMNS}`,
    [
      updated.id,
      updated.status,
      updated.error ? JSON.stringify(updated.error) : null,
      updated.provider_message_id,
      updated.sent_at,
      updated.delivered_at,
      updated.read_at,
      updated.failed_at,
      updated.refunded_at,
      now,
    ],
  );
  const saved = rows[0]!;
  if (result.moved) {
    await s.events.emit(tx, {
      type: `message.${saved.status}` as EventType,
      accountId: saved.account_id,
      data: { ...toMessage(saved), previousStatus: row.status },
    });
  }
  // A bulk send's job counts a message as processed once it is handed over or has failed.
  if (saved.bulk_job_id && row.status === 'queued' && saved.status !== 'queued') {
    await noteHandedOver(s, tx, saved.bulk_job_id, saved.status === 'failed' ? 'failed' : 'sent');
  }
  return saved;
}
