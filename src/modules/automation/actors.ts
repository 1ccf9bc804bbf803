// The account a run acts for: the view `account_actors` (migrations/036_read_models.sql) shows
// its state, plan and channel; actorFrom says whether it may run. The automation worker joins the
// view in its batch statement (on its path an inbound message's rules run within milliseconds, and
// a statement more per batch of a few events put it behind 200 messages/s in bench:automation);
// the others (rules' and journeys' timed scans, the sequence timer, the journey runner: batches of
// hundreds) ask actorsOf, once per batch.
import type { Sql } from '../../kernel/database/db.ts';
import { hasFeature, planOf } from '../accounts/index.ts';
import type { Actor } from './run-actions.ts';

/** The account an action acts for, before the run says live or sandbox. */
export type AccountActor = Omit<Actor, 'mode'>;

/** A row of the view account_actors. */
export interface ActorRow {
  account_id: string;
  status: string;
  plan_code: string;
  addons: string[];
  country_code: string;
  provider: 'sandbox' | 'whatsapp_cloud' | null;
}

/** The account a run acts for, or null when it may not run (suspended or closed, or no automation). */
export function actorFrom(row: ActorRow | undefined): AccountActor | null {
  if (row?.status !== 'ACTIVE' || !hasFeature(planOf(row.plan_code), row.addons, 'automation')) return null;
  return {
    accountId: row.account_id,
    countryCode: row.country_code,
    channelProvider: row.provider ?? 'sandbox',
  };
}

/**
 * The account a reply of its inbox acts for (business hours' away message and greeting): any active
 * account, whatever its plan (automation's plan gate is for rules, sequences and journeys).
 */
export function inboxActorFrom(row: ActorRow | undefined): AccountActor | null {
  if (row?.status !== 'ACTIVE') return null;
  return {
    accountId: row.account_id,
    countryCode: row.country_code,
    channelProvider: row.provider ?? 'sandbox',
  };
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
    'SELECT * FROM account_actors WHERE account_id = ANY($1::text[])',
    [ids],
  );
  for (const row of rows) actors.set(row.account_id, actorFrom(row));
  return actors;
}

/** One account's actor, or null when it may not run. */
export async function actorOf(sql: Sql, accountId: string): Promise<AccountActor | null> {
  return (await actorsOf(sql, [accountId])).get(accountId) ?? null;
}
