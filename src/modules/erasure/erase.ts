// Erasure: personal data leaves every table in one transaction, while what the business must keep
// stays: messages keep their ids, statuses, times and prices; the wallet's ledger keeps every amount
// (its descriptions lose the numbers); counts add up as before. Two scopes:
//   - one contact (DELETE /contacts/{id}?erase=true): its rows are found by its id and by its number,
//     in both forms (a number can write in before it is a contact, and messages name the number);
//   - a whole closed sub-account (DELETE /partner/accounts/{id}?erase=true): every row of it.
// Where a column cannot be empty a number becomes "erased". Texts about the contact as a whole (an
// event's payload, a run's variables) are replaced; texts shared with other contacts (a bulk job's
// items, a ledger description) lose the number only. What is kept and why: docs/operations.md.
import type { Tx } from '../../kernel/database/db.ts';

export const ERASED = 'erased';
/** What erased data becomes: an event's `data`, a webhook call's whole payload, a bulk item. */
export const ERASED_DATA = '{"erased":true}';
/**
 * An erased event keeps its envelope (id, type, time, account, cause: what receivers and the API
 * read it by) and its `data` becomes ERASED_DATA, rewritten by jsonb, whose text this marks: the
 * outbox's own JSON (JSON.stringify) never holds `": "` outside a string, and a string escapes its
 * quotes, so no event that was not erased can hold it.
 */
export const ERASED_EVENT_MARK = '"data": {"erased": true}';

/** Whether an event's stored payload was erased (or erased whole, as erasures did before). */
export const isErasedEvent = (payload: string): boolean =>
  payload === ERASED_DATA || payload.includes(ERASED_EVENT_MARK);

// The same in SQL is the database function event_erased(payload) (migrations/036_read_models.sql).
/** What an erased message's error says instead of the provider's words (its code stays). */
export const ERASED_ERROR_MESSAGE = 'Erased with the contact; the code says what happened.';

export type Scope =
  | {
      kind: 'contact';
      accountId: string;
      contactId: string;
      /** E.164; null for a customer known only by their WhatsApp user id. */
      phone: string | null;
      whatsappUserId: string | null;
      /** The ids of contacts merged into this one (contacts/merge.ts): texts written before name them. */
      formerIds: string[];
    }
  | { kind: 'account'; accountId: string };

/**
 * One statement's WHERE for the scope: `byContact` (its id is $2, its number $3, its digits $4, its
 * WhatsApp user id $5, a contact without one has it null, which matches nothing; the ids merged into
 * it $6) narrows the account's rows to the contact's; the whole account takes them all.
 */
interface Where {
  clause: string;
  params: unknown[];
}

function whereOf(scope: Scope, byContact: string): Where {
  if (scope.kind === 'account') return { clause: 'account_id = $1', params: [scope.accountId] };
  const digits = scope.phone?.replace(/^\+/, '') ?? null;
  // Every statement names all six parameters, so each has a type whichever the clause uses (the
  // coalesce is never null: $2, the contact's id, is not; a cardinality is never negative).
  return {
    clause: `account_id = $1 AND (${byContact}) AND coalesce($2::text, $3::text, $4::text, $5::text) IS NOT NULL
             AND cardinality($6::text[]) >= 0`,
    params: [scope.accountId, scope.contactId, scope.phone, digits, scope.whatsappUserId, scope.formerIds],
  };
}

const BY_ID_OR_NUMBER = (column: string) => `contact_id = $2 OR ${column} = $3`;
// strpos with a null name is null: that name matches nothing. A text written before a merge names
// the merged contact's id.
const NAMING = (column: string) =>
  `strpos(${column}, $2) > 0 OR strpos(${column}, $4) > 0 OR strpos(${column}, $5) > 0
   OR EXISTS (SELECT 1 FROM unnest($6::text[]) AS f (id) WHERE strpos(${column}, f.id) > 0)`;

async function update(tx: Tx, sql: (where: string) => string, w: Where): Promise<string[]> {
  const { rows } = await tx.query<{ id: string }>(sql(w.clause), w.params);
  return rows.map((r) => r.id);
}

/**
 * Scrubs every table of the scope (the caller deletes the contact, or closes the account, first,
 * under lockForErasure). The rows that writers lock (messages, conversations, runs, calls,
 * recipients, bulk jobs) are rewritten before the events that name them: a writer that locked one
 * first commits before the statement that rewrites it goes on, so the events it emitted are there
 * when the events are scrubbed, and one that comes after finds the row erased (lock.ts).
 */
