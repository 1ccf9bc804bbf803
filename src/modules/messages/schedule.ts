// Send later (docs/messaging.md § Send later): POST /messages and a conversation's reply with
// `sendAt`. Accepting it checks the message as any send (prepare.ts: a bad body is a 4xx at once)
// and finds or makes the recipient's contact, but charges nothing and checks no window: the
// message is stored `scheduled`, `message.scheduled` is emitted, and its release job is enqueued
// for `sendAt` (pg-boss `startAfter`), all in one transaction.
//
// The release decides the message as accepting it at that moment would (decideOne, shared with
// accept-batch.ts): the customer service window (closed, and not a template: `failed` with
// CSW_VIOLATION, never handed over), the contact's marketing opt-out, the price against the wallet
// (short: `failed` with INSUFFICIENT_BALANCE); an erased contact or an account no longer active
// fails it too. Otherwise it is charged, `queued` and given the normal dispatch job. Exactly once:
// the release claims the row with `UPDATE … WHERE status = 'scheduled'`, so a job run twice (or
// racing a cancel) finds nothing the second time. `POST /messages/{id}/cancel` moves `scheduled`
// to `canceled` the same way, with `message.canceled`.
import { providerFor } from '../../channels/registry.ts';
import type { Tx } from '../../kernel/database/db.ts';
import { conflict, notFound } from '../../kernel/http/errors.ts';
import type { JobDefinition } from '../../kernel/jobs/jobs.ts';
import { newId } from '../../kernel/values/ids.ts';
import { isPhoneAddress } from '../../kernel/values/whatsapp-user-ids.ts';
import { changeBalance } from '../billing/index.ts';
import { invalidFields } from '../contacts/index.ts';
import { ERASED } from '../erasure/index.ts';
import type { Accepted, AcceptServices } from './accept.ts';
import {
  createContacts,
  type Decision,
  DISPATCH_JOB,
  debitDescription,
  decideOne,
  readContacts,
  type Sender,
} from './accept-batch.ts';
import { firstResponseSql } from './first-response.ts';
import { raiseSkewSql, skewOf } from './id-skew.ts';
import type { PreparedMessage } from './prepare.ts';
import { findByIdempotencyKey, findMessage, MESSAGE_COLUMNS, type MessageRow } from './repo.ts';
import { toMessage } from './view.ts';

export const RELEASE_JOB = 'messages.release';

/** The furthest ahead a message may be scheduled. */
export const SEND_LATER_LIMIT_MS = 30 * 24 * 3600 * 1000;
/** A `sendAt` closer than this is a send now: scheduling it would only add a job's latency. */
const NOW_WITHIN_MS = 10_000;
/** A `sendAt` this far in the past is still taken as "now" (a client's clock a little behind). */
const PAST_GRACE_MS = 60_000;

/**
 * When a send with `sendAt` is to go: null to send it now (within NOW_WITHIN_MS ahead, or up to
 * PAST_GRACE_MS behind). Throws INVALID_REQUEST (400) for a time further past, or more than 30
 * days ahead.
 */
export function sendTimeOf(sendAt: string | undefined, now: Date): Date | null {
  if (sendAt === undefined) return null;
  const at = new Date(sendAt);
  const ahead = at.getTime() - now.getTime();
  if (Number.isNaN(ahead)) throw invalidFields([{ field: 'sendAt', issue: 'is not a date-time' }]);
  if (ahead < -PAST_GRACE_MS) throw invalidFields([{ field: 'sendAt', issue: 'is in the past' }]);
  if (ahead > SEND_LATER_LIMIT_MS)
    throw invalidFields([{ field: 'sendAt', issue: 'is more than 30 days ahead' }]);
  return ahead <= NOW_WITHIN_MS ? null : at;
}

const INSERT_SQL = `
  WITH skew AS (${raiseSkewSql('$16', '$17')} RETURNING 1)
  INSERT INTO messages (id, account_id, contact_id, conversation_id, direction, type, phone, whatsapp_user_id,
                        content, template_id, status, provider, sandbox, country, category, list_price_micros,
                        charged_micros, idempotency_key, send_at, created_at, updated_at)
  SELECT $1, $2, $3, (SELECT id FROM conversations WHERE account_id = $2 AND contact_id = $3 AND status = 'open'),
         'outbound', $4, $5, $6, $7, $8, 'scheduled', $9, $10, $11, $12, $13, 0, $14, $15, $18, $18
  ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING ${MESSAGE_COLUMNS}`;

