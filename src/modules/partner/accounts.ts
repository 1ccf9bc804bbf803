// Partner provisioning: a partner creates, reads, changes, suspends, reactivates and closes its
// client sub-accounts, and credits their wallets. Every function takes the partner id and answers
// 404 for an account of anyone else.

import type { Sql, Tx } from '../../kernel/database/db.ts';
import { sqlState, UNIQUE_VIOLATION } from '../../kernel/database/db.ts';
import { ApiError, conflict, invalid, notFound } from '../../kernel/http/errors.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { isCountryCode } from '../../kernel/values/countries.ts';
import {
  type AccountChanges,
  type AccountRow,
  type AccountStatus,
  findAccount,
  insertAccount,
  toPartnerAccount,
  updateAccount,
} from '../accounts/index.ts';
import { changeBalance, parseAmount } from '../billing/index.ts';

export interface ProvisionInput {
  accountName: string;
  countryCode: string;
  planCode: string;
  externalRef?: string | null;
  addons?: string[];
}

function checkCountry(code: string): string {
  const upper = code.toUpperCase();
  if (!isCountryCode(upper))
    throw invalid('countryCode', 'must be an ISO 3166-1 alpha-2 country code, like "US"');
  return upper;
}

function refConflict(externalRef: string | null | undefined) {
  return conflict(`An account with externalRef "${externalRef}" already exists.`, [
    { field: 'externalRef', issue: 'is already used by another account' },
  ]);
}

async function withUniqueRef<T>(work: () => Promise<T>, externalRef: string | null | undefined): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (sqlState(err) === UNIQUE_VIOLATION) throw refConflict(externalRef);
    throw err;
  }
}

// A duplicate externalRef inside a transaction would abort it on PostgreSQL; checking first gives
// the clear 409 in the common case, and the unique index still decides races.
async function refTaken(
  sql: Sql,
  partnerId: string | null,
  externalRef: string,
  exceptId?: string,
): Promise<boolean> {
  const { rows } = await sql.query(
    `SELECT 1 FROM accounts WHERE coalesce(partner_id, '') = coalesce($1, '') AND external_ref = $2
       AND ($3::text IS NULL OR id <> $3)`,
    [partnerId, externalRef, exceptId ?? null],
  );
  return rows.length > 0;
}

export async function provisionAccount(
  sql: Sql,
  partnerId: string | null,
  input: ProvisionInput,
): Promise<AccountRow> {
  const countryCode = checkCountry(input.countryCode);
  const externalRef = input.externalRef ?? null;
  if (externalRef && (await refTaken(sql, partnerId, externalRef))) throw refConflict(externalRef);
  return withUniqueRef(
    () =>
      insertAccount(sql, {
        partnerId,
        name: input.accountName,
        countryCode,
        planCode: input.planCode,
        addons: input.addons ?? [],
        externalRef,
      }),
    externalRef,
  );
}

export async function getPartnerAccount(sql: Sql, partnerId: string, accountId: string): Promise<AccountRow> {
  const row = await findAccount(sql, accountId, { partnerId });
  if (!row) throw notFound('account');
  return row;
}

export async function changePartnerAccount(
  tx: Tx,
  partnerId: string,
  accountId: string,
  changes: { accountName?: string; planCode?: string; addons?: string[]; externalRef?: string | null },
): Promise<AccountRow> {
  const row = await findAccount(tx, accountId, { partnerId, forUpdate: true });
  if (!row) throw notFound('account');
  if (row.status === 'CLOSED') throw conflict('A closed account cannot be changed.');
  if (changes.externalRef && (await refTaken(tx, partnerId, changes.externalRef, accountId))) {
    throw refConflict(changes.externalRef);
  }
  const update: AccountChanges = {
    name: changes.accountName,
    planCode: changes.planCode,
    addons: changes.addons,
    externalRef: changes.externalRef,
  };
  return withUniqueRef(() => updateAccount(tx, accountId, update), changes.externalRef);
}

const ALLOWED_MOVES: Record<AccountStatus, AccountStatus[]> = {
  ACTIVE: ['SUSPENDED', 'CLOSED'],
  SUSPENDED: ['ACTIVE', 'CLOSED'],
  CLOSED: [],
};

/**
 * Moves an account to a new status. Asking for the status it already has changes nothing; a move
 * out of CLOSED is a 409.
 */
export async function setAccountStatus(
  tx: Tx,
  events: EventOutbox,
  partnerId: string,
  accountId: string,
  to: AccountStatus,
): Promise<{ row: AccountRow; previousStatus: AccountStatus; changed: boolean }> {
  const row = await findAccount(tx, accountId, { partnerId, forUpdate: true });
  if (!row) throw notFound('account');
  if (row.status === to) return { row, previousStatus: row.status, changed: false };
  if (!ALLOWED_MOVES[row.status].includes(to)) {
    throw conflict(`The account is ${row.status}; it cannot become ${to}.`);
  }
  const updated = await updateAccount(tx, accountId, { status: to });
  await events.emit(tx, {
    type: 'account.status_changed',
    accountId,
    data: { ...toPartnerAccount(updated), previousStatus: row.status },
  });
  return { row: updated, previousStatus: row.status, changed: true };
}

export async function creditWallet(
  tx: Tx,
  events: EventOutbox,
  partnerId: string,
  accountId: string,
  input: { amount: string; currency?: string; reference?: string; description?: string },
) {
  const row = await findAccount(tx, accountId, { partnerId, forUpdate: true });
  if (!row) throw notFound('account');
  if (row.status === 'CLOSED') throw conflict('A closed account cannot be credited.');
  if (input.currency && input.currency.toUpperCase() !== row.currency) {
    throw invalid('currency', `must be the account's currency, ${row.currency}`);
  }
  const amountMicros = parseAmount('amount', input.amount);
  const txn = await changeBalance(tx, events, accountId, {
    type: 'credit',
    amountMicros,
    reference: input.reference,
    description: input.description,
  });
  if (!txn) throw new ApiError('INTERNAL_ERROR');
  return txn;
}