export async function eraseData(tx: Tx, scope: Scope): Promise<{ messages: number }> {
  // A message's address becomes ERASED whichever it was (a number or a user id): a queued one is then
  // not sent (messages/dispatch.ts reads the mark).
  const messageIds = await update(
    tx,
    (w) => `UPDATE messages SET phone = '${ERASED}', whatsapp_user_id = NULL,
                   content = '{}', provider_message_id = NULL, idempotency_key = NULL,
                   error = CASE WHEN error IS NULL THEN NULL ELSE jsonb_strip_nulls(jsonb_build_object(
                     'code', error->'code', 'providerCode', error->'providerCode',
                     'message', '${ERASED_ERROR_MESSAGE}')) END
             WHERE ${w} RETURNING id`,
    whereOf(scope, `${BY_ID_OR_NUMBER('phone')} OR whatsapp_user_id = $5`),
  );
  // The customer's files (their chunks go with them); for a whole account, its uploads too.
  if (scope.kind === 'contact') {
    await tx.query(
      `DELETE FROM media WHERE account_id = $1 AND direction = 'inbound' AND message_id = ANY ($2)`,
      [scope.accountId, messageIds],
    );
  } else {
    await tx.query('DELETE FROM media WHERE account_id = $1', [scope.accountId]);
  }
  await update(
    tx,
    (w) =>
      // A survey's comment is the customer's own words.
      `UPDATE conversations SET phone = CASE WHEN phone IS NOT NULL THEN '${ERASED}' END, csat_comment = NULL
        WHERE ${w} RETURNING id`,
    whereOf(scope, BY_ID_OR_NUMBER('phone')),
  );
  // Agents' notes on the contact's conversations are about the contact: they go (an account's all).
  await update(
    tx,
    (w) => `DELETE FROM conversation_notes WHERE ${w} RETURNING id`,
    whereOf(
      scope,
      'conversation_id IN (SELECT id FROM conversations WHERE account_id = $1 AND contact_id = $2)',
    ),
  );
  if (scope.kind === 'account')
    await tx.query('DELETE FROM canned_responses WHERE account_id = $1', [scope.accountId]);
  await eraseStoredAnswers(tx, scope);
  await eraseAutomation(tx, scope);
  await eraseVoiceAndCampaigns(tx, scope);
  await eraseSharedTexts(tx, scope);
  await eraseEvents(tx, scope);
  return { messages: messageIds.length };
}

/**
 * An event's erased payload: its envelope, made again from its columns (an event erased before
 * the envelope was kept gets it back), with `data` erased and its `causedBy` (ids only) kept.
 */
const ERASED_ENVELOPE = `(jsonb_build_object('id', id, 'type', type,
    'createdAt', to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
    'accountId', account_id, 'data', '${ERASED_DATA}'::jsonb)
  || CASE WHEN payload::jsonb ? 'causedBy' THEN jsonb_build_object('causedBy', payload::jsonb -> 'causedBy')
          ELSE '{}'::jsonb END)::text`;

/**
 * Events naming the contact, and what receivers answered to their deliveries. Their deliveries are
 * locked before the attempts are erased: a dispatcher recording an answer it got for one either
 * committed first (its attempt is then erased here) or waits, and then finds the event erased and
 * keeps no answer (webhooks/outcomes.ts).
 */
async function eraseEvents(tx: Tx, scope: Scope): Promise<void> {
  const eventIds = await update(
    tx,
    (w) => `UPDATE events SET payload = ${ERASED_ENVELOPE} WHERE ${w} RETURNING id`,
    whereOf(scope, NAMING('payload')),
  );
  await tx.query(
    'SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries WHERE event_id = ANY ($1) FOR UPDATE) locked',
    [eventIds],
  );
  await tx.query(
    `UPDATE webhook_deliveries SET last_error = NULL WHERE event_id = ANY ($1) AND last_error IS NOT NULL`,
    [eventIds],
  );
  await tx.query(
    `UPDATE webhook_attempts a SET response_excerpt = NULL, error = NULL FROM webhook_deliveries d
      WHERE d.id = a.delivery_id AND d.event_id = ANY ($1)
        AND (a.response_excerpt IS NOT NULL OR a.error IS NOT NULL)`,
    [eventIds],
  );
}

/**
 * Stored answers to idempotent requests (a replay then runs afresh). Keys belong to the account, or
 * to its partner when a partner key acted on it: the partner's are taken only where they name the
 * contact (or, for a whole account, the account).
 */
async function eraseStoredAnswers(tx: Tx, scope: Scope): Promise<void> {
  const partner = '(SELECT partner_id FROM accounts WHERE id = $1)';
  if (scope.kind === 'account') {
    await tx.query(
      `DELETE FROM idempotency_keys WHERE owner_id = $1 OR (owner_id = ${partner} AND strpos(response_body, $1) > 0)`,
      [scope.accountId],
    );
    return;
  }
  const w = whereOf(scope, NAMING('response_body'));
  await tx.query(
    `DELETE FROM idempotency_keys WHERE ${w.clause.replace('account_id = $1', `owner_id IN ($1, ${partner})`)}`,
    w.params,
  );
}

