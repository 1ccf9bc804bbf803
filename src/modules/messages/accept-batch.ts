// Accepting messages, many at a time, in the caller's transaction: the sends that arrive together
// (accept-queue.ts groups concurrent POST /messages) and the recipients of a bulk send. Every
// message is decided as if it were alone, in order: its recipient's contact is found or made, the
// customer service window checked, the price charged against the wallet as the earlier messages
// left it. Then they are written together: the wallet lock, the contacts, the messages with their
// debits, ledger rows and dispatch jobs cost a handful of statements whatever the
// number of messages. A message refused (422, 402) writes nothing; the others are not affected.
import { providerFor, type SendMode } from '../../channels/registry.ts';
import type { Provider } from '../../channels/types.ts';
import type { AccountSnapshot } from '../../kernel/access/auth.ts';
import { type Sql, sqlState, type TransactionOptions, type Tx } from '../../kernel/database/db.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import type { Jobs } from '../../kernel/jobs/jobs.ts';
import type { EventInput } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { isPhoneAddress } from '../../kernel/values/whatsapp-user-ids.ts';
import { crossesBelow, emitIfBelowThreshold } from '../billing/index.ts';
import { type ContactRow, insertNumbers, toContact } from '../contacts/index.ts';
import { type Quote, quote, windowOpen } from '../pricing/index.ts';
import type { AcceptServices } from './accept.ts';
import {
  type AcceptCache,
  type KnownContact,
  type Pair,
  pairKey,
  type State,
  type Wallet,
} from './accept-cache.ts';
import { firstResponseSql } from './first-response.ts';
import { raiseSkewSql, skewOf } from './id-skew.ts';
import type { PreparedMessage } from './prepare.ts';
import { MESSAGE_COLUMNS, type MessageRow } from './repo.ts';

export const DISPATCH_JOB = 'messages.dispatch';

export interface Sender {
  account: Pick<AccountSnapshot, 'id' | 'channelProvider'>;
  mode: SendMode;
  /** The request's Idempotency-Key: at most one message per key, whatever happens. */
  idempotencyKey?: string | null;
  /** The business's inbox sending by itself (away, greeting, survey): `source: automation`, no reply. */
  automated?: boolean;
}

export interface SendRequest {
  sender: Sender;
  message: PreparedMessage;
  bulk?: { jobId: string; index: number } | null;
  /** The broadcast campaign the message is for (campaigns/sender.ts). */
  campaign?: { id: string } | null;
}

export type SendResult =
  | { kind: 'accepted'; message: MessageRow }
  /** Its Idempotency-Key already has its message (written by an earlier run of the request). */
  | { kind: 'existing' }
  | { kind: 'refused'; error: ApiError; chargeMicros: number };

/** A batch that must be accepted one message at a time instead (see acceptBatch). */
export class SplitBatch extends Error {}

export function cswViolation(to: string): ApiError {
  return new ApiError(
    'CSW_VIOLATION',
    `No message from ${to} in the last 24 hours: outside the customer service window only an approved template may be sent.`,
  );
}