/** Accepts a prepared message to go at `sendAt`: stored `scheduled`, its release job enqueued. */
export async function scheduleMessage(
  s: AcceptServices,
  sender: Sender,
  m: PreparedMessage,
  sendAt: Date,
): Promise<Accepted> {
  const accountId = sender.account.id;
  const now = s.now();
  const provider = providerFor(sender.account.channelProvider, sender.mode);
  const row = await s.db.transaction(async (tx) => {
    const pair = { accountId, address: m.to };
    const contact =
      (await readContacts(tx, [pair])).values().next().value ??
      (await createContacts(s, tx, [pair], now)).values().next().value!;
    const id = newId('message');
    const skew = skewOf([id], now);
    const { rows } = await tx.query<MessageRow>(INSERT_SQL, [
      id,
      accountId,
      contact.id,
      m.type,
      isPhoneAddress(m.to) ? m.to : null,
      isPhoneAddress(m.to) ? null : m.to,
      JSON.stringify(m.stored),
      m.templateId,
      provider,
      sender.mode === 'sandbox',
      m.country,
      m.category,
      // What the book lists now; the charge is decided when it goes.
      provider === 'sandbox' ? 0 : s.prices.listPrice(m.country, m.category, now),
      sender.idempotencyKey ?? null,
      sendAt,
      skew.aheadMs,
      skew.behindMs,
      now,
    ]);
    const written = rows[0];
    if (!written) return null;
    await s.events.emit(tx, { type: 'message.scheduled', accountId, data: toMessage(written) });
    await s.jobs.enqueue(tx, RELEASE_JOB, { messageId: id }, { startAfter: sendAt });
    return written;
  });
  if (row) return { kind: 'accepted', message: row };
  // Its Idempotency-Key has its message already (scheduled or not): nothing new.
  const existing = await findByIdempotencyKey(s.db, accountId, sender.idempotencyKey!);
  if (!existing) throw new Error('a message was not written, but no message has its Idempotency-Key');
  return { kind: 'existing', message: existing };
}

/** POST /messages/{id}/cancel: a scheduled message canceled; 404 for none, 409 once it went. */
export async function cancelMessage(
  s: Pick<AcceptServices, 'db' | 'events' | 'now'>,
  accountId: string,
  id: string,
): Promise<MessageRow> {
  const canceled = await s.db.transaction(async (tx) => {
    const { rows } = await tx.query<MessageRow>(
      `UPDATE messages SET status = 'canceled', updated_at = $3
        WHERE account_id = $1 AND id = $2 AND status = 'scheduled'
       RETURNING ${MESSAGE_COLUMNS}`,
      [accountId, id, s.now()],
    );
    const row = rows[0];
    if (row) {
      await s.events.emit(tx, {
        type: 'message.canceled',
        accountId,
        data: { ...toMessage(row), previousStatus: 'scheduled' },
      });
    }
    return row ?? null;
  });
  if (canceled) return canceled;
  const row = await findMessage(s.db, accountId, id);
  if (!row) throw notFound('message');
  throw conflict(`The message is ${row.status}: only a scheduled message can be canceled.`, [
    { field: 'status', issue: `is ${row.status}, not scheduled` },
  ]);
}

/** The statement moving a claimed message to `failed`, or to `queued` with its price. */
const RELEASED_SQL = `
  UPDATE messages SET status = $2, error = $3, failed_at = CASE WHEN $2 = 'failed' THEN $4::timestamptz END,
         country = coalesce($5, country), list_price_micros = coalesce($6, list_price_micros),
         charged_micros = coalesce($7, charged_micros), free_reason = $8, price_rule = $9, updated_at = $4
   WHERE id = $1
  RETURNING ${MESSAGE_COLUMNS}`;

interface ReleaseState {
  status: string;
  balance: number;
  /** The recipient's contact, if it still exists. */
  contact_id: string | null;
  last_inbound_at: Date | null;
  marketing_opt_out: boolean;
}

const refusal = (code: string, message: string) => ({ kind: 'refused' as const, error: { code, message } });

