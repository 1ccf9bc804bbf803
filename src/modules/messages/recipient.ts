// The recipient's contact, found or created in the sending transaction (a message to an unknown
// number creates its contact), with what pricing needs from it: when the customer last wrote (the
// customer service window). A send that may be charged also locks the account's wallet here, in the
// same statement, and reads its balance. A known number (the usual case) costs one plain indexed
// read; only a new one is inserted.
import type { Tx } from '../../kernel/db.ts';
import { newId } from '../../kernel/ids.ts';
import { usageCtes, usageKeys } from '../../kernel/limits.ts';
import { CONTACT_COLUMNS, type ContactRow, findContact, insertContact } from '../contacts/repo.ts';

export interface Recipient {
  contact: ContactRow;
  created: boolean;
  /** The wallet balance under the account's row lock, when asked to lock it. */
  balanceMicros: number | null;
}

/**
 * $1 account, $2 phone, $3 whether to lock the wallet. Always one row: the balance (null when not
 * locked) and the contact's columns (null when the number is new). The lock is FOR NO KEY UPDATE:
 * it serialises charges, not the inserts whose foreign keys reference the account.
 */
const FIND = `
  SELECT (SELECT wallet_balance_micros FROM accounts WHERE id = $1 AND $3::boolean FOR NO KEY UPDATE) AS balance,
         ${CONTACT_COLUMNS.split(', ')
           .map((c) => `c.${c}`)
           .join(', ')}
    FROM (SELECT 1) AS one LEFT JOIN contacts c ON c.account_id = $1 AND c.phone = $2`;

/** The same, also counting the API call ($4 the month, $5 the day) of an unlimited plan. */
const FIND_AND_COUNT = `WITH ${usageCtes({ account: '$1', period: '$4', limit: 'NULL', day: '$5' })} ${FIND}`;

type FoundRow = { [K in keyof ContactRow]: ContactRow[K] | null } & { balance: number | null };

export async function recipientOf(
  tx: Tx,
  accountId: string,
  phone: string,
  now: Date,
  lockWallet: boolean,
  /** An API call to count in the account's usage (see usageToCount in kernel/access.ts). */
  usage: Date | null = null,
): Promise<Recipient> {
  const { rows } = usage
    ? await tx.query<FoundRow>(FIND_AND_COUNT, [
        accountId,
        phone,
        lockWallet,
        ...Object.values(usageKeys(usage)),
      ])
    : await tx.query<FoundRow>(FIND, [accountId, phone, lockWallet]);
  const { balance, ...found } = rows[0]!;
  const balanceMicros = lockWallet ? balance : null;
  if (found.id !== null) return { contact: found as ContactRow, created: false, balanceMicros };
  const inserted = await insertContact(tx, {
    id: newId('contact'),
    accountId,
    phone,
    now,
    name: null,
    email: null,
    tags: [],
    attributes: {},
    optedIn: false,
  });
  if ('row' in inserted) return { contact: inserted.row, created: true, balanceMicros };
  // Another transaction created this contact while ours ran: the insert waited for it and did
  // nothing; a new statement sees it.
  const contact = await findContact(tx, accountId, inserted.existingId);
  if (!contact) throw new Error(`contact for ${phone} vanished while sending`);
  return { contact, created: false, balanceMicros };
}