export function optedOut(to: string): ApiError {
  return new ApiError(
    'CONTACT_OPTED_OUT',
    `${to} has stopped marketing messages on WhatsApp: a MARKETING template may not be sent to them (a UTILITY or AUTHENTICATION template may).`,
    {
      details: [
        { field: 'templateName', issue: 'is a MARKETING template and the contact opted out of marketing' },
      ],
    },
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

function contactsOf(rows: ContactRow[], pairs: Pair[]): Map<string, ContactRow> {
  const wanted = new Set(pairs.map((p) => pairKey(p.accountId, p.address)));
  const found = new Map<string, ContactRow>();
  for (const c of rows) {
    if (!c.id) continue;
    for (const address of [c.phone, c.whatsapp_user_id]) {
      const key = address ? pairKey(c.account_id, address) : null;
      if (key && wanted.has(key)) found.set(key, c);
    }
  }
  return found;
}

/**
 * The contacts of (account, address) pairs: $N and $N+1 the accounts and numbers of the pairs sent
 * to a number, $N+2 and $N+3 those sent to a WhatsApp user id, side by side: one lookup in the
 * (account_id, phone) or (account_id, whatsapp_user_id) unique index per pair, whatever the plan.
 * (Written as `account_id = ANY(…) AND phone = ANY(…)`, on a table of many small lists, the
 * prepared read's generic plan read every contact of the sending accounts through an index on
 * account_id alone, 1.2 ms a batch in bench:send.) A batch without user ids passes empty lists.
 */
const pairedContacts = (n: number) =>
  `(SELECT c.* FROM unnest($${n}::text[], $${n + 1}::text[]) AS p (account_id, phone)
      JOIN contact_rows c ON c.account_id = p.account_id AND c.phone = p.phone
    UNION ALL
    SELECT c.* FROM unnest($${n + 2}::text[], $${n + 3}::text[]) AS p (account_id, user_id)
      JOIN contact_rows c ON c.account_id = p.account_id AND c.whatsapp_user_id = p.user_id) c`;

function pairParams(pairs: Pair[]): string[][] {
  const byPhone = pairs.filter((p) => isPhoneAddress(p.address));
  const byUserId = pairs.filter((p) => !isPhoneAddress(p.address));
  return [
    byPhone.map((p) => p.accountId),
    byPhone.map((p) => p.address),
    byUserId.map((p) => p.accountId),
    byUserId.map((p) => p.address),
  ];
}

export async function readContacts(tx: Tx, pairs: Pair[]): Promise<Map<string, ContactRow>> {
  const { rows } = await tx.query<ContactRow>(`SELECT c.* FROM ${pairedContacts(1)}`, pairParams(pairs));
  return contactsOf(rows, pairs);
}

/**
 * Reads the wallets of the accounts that may be charged ($1, in id order) and the recipients'
 * contacts ($2 accounts, $3 phones, pair by pair), in one statement: always at least one row, each
 * a contact (or nulls), all carrying the wallets as JSON. `locked`, it locks the wallets until the
 * transaction ends (in id order: batches never wait on each other in a cycle).
 */
const readSql = (locked: boolean) => `
  WITH wallets AS MATERIALIZED (
    SELECT id, wallet_balance_micros AS balance, currency, low_balance_threshold_micros AS threshold
      FROM accounts WHERE id = ANY($1::text[]) ORDER BY id ${locked ? 'FOR NO KEY UPDATE' : ''}
  )
  SELECT c.*,
         (SELECT coalesce(json_agg(w), '[]'::json) FROM wallets w) AS wallets
    FROM (SELECT 1) AS one
    LEFT JOIN ${pairedContacts(2)} ON true`;
/** Exported for the plan test (test/messages/accept-plan.test.ts). */
export const READ_LOCKED = readSql(true);
export const READ_UNLOCKED = readSql(false);

async function readState(sql: Sql, locked: boolean, charged: string[], pairs: Pair[]): Promise<State> {
  const { rows } = await sql.query<ContactRow & { wallets: Wallet[] }>(
    locked ? READ_LOCKED : READ_UNLOCKED,
    [charged, ...pairParams(pairs)],
    { prepared: locked ? 'accept-read-locked' : 'accept-read' },
  );
  return {
    wallets: new Map((rows[0]?.wallets ?? []).map((w) => [w.id, w])),
    contacts: contactsOf(rows, pairs),
  };
}

/** Makes the contacts of new numbers that are being sent to (only once a send is accepted). */
export async function createContacts(
  s: AcceptServices,
  tx: Tx,
  pairs: Pair[],
  now: Date,
): Promise<Map<string, ContactRow>> {
  const created = await insertNumbers(tx, pairs, now);
  await s.events.emitMany(
    tx,
    created.map(
      (c): EventInput => ({ type: 'contact.created', accountId: c.account_id, data: toContact(c) }),
    ),
  );
  const made = new Map(created.map((c) => [pairKey(c.account_id, (c.phone ?? c.whatsapp_user_id)!), c]));
  // Made by another transaction meanwhile: its insert won, and a new statement sees it.
  const raced = pairs.filter((p) => !made.has(pairKey(p.accountId, p.address)));
  if (raced.length > 0) for (const [key, c] of await readContacts(tx, raced)) made.set(key, c);
  return made;
}

/**
 * Writes the accepted messages (each joining its recipient's open conversation, if any), their
 * debits and ledger rows, the wallets' new balances, the conversations' last activity and the
 * messages' dispatch jobs: one statement. (It sends no NOTIFY:
 * the caller wakes the dispatchers once it committed, with wakeDispatchers.) A ledger row is
 * written only for a message that was (its Idempotency-Key may already have one), and a wallet
 * moves by exactly its ledger rows, and only from the balance and threshold the debits were
 * decided from ($6). With $5 (strict), the statement fails, writing nothing, unless every message
 * was written, every wallet moved and every recipient's contact still has the number and last
 * inbound message it was decided from: what lets it run on its own, after an unlocked read or
 * none (accept-cache.ts). (A job of a message that was not written finds no message to send, and
 * ends.) Answers a row per written message, or one row of nulls.
 */
function writeSql(jobs: Jobs): string {
  return `
  WITH msg AS (
    INSERT INTO messages (id, account_id, contact_id, conversation_id, direction, type, phone, whatsapp_user_id,
                          content, template_id, status, provider, sandbox, country, category, list_price_micros,
                          charged_micros, free_reason, price_rule, idempotency_key, bulk_job_id, bulk_index,
                          campaign_id, source, created_at, updated_at)
    SELECT m.id, m.account_id, m.contact_id, cv.id, 'outbound', m.type, m.phone, m.whatsapp_user_id, m.content,
           m.template_id, 'queued', m.provider, m.sandbox, m.country, m.category, m.list_price_micros,
           m.charged_micros, m.free_reason, m.price_rule, m.idempotency_key, m.bulk_job_id, m.bulk_index,
           m.campaign_id, m.source, $3, $3
      FROM jsonb_to_recordset($1::jsonb) AS m (id text, account_id text, contact_id text, type text, phone text,
           whatsapp_user_id text, content jsonb, template_id text, provider text, sandbox boolean, country text, category text,
           list_price_micros bigint, charged_micros bigint, free_reason text, price_rule text, idempotency_key text,
           bulk_job_id text, bulk_index integer, campaign_id text, source text)
      -- The recipient's open conversation, if any, takes the message in.
      LEFT JOIN conversations cv ON cv.account_id = m.account_id AND cv.contact_id = m.contact_id
                                AND cv.status = 'open'
    ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING ${MESSAGE_COLUMNS}
  ), skew AS (
    -- How far the ids' times stray from created_at ($3): the list's time filters rely on it (id-skew.ts).
    ${raiseSkewSql('$7', '$8')}
    RETURNING 1
  ), conversed AS (
    -- The business wrote: the conversation's last activity, and nothing left unread. A reply (one
    -- message, not the inbox's automatic ones, a bulk send's or a campaign's) is its first response
    -- (first-response.ts).
    UPDATE conversations cv SET last_message_at = greatest(cv.last_message_at, $3), unread_count = 0,
           last_message_id = CASE WHEN $3 >= cv.last_message_at THEN t.last_id ELSE cv.last_message_id END,
           ${firstResponseSql('$3', 't.replies')},
           updated_at = $3
      FROM (SELECT conversation_id, max(id) AS last_id,
                   bool_or(source IS NULL AND bulk_job_id IS NULL AND campaign_id IS NULL) AS replies
              FROM msg WHERE conversation_id IS NOT NULL
             GROUP BY conversation_id) t
     WHERE cv.id = t.conversation_id
    RETURNING 1
  ), ledger AS (
    INSERT INTO wallet_transactions (id, account_id, type, amount_micros, balance_after_micros, currency, reference, description)
    SELECT l.id, l.account_id, 'debit', -l.amount, l.balance_after, l.currency, l.message_id, l.description
      FROM jsonb_to_recordset($2::jsonb) AS l (id text, account_id text, amount bigint, balance_after bigint,
           currency text, message_id text, description text)
      JOIN msg ON msg.id = l.message_id
    RETURNING account_id, amount_micros, balance_after_micros
  ), moved AS (
    UPDATE accounts a SET wallet_balance_micros = a.wallet_balance_micros + t.total, updated_at = $3
      FROM (SELECT account_id, sum(amount_micros) AS total FROM ledger GROUP BY account_id) t
      JOIN jsonb_to_recordset($6::jsonb) AS w (id text, balance bigint, threshold bigint) ON w.id = t.account_id
     WHERE a.id = t.account_id AND a.wallet_balance_micros = w.balance
       AND a.low_balance_threshold_micros IS NOT DISTINCT FROM w.threshold
    RETURNING a.id
  ), jobs AS (
    ${jobs.insertStatement(DISPATCH_JOB, 4)}
  ), checked AS (
    SELECT (NOT $5::boolean OR abort_unless(
             (SELECT count(*) FROM msg) = jsonb_array_length($1::jsonb)
               AND (SELECT count(*) FROM moved) = (SELECT count(DISTINCT account_id) FROM ledger)
               AND (SELECT count(*) FROM jsonb_to_recordset($1::jsonb) AS m (contact_id text, phone text,
                                                                         whatsapp_user_id text,
                                                                         last_inbound_at timestamptz,
                                                                         marketing_opt_out boolean)
                      JOIN contacts c ON c.id = m.contact_id
                                     -- Still at the address the message goes to.
                                     AND (c.phone = m.phone OR c.whatsapp_user_id = m.whatsapp_user_id)
                                     -- As the process knows it: Date, to the millisecond.
                                     AND date_trunc('milliseconds', c.last_inbound_at)
                                         IS NOT DISTINCT FROM m.last_inbound_at
                                     AND c.marketing_opt_out = m.marketing_opt_out)
                   = jsonb_array_length($1::jsonb),
             'a wallet, a contact or a message changed since it was read')) AS ok
  )
  -- checked is the outer side: it is evaluated even when no message was written.
  SELECT msg.* FROM checked LEFT JOIN msg ON true WHERE checked.ok`;
}

/**
 * After the transaction (or statement) that accepted messages committed: wakes the workers that
 * hand them to their provider (see Jobs.wake for why not in the same transaction).
 */
export function wakeDispatchers(s: Pick<AcceptServices, 'jobs'>, results: SendResult[]): void {
  if (results.some((r) => r.kind === 'accepted')) s.jobs.wake(DISPATCH_JOB);
}

/** The write statement of each job queue (it names pg-boss's table), made once. */
const writeSqlOf = new WeakMap<Jobs, string>();

/** The strict write statement found what it was told had changed (see writeSql). */
const STATE_CHANGED = 'TD001';

/** What a batch depends on, before anything is read. */
interface Batch {
  requests: SendRequest[];
  now: Date;
  providers: ReturnType<typeof providerFor>[];
  /** The accounts whose wallets the batch may charge, in id order. */
  charged: string[];
  /** Each request's account and recipient. */
  pairs: Pair[];
}

function batchOf(s: AcceptServices, requests: SendRequest[]): Batch {
  const providers = requests.map((r) => providerFor(r.sender.account.channelProvider, r.sender.mode));
  const now = s.now();
  // Only sends that can cost something read (and lock) their wallet; free ones never wait for it.
  const charged = new Set(
    requests.flatMap((r, i) =>
      providers[i] !== 'sandbox' && s.prices.listPrice(r.message.country, r.message.category, now) > 0
        ? [r.sender.account.id]
        : [],
    ),
  );
  return {
    requests,
    now,
    providers,
    charged: [...charged].sort(),
    pairs: requests.map((r) => ({ accountId: r.sender.account.id, address: r.message.to })),
  };
}

/** What a batch will do, decided from the wallets and contacts as read or remembered. */
interface Plan {
  now: Date;
  wallets: Map<string, Wallet>;
  /** Each wallet's balance after the batch's debits. */
  balances: Map<string, number>;
  /** Per request: its refusal, or null when it is among `messages`. */
  results: (SendResult | null)[];
  messages: Record<string, unknown>[];
  ledger: Record<string, unknown>[];
  /** Addresses being sent to that have no contact yet. */
  newNumbers: Map<string, Pair>;
}

/** What deciding one send of this moment comes to: refused, or charged `quote.chargeMicros`. */
export type Decision =
  | { kind: 'refused'; error: ApiError; chargeMicros: number }
  | { kind: 'go'; quote: Quote };

/**
 * One send decided at `now` from its recipient's contact (none: a new number, whose window is
 * closed) and its account's balance: the customer service window, the contact's marketing
 * opt-out, the price against the balance. Shared by accepting a send and releasing a scheduled
 * one (schedule.ts), which decides at its time what accepting it then would have.
 */
export function decideOne(
  s: Pick<AcceptServices, 'prices'>,
  m: Pick<PreparedMessage, 'to' | 'country' | 'category' | 'freeForm'>,
  provider: Provider,
  contact: Pick<KnownContact, 'last_inbound_at' | 'marketing_opt_out'> | undefined,
  balance: number,
  now: Date,
): Decision {
  const open = windowOpen(contact?.last_inbound_at ?? null, now);
  const q = quote(s.prices, {
    country: m.country,
    category: m.category,
    windowOpen: open,
    provider,
    at: now,
  });
  if (m.freeForm && !open) return { kind: 'refused', error: cswViolation(m.to), chargeMicros: 0 };
  // The customer told WhatsApp to stop marketing messages (user_preferences): Meta would refuse it.
  if (m.category === 'marketing' && contact?.marketing_opt_out)
    return { kind: 'refused', error: optedOut(m.to), chargeMicros: 0 };
  if (q.chargeMicros > balance) {
    return {
      kind: 'refused',
      error: insufficientBalance(q.chargeMicros, balance),
      chargeMicros: q.chargeMicros,
    };
  }
  return { kind: 'go', quote: q };
}

/** What a send's debit says in the wallet's ledger. */
export const debitDescription = (q: Quote, to: string) =>
  `${q.category} message to ${to} (${q.country ?? 'no country'})`;

/** Decides each request in order, as if it were alone, from the wallets and contacts given. */
function decide(s: AcceptServices, b: Batch, { wallets, contacts }: State): Plan {
  const { now } = b;
  const balances = new Map([...wallets].map(([id, w]) => [id, w.balance]));
  const results: (SendResult | null)[] = [];
  const messages: Record<string, unknown>[] = [];
  const ledger: Record<string, unknown>[] = [];
  const newNumbers = new Map<string, Pair>();
  for (const [i, { sender, message: m, bulk, campaign }] of b.requests.entries()) {
    const accountId = sender.account.id;
    // A new number has no contact yet: it never wrote, so its window is closed.
    const contact: KnownContact | undefined = contacts.get(pairKey(accountId, m.to));
    const balance = balances.get(accountId) ?? 0;
    const decision = decideOne(s, m, b.providers[i]!, contact, balance, now);
    if (decision.kind === 'refused') {
      results.push(decision);
      continue;
    }
    const q = decision.quote;
    const id = newId('message');
    if (q.chargeMicros > 0) {
      balances.set(accountId, balance - q.chargeMicros);
      ledger.push({
        // Made under the wallet's lock, or before a write that fails unless the wallet is as read:
        // ids sort in the order the debits apply.
        id: newId('walletTransaction'),
        account_id: accountId,
        amount: q.chargeMicros,
        balance_after: balance - q.chargeMicros,
        currency: wallets.get(accountId)!.currency,
        message_id: id,
        description: debitDescription(q, m.to),
      });
    }
    // Contacts are made only for numbers actually being sent to: a refused send leaves nothing.
    if (!contact) newNumbers.set(pairKey(accountId, m.to), { accountId, address: m.to });
    messages.push({
      id,
      account_id: accountId,
      contact_id: contact?.id ?? null,
      // What the strict write checks the contact still has (not a column of the message).
      last_inbound_at: contact?.last_inbound_at ?? null,
      marketing_opt_out: contact?.marketing_opt_out ?? false,
      type: m.type,
      phone: isPhoneAddress(m.to) ? m.to : null,
      whatsapp_user_id: isPhoneAddress(m.to) ? null : m.to,
      content: m.stored,
      template_id: m.templateId,
      provider: b.providers[i],
      sandbox: sender.mode === 'sandbox',
      country: q.country,
      category: q.category,
      list_price_micros: q.listPriceMicros,
      charged_micros: q.chargeMicros,
      free_reason: q.freeReason,
      price_rule: q.rule,
      idempotency_key: sender.idempotencyKey ?? null,
      bulk_job_id: bulk?.jobId ?? null,
      bulk_index: bulk?.index ?? null,
      campaign_id: campaign?.id ?? null,
      source: sender.automated ? 'automation' : null,
    });
    results.push(null);
  }
  return { now, wallets, balances, results, messages, ledger, newNumbers };
}

/** Runs the write statement; answers the messages written. */
async function write(
  s: AcceptServices,
  sql: Sql,
  p: Plan,
  strict: boolean,
): Promise<Map<string, MessageRow>> {
  let statement = writeSqlOf.get(s.jobs);
  if (!statement) {
    statement = writeSql(s.jobs);
    writeSqlOf.set(s.jobs, statement);
  }
  const skew = skewOf(
    p.messages.map((m) => m.id as string),
    p.now,
  );
  const { rows } = await sql.query<MessageRow>(
    statement,
    [
      JSON.stringify(p.messages),
      JSON.stringify(p.ledger),
      p.now,
      // One dispatch job for the batch's messages (none when all were refused).
      JSON.stringify(p.messages.length > 0 ? [{ data: { messageIds: p.messages.map((m) => m.id) } }] : []),
      strict,
      JSON.stringify([...p.wallets.values()]),
      skew.aheadMs,
      skew.behindMs,
    ],
    { prepared: 'accept-write' },
  );
  return new Map(rows.flatMap((r) => (r.id ? [[r.id, r]] : [])));
}

function answers(p: Plan, written: Map<string, MessageRow>): SendResult[] {
  let next = 0;
  return p.results.map((r): SendResult => {
    if (r) return r;
    const row = written.get(p.messages[next++]!.id as string);
    return row ? { kind: 'accepted', message: row } : { kind: 'existing' };
  });
}

/** The wallets whose balance the batch takes below their low-balance threshold. */
const crossings = (p: Plan) =>
  [...p.wallets.values()].filter((w) => crossesBelow(w.balance, p.balances.get(w.id)!, w.threshold));

/**
 * How to open the transaction acceptBatch runs in: its read and write are prepared statements run
 * for most sends, on their generic plans (checked by test/messages/accept-plan.test.ts) rather than planned
 * again on every call (see TransactionOptions.genericPlans).
 */
export const ACCEPT_TRANSACTION: TransactionOptions = { genericPlans: true };

/**
 * Accepts the requests in order inside `tx`; answers each one's result. The dispatch jobs of the
 * accepted messages are enqueued in the same transaction; the caller calls wakeDispatchers after
 * its commit. Throws SplitBatch (nothing is written then, once the caller rolls back) when a
 * message of a batch of several turned out to exist already: the running balances assumed it
 * would be written, so the caller accepts them one by one. `cache` learns what was read and
 * written (if the transaction then fails, the next strict write finds the cache wrong, harmlessly).
 */
export async function acceptBatch(
  s: AcceptServices,
  tx: Tx,
  requests: SendRequest[],
  cache?: AcceptCache,
): Promise<SendResult[]> {
  const b = batchOf(s, requests);
  const state = await readState(tx, true, b.charged, b.pairs);
  cache?.remember(state);
  const p = decide(s, b, state);
  if (p.newNumbers.size > 0) {
    const made = await createContacts(s, tx, [...p.newNumbers.values()], p.now);
    for (const m of p.messages)
      m.contact_id ??= made.get(
        pairKey(m.account_id as string, (m.phone ?? m.whatsapp_user_id) as string),
      )!.id;
    for (const c of made.values()) cache?.contact(c);
  }
  const written = await write(s, tx, p, false);
  if (written.size < p.messages.length && requests.length > 1) throw new SplitBatch();
  // A lone request whose Idempotency-Key message exists already debited nothing.
  if (written.size === p.messages.length) cache?.moved(p.wallets, p.balances);
  else cache?.forget(b.charged, b.pairs);

  for (const wallet of crossings(p)) {
    const after = p.balances.get(wallet.id)!;
    const last = p.ledger.findLast((l) => l.account_id === wallet.id)!;
    // The batch as one charge, for the threshold: it crossed it at most once.
    await emitIfBelowThreshold(
      tx,
      s.events,
      wallet.id,
      {
        id: last.id as string,
        amount_micros: after - wallet.balance,
        balance_after_micros: after,
        currency: wallet.currency,
      },
      wallet.threshold,
    );
  }
  return answers(p, written);
}

/**
 * Writes a plan with the strict write statement; answers null (nothing written) when the state it
 * was decided from changed meanwhile.
 */
async function writeStrictly(
  s: AcceptServices,
  b: Batch,
  p: Plan,
  cache: AcceptCache | undefined,
): Promise<SendResult[] | null> {
  try {
    const results = answers(p, await write(s, s.db, p, true));
    cache?.moved(p.wallets, p.balances);
    return results;
  } catch (err) {
    if (sqlState(err) !== STATE_CHANGED) throw err;
    cache?.forget(b.charged, b.pairs);
    return null;
  }
}

/**
 * The same acceptance without a transaction, when it can be: decided from what `cache` knows of
 * the wallets and contacts (one round trip), or else from a read without locks (two), and written
 * by one statement that fails, writing nothing, if a wallet, a contact or a message changed
 * meanwhile. Answers null (nothing written) when the batch needs the locked transaction instead:
 * a new contact or a low-balance event to write with it, or the state changed under it. Most
 * sends of a busy account are to known numbers, so most batches take this path, and hold a
 * wallet's row lock for one statement instead of a transaction's four round trips.
 */
export async function acceptBatchOptimistically(
  s: AcceptServices,
  requests: SendRequest[],
  cache?: AcceptCache,
): Promise<SendResult[] | null> {
  const b = batchOf(s, requests);
  const known = cache?.state(b.charged, b.pairs);
  if (known) {
    const p = decide(s, b, known);
    // A refusal is never taken from the cache (nothing would check it), nor a threshold crossed.
    if (p.results.every((r) => r === null) && crossings(p).length === 0) {
      const results = await writeStrictly(s, b, p, cache);
      if (results) return results;
    }
  }
  const state = await readState(s.db, false, b.charged, b.pairs);
  cache?.remember(state);
  const p = decide(s, b, state);
  if (p.newNumbers.size > 0 || crossings(p).length > 0) return null;
  return writeStrictly(s, b, p, cache);
}
