// The recipient's contact, found or created in the sending transaction (a message to an unknown
// number creates its contact), with what pricing needs from it: when the customer last wrote (the
// customer service window). A send that may be charged also locks the account's wallet here, in the
// same statement, and reads its balance.
import type { Tx } from '../../kernel/db.ts';
import { newId } from '../../kernel/ids.ts';
import { CONTACT_COLUMNS, type ContactRow } from '../contacts/repo.ts';

export interface Recipient {
  contact: ContactRow;
  created: boolean;
  /** The wallet balance under the account's row lock, when asked to lock it. */
  balanceMicros: number | null;
}

const COLUMNS = CONTACT_COLUMNS.split(', ');
const prefixed = (p: string) => COLUMNS.map((c) => `${p}.${c}`).join(', ');

/**
 * $1 contact id, $2 account, $3 phone, $4 now, $5 whether to lock the account's wallet.
 * The lock is FOR NO KEY UPDATE: it serialises charges, not the inserts that reference the account.
 */
const RECIPIENT_SQL = `
  WITH wallet AS (
    SELECT wallet_balance_micros AS balance FROM accounts WHERE id = $2 AND $5::boolean FOR NO KEY UPDATE
  ), inserted AS (
    INSERT INTO contacts (id, account_id, phone, created_at, updated_at)
    VALUES ($1, $2, $3, $4, $4)
    ON CONFLICT (account_id, phone) DO NOTHING
    RETURNING ${CONTACT_COLUMNS}
  )
  SELECT ${prefixed('i')}, true AS created, (SELECT balance FROM wallet) AS balance FROM inserted i
  UNION ALL
  SELECT ${prefixed('c')}, false, (SELECT balance FROM wallet) FROM contacts c
   WHERE c.account_id = $2 AND c.phone = $3 AND NOT EXISTS (SELECT 1 FROM inserted)`;

type RecipientRow = ContactRow & { created: boolean; balance: number | null };

export async function recipientOf(
  tx: Tx,
  accountId: string,
  phone: string,
  now: Date,
  lockWallet: boolean,
): Promise<Recipient> {
  const { rows } = await tx.query<RecipientRow>(RECIPIENT_SQL, [
    newId('contact'),
    accountId,
    phone,
    now,
    lockWallet,
  ]);
  let row = rows[0];
  if (!row) {
    // Another transaction created this contact while ours ran: the insert waited for it and did
    // nothing, and the statement's snapshot predates it. A new statement sees it (and locks anew).
    const again = await tx.query<RecipientRow>(
      `SELECT ${CONTACT_COLUMNS}, false AS created,
              (SELECT wallet_balance_micros FROM accounts WHERE id = $1 AND $3::boolean FOR NO KEY UPDATE) AS balance
         FROM contacts WHERE account_id = $1 AND phone = $2`,
      [accountId, phone, lockWallet],
    );
    row = again.rows[0];
    if (!row) throw new Error(`contact for ${phone} vanished while sending`);
  }
  const { created, balance, ...contact } = row;
  return { contact, created, balanceMicros: lockWallet ? balance : null };
}
