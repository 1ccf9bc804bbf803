// Teams: an account's members grouped to receive conversations (assign.ts says how). Creating and
// changing one checks its members are the account's (a 400 naming each stranger) and its name is
// free (409); a change that gives the team room (members added, capacity raised, a mode that
// assigns) gives out its queue at once. Deleting one leaves its conversations with their assignees
// and no team. At most MAX_TEAMS per account.
import type { Database, Tx } from '../../kernel/database/db.ts';
import { conflict, type FieldIssue, invalidRequest, notFound } from '../../kernel/http/errors.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { forgetTeam } from '../conversations/index.ts';
import { existingMembers } from '../team/index.ts';
import { wakeDrain } from './assign.ts';
import {
  countTeams,
  deleteTeam,
  findTeam,
  findTeamByName,
  type TeamRow,
  type TeamValues,
  writeTeam,
} from './repo.ts';

export const MAX_TEAMS = 100;

export interface TeamServices {
  db: Database;
  events: EventOutbox;
  now: () => Date;
}

export interface TeamInput {
  name?: string;
  members?: string[];
  assignment?: { mode?: TeamRow['mode']; capacity?: number | null };
  default?: boolean;
  onOffline?: TeamRow['on_offline'];
}

async function memberProblems(tx: Tx, accountId: string, members: string[]): Promise<FieldIssue[]> {
  if (members.length === 0) return [];
  const known = await existingMembers(tx, accountId, members);
  return members.flatMap((id, i) =>
    known.has(id) ? [] : [{ field: `members[${i}]`, issue: 'is not a team member of this account' }],
  );
}

const nameTaken = (id: string) =>
  conflict('The account has a team of this name.', [{ field: 'name', issue: 'is taken', teamId: id }]);

/** Writes the values after their checks; the team's queue is given out when the change may let it. */
async function save(
  s: TeamServices,
  tx: Tx,
  accountId: string,
  id: string,
  values: TeamValues,
  before: TeamRow | null,
) {
  const name = values.name.trim();
  if (!name) throw invalidRequest([{ field: 'name', issue: 'must not be blank' }]);
  const issues = await memberProblems(tx, accountId, values.members);
  if (issues.length > 0) throw invalidRequest(issues);
  const other = await findTeamByName(tx, accountId, name);
  if (other && other.id !== id) throw nameTaken(other.id);
  await writeTeam(tx, accountId, id, { ...values, name }, s.now(), before === null);
  // A change may give the team room: its drain looks once this commits.
  if (before) await wakeDrain(tx, id);
  return (await findTeam(tx, accountId, id))!;
}

export function createTeam(s: TeamServices, accountId: string, input: TeamInput & { name: string }) {
  return s.db.transaction(async (tx) => {
    // The account's row, locked: two creations at once count each other against the limit.
    await tx.query('SELECT 1 FROM accounts WHERE id = $1 FOR UPDATE', [accountId]);
    if ((await countTeams(tx, accountId)) >= MAX_TEAMS)
      throw conflict(`The account has ${MAX_TEAMS} teams, the most it may have.`);
    const values: TeamValues = {
      name: input.name,
      members: input.members ?? [],
      mode: input.assignment?.mode ?? 'round_robin',
      capacity: input.assignment?.capacity ?? null,
      is_default: input.default ?? false,
      on_offline: input.onOffline ?? 'requeue',
    };
    return save(s, tx, accountId, newId('team'), values, null);
  });
}

export function patchTeam(s: TeamServices, accountId: string, id: string, input: TeamInput) {
  return s.db.transaction(async (tx) => {
    const row = await findTeam(tx, accountId, id, { lock: true });
    if (!row) throw notFound('team');
    const values: TeamValues = {
      name: input.name ?? row.name,
      members: input.members ?? row.members,
      mode: input.assignment?.mode ?? row.mode,
      capacity: input.assignment?.capacity === undefined ? row.capacity : input.assignment.capacity,
      is_default: input.default ?? row.is_default,
      on_offline: input.onOffline ?? row.on_offline,
    };
    return save(s, tx, accountId, id, values, row);
  });
}

export async function getTeam(s: Pick<TeamServices, 'db'>, accountId: string, id: string) {
  const row = await findTeam(s.db, accountId, id);
  if (!row) throw notFound('team');
  return row;
}

export function removeTeam(s: TeamServices, accountId: string, id: string) {
  return s.db.transaction(async (tx) => {
    if (!(await findTeam(tx, accountId, id, { lock: true }))) throw notFound('team');
    await forgetTeam(tx, accountId, id);
    await deleteTeam(tx, accountId, id);
  });
}
