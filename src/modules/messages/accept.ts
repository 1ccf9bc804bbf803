// Accepting one message (POST /messages): in one transaction the recipient's contact is found or
// made, the customer service window is checked, the price is charged to the wallet, the message is
// stored `queued` and its dispatch job is enqueued. So a message exists exactly when it was paid
// for and will be sent; a refusal (402, 422) leaves nothing behind. The dispatch job hands it to
// the provider afterwards (dispatch.ts).
import type { SendMode } from '../../channels/registry.ts';
import { providerFor } from '../../channels/registry.ts';
import type { AccountSnapshot } from '../../kernel/auth.ts';
import type { Database, Tx } from '../../kernel/db.ts';
import { ApiError } from '../../kernel/errors.ts';
import type { EventOutbox } from '../../kernel/events.ts';
import { newId } from '../../kernel/ids.ts';
import { JOB_CHANNEL, type Jobs } from '../../kernel/jobs.ts';
import { emitIfBelowThreshold } from '../billing/wallet.ts';
import { toContact } from '../contacts/schemas.ts';
import type { PriceTable } from '../pricing/prices.ts';
import { type Quote, quote, windowOpen } from '../pricing/quote.ts';
import type { ApprovedTemplates } from '../templates/approved.ts';
import type { PreparedMessage } from './prepare.ts';
import { recipientOf } from './recipient.ts';
import { findByIdempotencyKey, MESSAGE_COLUMNS, type MessageRow } from './repo.ts';

export const DISPATCH_JOB = 'messages.dispatch';

export interface AcceptServices {
  db: Database;
  approvedTemplates: ApprovedTemplates;
  jobs: Jobs;
  events: EventOutbox;
  prices: PriceTable;
  now: () => Date;
}

export interface Sender {
  account: Pick<AccountSnapshot, 'id' | 'channelProvider'>;
  mode: SendMode;
  /** The request's Idempotency-Key: at most one message per key, whatever happens. */
  idempotencyKey?: string | null;
  /** The API call to count in the sending transaction (an unlimited plan's), if any. */
  usage?: Date | null;
}

export function cswViolation(to: string): ApiError {
  return new ApiError(
    'CSW_VIOLATION',
    `No message from ${to} in the last 24 hours: outside the customer service window only an approved template may be sent.`,
  );
}

export function insufficientBalance(chargeMicros: number, balanceMicros: number): ApiError {
  return new ApiError('INSUFFICIENT_BALANCE', undefined, {
    details: [
      {
        field: 'wallet',
        issue: `the send costs ${chargeMicros / 1e6} and the balance is ${balanceMicros / 1e6}`,
        requiredMicros: chargeMicros,
        balanceMicros,
      },
    ],
  });
}

/** What a charged send records in the ledger. */
function describe(m: PreparedMessage, q: Quote): string {
  return `${q.category} message to ${m.to} (${q.country ?? 'no country'})`;
}

const INSERT_MESSAGE = `
  INSERT INTO messages (id, account_id, contact_id, direction, type, phone, content, template_id, status,
                        provider, sandbox, country, category, list_price_micros, charged_micros, free_reason,
                        idempotency_key, bulk_job_id, bulk_index, created_at, updated_at)
  VALUES ($1, $2, $3, 'outbound', $4, $5, $6, $7, 'queued', $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $18)
  ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING ${MESSAGE_COLUMNS}`;

// A CTE that is only a SELECT runs only when used: the final WHERE refers to wake so that it does.
const WAKE = `wake AS (SELECT pg_notify('${JOB_CHANNEL}', '${DISPATCH_JOB}') FROM msg)`;

/**
 * Inserts the message, debits the wallet and records the debit, in one statement, and wakes the
 * dispatchers at commit. Answers no row when the Idempotency-Key already has its message (the
 * caller then shows that one). $1…$18 the message (see INSERT_MESSAGE), $13 the charge, $19 the
 * ledger row's id, $20 its description.
 */
const INSERT_CHARGED_SQL = `
  WITH msg AS (${INSERT_MESSAGE}
  ), moved AS (
    UPDATE accounts SET wallet_balance_micros = wallet_balance_micros - $13, updated_at = $18
     WHERE id = $2 AND wallet_balance_micros >= $13 AND EXISTS (SELECT 1 FROM msg)
    RETURNING wallet_balance_micros, currency, low_balance_threshold_micros
  ), debit AS (
    INSERT INTO wallet_transactions (id, account_id, type, amount_micros, balance_after_micros, currency, reference, description)
    SELECT $19, $2, 'debit', -$13, wallet_balance_micros, currency, $1, $20 FROM moved
    RETURNING id
  ), ${WAKE}
  SELECT msg.*, (SELECT wallet_balance_micros FROM moved) AS balance_after,
         (SELECT currency FROM moved) AS wallet_currency,
         (SELECT low_balance_threshold_micros FROM moved) AS threshold
    FROM msg
   WHERE (SELECT count(*) FROM wake) >= 0`;