/** Releases one scheduled message at its time; answers whether it was queued (to wake dispatch). */
async function release(s: AcceptServices, tx: Tx, messageId: string): Promise<'queued' | 'later' | null> {
  const now = s.now();
  // The claim: only one run (of this job, a retry, or against a cancel) finds it still scheduled.
  const { rows: claimed } = await tx.query<MessageRow>(
    `UPDATE messages SET updated_at = $2 WHERE id = $1 AND status = 'scheduled' RETURNING ${MESSAGE_COLUMNS}`,
    [messageId, now],
  );
  const row = claimed[0];
  if (!row) return null;
  // Run early (the database's clock ahead of the services'): the job again at its time.
  if (row.send_at && row.send_at.getTime() - now.getTime() > 1000) {
    await s.jobs.enqueue(tx, RELEASE_JOB, { messageId }, { startAfter: row.send_at });
    return 'later';
  }
  // The account's wallet row locked (as accept does: debits apply in the order decided).
  const { rows } = await tx.query<ReleaseState>(
    `SELECT a.status, a.wallet_balance_micros AS balance, c.id AS contact_id, c.last_inbound_at,
            coalesce(c.marketing_opt_out, false) AS marketing_opt_out
       FROM accounts a LEFT JOIN contact_rows c ON c.id = $2 AND c.account_id = a.id
      WHERE a.id = $1 FOR NO KEY UPDATE OF a`,
    [row.account_id, row.contact_id],
  );
  const state = rows[0]!;
  const to = row.phone ?? row.whatsapp_user_id ?? '';
  const decided: Decision | { kind: 'refused'; error: { code: string; message: string } } =
    state.status !== 'ACTIVE'
      ? refusal('ACCOUNT_SUSPENDED', `The account is ${state.status.toLowerCase()}.`)
      : row.phone === ERASED
        ? refusal('CONTACT_ERASED', 'The contact was erased before the message went.')
        : decideOne(
            s,
            { to, country: row.country, category: row.category!, freeForm: row.type !== 'template' },
            row.provider,
            state.contact_id
              ? { last_inbound_at: state.last_inbound_at, marketing_opt_out: state.marketing_opt_out }
              : undefined,
            Number(state.balance),
            now,
          );
  if (decided.kind === 'refused') {
    const { code, message } = decided.error;
    const { rows: failed } = await tx.query<MessageRow>(RELEASED_SQL, [
      row.id,
      'failed',
      JSON.stringify({ code, message, providerCode: null }),
      now,
      null,
      null,
      null,
      null,
      null,
    ]);
    await s.events.emit(tx, {
      type: 'message.failed',
      accountId: row.account_id,
      data: { ...toMessage(failed[0]!), previousStatus: 'scheduled' },
    });
    return null;
  }
  const q = decided.quote;
  if (q.chargeMicros > 0) {
    const debit = await changeBalance(tx, s.events, row.account_id, {
      type: 'debit',
      amountMicros: -q.chargeMicros,
      reference: row.id,
      description: debitDescription(q, to),
    });
    if (!debit) throw new Error('the wallet, locked, no longer covers the charge it was decided from');
  }
  await tx.query(RELEASED_SQL, [
    row.id,
    'queued',
    null,
    now,
    q.country,
    q.listPriceMicros,
    q.chargeMicros,
    q.freeReason,
    q.rule,
  ]);
  // It goes now: its conversation's last activity and a reply (as accepting it would have).
  if (row.conversation_id) {
    await tx.query(
      `UPDATE conversations cv SET last_message_at = greatest(last_message_at, $2), unread_count = 0,
              last_message_id = CASE WHEN $2 >= last_message_at THEN $3 ELSE last_message_id END,
              ${firstResponseSql('$2::timestamptz')}, updated_at = $2
        WHERE id = $1`,
      [row.conversation_id, now, row.id],
    );
  }
  await s.jobs.enqueue(tx, DISPATCH_JOB, { messageIds: [row.id] }, { notify: false });
  return 'queued';
}

/** The job that releases a scheduled message at its `sendAt`. */
export function releaseJob(s: AcceptServices): JobDefinition<{ messageId: string }> {
  return {
    name: RELEASE_JOB,
    handle: async ({ messageId }) => {
      const released = await s.db.transaction((tx) => release(s, tx, messageId));
      if (released === 'queued') s.jobs.wake(DISPATCH_JOB);
    },
  };
}
