// The account a run acts for, read by automation alone: the engines (rules, sequences, journeys)
// and the worker take their due rows first and ask for the accounts of the batch here, in one
// statement, rather than join the account's columns into their own SQL (what those columns are, and
// what makes an account one that may run, stay in this file).
import type { Sql } from '../../kernel/database/db.ts';
import { hasFeature, planOf } from '../accounts/index.ts';
import type { Actor } from './run-actions.ts';

/** The account an action acts for, before the run says live or sandbox. */
export type AccountActor = Omit<Actor, 'mode'>;

interface ActorRow {
  id: string;
  status: string;
  plan_code: string;
  addons: string[];
  country_code: string;
  provider: 'sandbox' | 'whatsapp_cloud' | null;
}

/** The account a run acts for, or null when it may not run (suspended or closed, or no automation). */
function actorFrom(row: ActorRow | undefined): AccountActor | null {
  if (row?.status !== 'ACTIVE' || !hasFeature(planOf(row.plan_code), row.addons, 'automation')) return null;
  return { accountId: row.id, countryCode: row.country_code, channelProvider: row.provider ?? 'sandbox' };
}

/** Each of the accounts' actor (null for one that may not run now), in one statement. */
export async function actorsOf(
  sql: Sql,
  accountIds: Iterable<string>,
): Promise<Map<string, AccountActor | null>> {
  const ids = [...new Set(accountIds)];
  const actors = new Map<string, AccountActor | null>(ids.map((id) => [id, null]));
  if (ids.length === 0) return actors;
  const { rows } = await sql.query<ActorRow>(
    `SELECT a.id, a.status, a.plan_code, a.addons, a.country_code, c.provider
       FROM accounts a LEFT JOIN account_channels c ON c.account_id = a.id
      WHERE a.id = ANY($1::text[])`,
    [ids],
  );
  for (const row of rows) actors.set(row.id, actorFrom(row));
  return actors;
}

/** One account's actor, or null when it may not run. */
export async function actorOf(sql: Sql, accountId: string): Promise<AccountActor | null> {
  return (await actorsOf(sql, [accountId])).get(accountId) ?? null;
}
