// POST /messages/{id}/read: the business marks a customer's message read and, if it is about to
// answer, shows the typing indicator. On WhatsApp the customer sees blue ticks (Meta marks the
// earlier messages of the chat read as well, and so does Tidings) and "typing…" until the next
// message or 25 seconds. The sandbox has no customer to show them to: it records them only.
//
// Rules:
//   - only an inbound message (`received`) can be marked read: an outbound one is a 409 CONFLICT;
//   - another account's id is a 404, as everywhere;
//   - the provider is called before anything is written: refused (an unknown message, a revoked
//     token) → 409 with its reason, unreachable → 503; either way nothing is recorded;
//   - a sandbox key never reaches a provider: on a message WhatsApp carried it is a 403;
//   - repeating it is harmless: `markedReadAt` keeps the first time; a message already read is not
//     sent to Meta again unless the typing indicator is asked for (which shows it again, and moves
//     `typingShownAt`).

import type { Channels } from '../../channels/registry.ts';
import { ChannelNotConfigured, type SendMode } from '../../channels/registry.ts';
import type { Database } from '../../kernel/database/db.ts';
import { ApiError, conflict, notFound } from '../../kernel/http/errors.ts';
import { loadChannel } from '../whatsapp-channel/index.ts';
import { findMessage, MESSAGE_COLUMNS, type MessageRow } from './repo.ts';

export interface MarkReadServices {
  db: Database;
  channels: Channels;
  now: () => Date;
}

async function tellProvider(
  s: MarkReadServices,
  accountId: string,
  mode: SendMode,
  row: MessageRow,
  typing: boolean,
): Promise<void> {
  if (mode === 'sandbox') {
    throw new ApiError(
      'FORBIDDEN',
      'A sandbox key may not mark a WhatsApp message read: that reaches the customer; use a live key.',
    );
  }
  const channel = await loadChannel(s.db, accountId);
  let adapter: ReturnType<Channels['adapter']>;
  try {
    adapter = s.channels.adapter(channel, row.provider);
  } catch (err) {
    if (!(err instanceof ChannelNotConfigured)) throw err;
    throw conflict(`The account's channel cannot mark the message read: ${err.message}.`);
  }
  const outcome = await adapter.markRead({ providerMessageId: row.provider_message_id ?? '', typing });
  if (outcome.kind === 'retry') {
    throw new ApiError(
      'SERVICE_UNAVAILABLE',
      `The WhatsApp Cloud API could not mark the message read now (${outcome.error.message}); nothing changed. Retry shortly.`,
      { headers: { 'retry-after': '5' } },
    );
  }
  if (outcome.kind === 'rejected') {
    throw conflict(`The WhatsApp Cloud API refused to mark the message read (${outcome.error.message}).`, [
      { field: 'provider', issue: outcome.error.message, providerCode: outcome.error.providerCode },
    ]);
  }
}

/** Marks the account's inbound message `id` read (and shows typing); answers the message as it now is. */
export async function markMessageRead(
  s: MarkReadServices,
  accountId: string,
  mode: SendMode,
  id: string,
  typing: boolean,
): Promise<MessageRow> {
  const row = await findMessage(s.db, accountId, id);
  if (!row) throw notFound('message');
  if (row.direction !== 'inbound') {
    throw conflict("Only a customer's message can be marked read; this one is outbound.", [
      { field: 'id', issue: 'is an outbound message' },
    ]);
  }
  if (row.marked_read_at && !typing) return row;
  if (row.provider !== 'sandbox') await tellProvider(s, accountId, mode, row, typing);

  const now = s.now();
  return s.db.transaction(async (tx) => {
    const { rows } = await tx.query<MessageRow>(
      `UPDATE messages
          SET marked_read_at = coalesce(marked_read_at, $3),
              typing_shown_at = CASE WHEN $4 THEN $3::timestamptz ELSE typing_shown_at END,
              updated_at = $3
        WHERE account_id = $1 AND id = $2
        RETURNING ${MESSAGE_COLUMNS}`,
      [accountId, id, now, typing],
    );
    // What WhatsApp does: the customer's earlier messages of the chat are read with it.
    await tx.query(
      `UPDATE messages SET marked_read_at = $5, updated_at = $5
        WHERE account_id = $1 AND phone = $2 AND direction = 'inbound' AND provider = $3
          AND created_at <= $4 AND marked_read_at IS NULL`,
      [accountId, row.phone, row.provider, row.created_at, now],
    );
    const updated = rows[0];
    if (!updated) throw notFound('message'); // deleted (with its conversation) meanwhile
    return updated;
  });
}