/** The same for a message that costs nothing: the message alone. */
const INSERT_FREE_SQL = `
  WITH msg AS (${INSERT_MESSAGE}), ${WAKE}
  SELECT msg.*, NULL::bigint AS balance_after, NULL::text AS wallet_currency, NULL::bigint AS threshold
    FROM msg
   WHERE (SELECT count(*) FROM wake) >= 0`;

type InsertedRow = MessageRow & {
  balance_after: number | null;
  wallet_currency: string | null;
  threshold: number | null;
};

/** The Idempotency-Key's message already exists: the transaction is rolled back and it is shown. */
class AlreadySent extends Error {}

export interface Accepted {
  message: MessageRow;
  /** The Idempotency-Key had its message already (nothing new was sent or charged). */
  existing: boolean;
  /** The sender's `usage` call was counted (its transaction committed). */
  usageCounted: boolean;
}

/** Stores, charges and enqueues one prepared message inside `tx`. */
export async function acceptIn(
  s: AcceptServices,
  tx: Tx,
  sender: Sender,
  m: PreparedMessage,
  bulk: { jobId: string; index: number } | null = null,
  options: { enqueue?: boolean } = {},
): Promise<MessageRow> {
  const provider = providerFor(sender.account.channelProvider, sender.mode);
  const now = s.now();
  // Only a send that can cost something takes the wallet's lock; free ones never wait for it.
  const mayCharge = provider !== 'sandbox' && s.prices.listPrice(m.country, m.category) > 0;
  const recipient = await recipientOf(tx, sender.account.id, m.to, now, mayCharge, sender.usage ?? null);
  if (recipient.created) {
    await s.events.emit(tx, {
      type: 'contact.created',
      accountId: sender.account.id,
      data: toContact(recipient.contact),
    });
  }
  const open = windowOpen(recipient.contact.last_inbound_at, now);
  if (m.freeForm && !open) throw cswViolation(m.to);
  const q = quote(s.prices, { country: m.country, category: m.category, windowOpen: open, provider });
  if (q.chargeMicros > 0 && (recipient.balanceMicros ?? 0) < q.chargeMicros) {
    throw insufficientBalance(q.chargeMicros, recipient.balanceMicros ?? 0);
  }
  const id = newId('message');
  const debitId = q.chargeMicros > 0 ? newId('walletTransaction') : null;
  const values = [
    id,
    sender.account.id,
    recipient.contact.id,
    m.type,
    m.to,
    JSON.stringify(m.stored),
    m.templateId,
    provider,
    sender.mode === 'sandbox',
    q.country,
    q.category,
    q.listPriceMicros,
    q.chargeMicros,
    q.freeReason,
    sender.idempotencyKey ?? null,
    bulk?.jobId ?? null,
    bulk?.index ?? null,
    now,
  ];
  const { rows } = debitId
    ? await tx.query<InsertedRow>(INSERT_CHARGED_SQL, [...values, debitId, describe(m, q)])
    : await tx.query<InsertedRow>(INSERT_FREE_SQL, values);
  const row = rows[0];
  if (!row) throw new AlreadySent();
  const { balance_after, wallet_currency, threshold, ...message } = row;
  if (debitId) {
    // The balance was read under the lock and is enough, so the guarded debit cannot miss.
    if (balance_after === null) throw new Error(`debit of message ${id} did not apply`);
    await emitIfBelowThreshold(
      tx,
      s.events,
      sender.account.id,
      {
        id: debitId,
        amount_micros: -q.chargeMicros,
        balance_after_micros: balance_after,
        currency: wallet_currency ?? 'USD',
      },
      threshold,
    );
  }
  // A batch enqueues all its messages' jobs at once instead (enqueueMany).
  if (options.enqueue !== false) await s.jobs.enqueue(tx, DISPATCH_JOB, { messageId: id }, { notify: false });
  return message;
}

/** POST /messages: accepts one prepared message in its own transaction. */
export async function acceptMessage(
  s: AcceptServices,
  sender: Sender,
  m: PreparedMessage,
): Promise<Accepted> {
  try {
    const message = await s.db.transaction((tx) => acceptIn(s, tx, sender, m));
    return { message, existing: false, usageCounted: Boolean(sender.usage) };
  } catch (err) {
    if (!(err instanceof AlreadySent) || !sender.idempotencyKey) throw err;
    const message = await findByIdempotencyKey(s.db, sender.account.id, sender.idempotencyKey);
    if (!message) throw new Error('idempotency key conflict without a message');
    return { message, existing: true, usageCounted: false };
  }
}
