// Who a conversation is with: its assignee and its team, changed here whoever changes them (the
// API, a rule, a team's drain), each change one `conversation.assigned` event with the previous
// assignee and team and `reason`: `manual` (the API, a console user), `rule` (a rule's action),
// `auto` (a team's drain, a member going offline, a removed member).
//
// Which team a conversation joins and which member it is given are the teams module's (above this
// one, teams/assign.ts): conversations asks it through the hook `conversations.route`, in the
// transaction that opens, reopens or moves the conversation, with the conversation's row locked;
// the teams module answers through setTeam (a new conversation into its queue), setAssignment and
// setAssignments (a queue given out in a batch). The queue's statements (takeQueued, requeueMember,
// openCounts) are here because the table is.
import type { Tx } from '../../kernel/database/db.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { emitEach } from './bulk-events.ts';
import { CONVERSATION_COLUMNS, type ConversationRow, findConversation } from './repo.ts';
import { toConversation } from './schemas.ts';

export type AssignReason = 'manual' | 'rule' | 'auto';

declare module '../../kernel/outbox/hooks.ts' {
  interface HookPayloads {
    /**
     * A conversation for a team (modules/teams): opened or reopened (`teamId` null: its own team,
     * else the account's default team), or moved to `teamId`. Its row is locked; for a new one, the
     * handler sets `conversation.team_id` on the object given, which the caller's event then shows.
     */
    'conversations.route': {
      accountId: string;
      conversation: ConversationRow;
      teamId: string | null;
      reason: AssignReason;
      /** Opened or reopened (a member already on it who is online keeps it), or moved. */
      occasion: 'opened' | 'reopened' | 'moved';
      /** Moved with its member named (null: nobody): set as it is, the team only checked. */
      assigneeId?: string | null;
    };
    /** An assigned conversation closed: its member has room again in its team (modules/teams). */
    'conversations.closed': { accountId: string; teamId: string | null; assigneeId: string | null };
  }
}

export interface Assignment {
  assigneeId: string | null;
  teamId: string | null;
}

/**
 * Gives the (locked) conversation to `to`; answers whether anything changed. Emits
 * conversation.assigned with the conversation as it is after, in the caller's transaction.
 */
export async function setAssignment(
  tx: Tx,
  events: EventOutbox,
  row: ConversationRow,
  to: Assignment,
  reason: AssignReason,
  now: Date,
): Promise<boolean> {
  if (row.assignee_id === to.assigneeId && row.team_id === to.teamId) return false;
  await tx.query(
    'UPDATE conversations SET assignee_id = $3, team_id = $4, updated_at = $5 WHERE account_id = $1 AND id = $2',
    [row.account_id, row.id, to.assigneeId, to.teamId, now],
  );
  // Another team may have another SLA policy (sla.ts).
  if (row.team_id !== to.teamId)
    await events.hook(tx, 'conversations.sla', {
      accountId: row.account_id,
      conversation: { ...row, assignee_id: to.assigneeId, team_id: to.teamId },
    });
  const view = toConversation((await findConversation(tx, row.account_id, row.id))!, now);
  await events.emit(tx, {
    type: 'conversation.assigned',
    accountId: row.account_id,
    data: { ...view, previousAssigneeId: row.assignee_id, previousTeamId: row.team_id, reason },
  });
  return true;
}

/** The team's oldest waiting conversations (open, nobody on them), locked; those others hold are skipped. */
export async function takeQueued(tx: Tx, teamId: string, limit: number): Promise<ConversationRow[]> {
  const { rows } = await tx.query<ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS} FROM conversations
      WHERE team_id = $1 AND status = 'open' AND assignee_id IS NULL
      ORDER BY opened_at, id LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
    [teamId],
  );
  return rows;
}

/**
 * Gives each (locked) conversation to its member, in one statement, with one conversation.assigned
 * each (`reason`), in one write of the outbox: a team's queue given out in a batch.
 */
export async function setAssignments(
  tx: Tx,
  events: EventOutbox,
  changes: { row: ConversationRow; assigneeId: string }[],
  reason: AssignReason,
  now: Date,
): Promise<void> {
  if (changes.length === 0) return;
  const accountId = changes[0]!.row.account_id;
  await tx.query(
    `UPDATE conversations c SET assignee_id = v.assignee_id, updated_at = $4
       FROM unnest($2::text[], $3::text[]) AS v (id, assignee_id)
      WHERE c.account_id = $1 AND c.id = v.id`,
    [accountId, changes.map((c) => c.row.id), changes.map((c) => c.assigneeId), now],
  );
  const rows = changes.map((c) => c.row);
  await emitEach({ events }, tx, accountId, rows, now, 'conversation.assigned', (row) => ({
    previousAssigneeId: row.assignee_id,
    previousTeamId: row.team_id,
    reason,
  }));
}

/** Puts a new conversation (locked) in a team without an event: its conversation.opened shows it. */
export async function setTeam(tx: Tx, row: ConversationRow, teamId: string): Promise<void> {
  await tx.query('UPDATE conversations SET team_id = $3 WHERE account_id = $1 AND id = $2', [
    row.account_id,
    row.id,
    teamId,
  ]);
}

/** Teams with someone waiting, a page at a time (the periodic drain). */
export async function teamsWithQueues(
  tx: Tx,
  limit: number,
): Promise<{ account_id: string; team_id: string }[]> {
  const { rows } = await tx.query<{ account_id: string; team_id: string }>(
    `SELECT DISTINCT account_id, team_id FROM conversations
      WHERE status = 'open' AND assignee_id IS NULL AND team_id IS NOT NULL LIMIT $1`,
    [limit],
  );
  return rows;
}

/** A member's open conversations of these teams go back to their queues, one event each; answers how many. */
export async function requeueMember(
  tx: Tx,
  events: EventOutbox,
  accountId: string,
  memberId: string,
  teamIds: string[],
  now: Date,
): Promise<number> {
  const { rows } = await tx.query<ConversationRow>(
    `UPDATE conversations SET assignee_id = NULL, updated_at = $4
      WHERE account_id = $1 AND assignee_id = $2 AND status = 'open' AND team_id = ANY($3::text[])
      RETURNING ${CONVERSATION_COLUMNS}`,
    [accountId, memberId, teamIds, now],
  );
  await emitEach({ events }, tx, accountId, rows, now, 'conversation.assigned', (row) => ({
    previousAssigneeId: memberId,
    previousTeamId: row.team_id,
    reason: 'auto',
  }));
  return rows.length;
}

/** A team is deleted: its conversations belong to none (their assignees stay). No event: nobody moved. */
export async function forgetTeam(tx: Tx, accountId: string, teamId: string): Promise<void> {
  await tx.query('UPDATE conversations SET team_id = NULL WHERE account_id = $1 AND team_id = $2', [
    accountId,
    teamId,
  ]);
}

/** How many of the team's open conversations each of these members has (capacity, least busy). */
export async function openCounts(tx: Tx, teamId: string, memberIds: string[]): Promise<Map<string, number>> {
  const { rows } = await tx.query<{ assignee_id: string; n: number }>(
    `SELECT assignee_id, count(*)::int AS n FROM conversations
      WHERE team_id = $1 AND status = 'open' AND assignee_id = ANY($2::text[])
      GROUP BY assignee_id`,
    [teamId, memberIds],
  );
  return new Map(rows.map((r) => [r.assignee_id, r.n]));
}