/** Runs of rules, sequences and journeys: ended if still going, their data cleared. */
async function eraseAutomation(tx: Tx, scope: Scope): Promise<void> {
  const byContact = whereOf(scope, 'contact_id = $2');
  await update(
    tx,
    (w) => `UPDATE rule_runs SET conditions = '[]', actions = '[]' WHERE ${w} RETURNING id`,
    byContact,
  );
  await update(
    tx,
    (w) => `UPDATE sequence_enrollments
               SET status = CASE WHEN status = 'active' THEN 'canceled' ELSE status END,
                   reason = CASE WHEN status = 'active' THEN 'contact_erased' ELSE reason END
             WHERE ${w} RETURNING id`,
    byContact,
  );
  const runs = await update(
    tx,
    (w) => `UPDATE journey_runs
               SET status = CASE WHEN status IN ('running', 'waiting') THEN 'canceled' ELSE status END,
                   vars = '{}', trigger_data = '{}', error = NULL
             WHERE ${w} RETURNING id`,
    byContact,
  );
  await tx.query('UPDATE journey_run_steps SET output = NULL, error = NULL WHERE run_id = ANY ($1)', [runs]);
  await update(
    tx,
    (w) =>
      `UPDATE automation_calls SET payload = '${ERASED_DATA}', response = NULL, last_error = NULL WHERE ${w} RETURNING id`,
    whereOf(scope, NAMING('payload')),
  );
}

async function eraseVoiceAndCampaigns(tx: Tx, scope: Scope): Promise<void> {
  const calls = await update(
    tx,
    (
      w,
    ) => `UPDATE calls SET to_number = '${ERASED}', variables = '{}', rendered = '{}', digits = '[]', sim_keys = '',
                   -- A sandbox call still going plays on to its end, without the script it was reading.
                   sim = sim - 'twiml'
             WHERE ${w} RETURNING id`,
    whereOf(scope, BY_ID_OR_NUMBER('to_number')),
  );
  await tx.query(`UPDATE call_callbacks SET params = '{}' WHERE call_id = ANY ($1)`, [calls]);
  await update(
    tx,
    (w) =>
      `UPDATE campaign_recipients SET phone = CASE WHEN phone IS NOT NULL THEN '${ERASED}' END WHERE ${w} RETURNING campaign_id AS id`,
    whereOf(scope, BY_ID_OR_NUMBER('phone')),
  );
}

/**
 * Texts shared between contacts: a contact's number is taken out ($3, $4: its two forms); a whole
 * account's bulk inputs and results go, and every number-like run of digits leaves its ledger.
 */
async function eraseSharedTexts(tx: Tx, scope: Scope): Promise<void> {
  if (scope.kind === 'account') {
    const account = [scope.accountId];
    await tx.query(`UPDATE bulk_jobs SET items = NULL WHERE account_id = $1 AND items IS NOT NULL`, account);
    await tx.query(
      `UPDATE bulk_job_chunks SET results = '[]' WHERE job_id IN (SELECT id FROM bulk_jobs WHERE account_id = $1)`,
      account,
    );
    // The ledger's one permitted change (migration 034): a description, without numbers.
    await tx.query(
      `UPDATE wallet_transactions SET description = regexp_replace(description, '\\+?[0-9]{6,}', '[erased]', 'g')
        WHERE account_id = $1 AND description ~ '[0-9]{6,}'`,
      account,
    );
    return;
  }
  // Each name of the contact in turn: its number, the number's digits, its WhatsApp user id.
  const names = [scope.phone, scope.phone?.replace(/^\+/, ''), scope.whatsappUserId].filter(
    (name): name is string => !!name,
  );
  for (const name of names) {
    const named = [scope.accountId, name];
    // A job not done yet: the items naming the contact become {"erased":true} whole (their name,
    // email and attributes too), in their places, so the chunks still to run fail them.
    await tx.query(
      `UPDATE bulk_jobs j
          SET items = (SELECT jsonb_agg(CASE WHEN strpos(x.item::text, $2) > 0 THEN '${ERASED_DATA}'::jsonb ELSE x.item END
                                        ORDER BY x.n)::text
                         FROM jsonb_array_elements(j.items::jsonb) WITH ORDINALITY AS x (item, n))
        WHERE j.account_id = $1 AND j.items IS NOT NULL AND strpos(j.items, $2) > 0`,
      named,
    );
    await tx.query(
      `UPDATE bulk_job_chunks ch SET results = replace(results::text, $2, '[erased]')::jsonb FROM bulk_jobs j
        WHERE j.id = ch.job_id AND j.account_id = $1 AND strpos(ch.results::text, $2) > 0`,
      named,
    );
    await tx.query(
      `UPDATE wallet_transactions SET description = replace(description, $2, '[erased]')
        WHERE account_id = $1 AND strpos(description, $2) > 0`,
      named,
    );
  }
}

/** A closed sub-account's people: its contacts, team members' names and emails, console logins. */
export async function erasePeople(tx: Tx, accountId: string): Promise<void> {
  await tx.query('DELETE FROM contacts WHERE account_id = $1', [accountId]);
  await tx.query('DELETE FROM console_invitations WHERE account_id = $1', [accountId]);
  // Console logins of the account's members go with their sessions (ON DELETE CASCADE).
  await tx.query('DELETE FROM console_users WHERE account_id = $1', [accountId]);
  await tx.query(
    `UPDATE team_members SET name = '${ERASED}', email = 'erased-' || id || '@erased.invalid' WHERE account_id = $1`,
    [accountId],
  );
}
