// Conversations changed in bulk (a member removed, a contact deleted, snoozes woken, a queue given
// out, a member's conversations requeued): one event each, with the conversation as the API shows
// it after, its views read in one statement and the events written in one outbox write.
import type { Tx } from '../../kernel/database/db.ts';
import type { EventInput, EventOutbox } from '../../kernel/outbox/events.ts';
import { type ConversationRow, findConversations } from './repo.ts';
import { toConversation } from './schemas.ts';

/** `previous`: what each event adds to its conversation (the same for all, or by row as it was). */
export async function emitEach(
  s: { events: EventOutbox },
  tx: Tx,
  accountId: string,
  rows: ConversationRow[],
  now: Date,
  type: EventInput['type'],
  previous: object | ((row: ConversationRow) => object),
): Promise<void> {
  if (rows.length === 0) return;
  const views = new Map(
    (
      await findConversations(
        tx,
        accountId,
        rows.map((r) => r.id),
      )
    ).map((v) => [v.id, v]),
  );
  const events: EventInput[] = rows.map((row) => ({
    type,
    accountId,
    data: {
      ...toConversation(views.get(row.id)!, now),
      ...(typeof previous === 'function' ? previous(row) : previous),
    },
  }));
  await s.events.emitMany(tx, events);
}

/** emitEach for rows of several accounts (a scan across accounts): each account's rows together. */
export async function emitEachOfAccounts(
  s: { events: EventOutbox },
  tx: Tx,
  rows: ConversationRow[],
  now: Date,
  type: EventInput['type'],
  previous: object | ((row: ConversationRow) => object),
): Promise<void> {
  const byAccount = new Map<string, ConversationRow[]>();
  for (const r of rows) {
    const list = byAccount.get(r.account_id);
    if (list) list.push(r);
    else byAccount.set(r.account_id, [r]);
  }
  for (const [accountId, those] of byAccount) await emitEach(s, tx, accountId, those, now, type, previous);
}
