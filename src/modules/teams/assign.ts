// Auto-assignment: which member of a team a conversation goes to. Two halves:
//
//   - In the transaction that opens, reopens or moves a conversation (the `conversations.route`
//     hook), the conversation is put in its team: a new one in the account's default team (silently:
//     its conversation.opened shows the team), a reopened one in its own (or the default), a moved one
//     in the team named. With nobody on it, it waits in the team's queue, and the transaction wakes
//     the team's drain (NOTIFY ASSIGN_CHANNEL, sent at commit). A reopened one whose member is online
//     stays theirs.
//   - The drain (drainTeam: the automation worker on the wake-up, and its timed scan as the safety
//     net) gives the queue out in batches: the team's row locked (FOR UPDATE), so that drains of one
//     team in two processes run one after the other, the waiting conversations taken oldest first
//     (FOR UPDATE SKIP LOCKED), each given to the next member with room, and all of the batch written
//     in one statement with one conversation.assigned each (`reason: auto`). A burst of new
//     conversations costs a few transactions, not one serialised transaction each.
//
// Who has room: a member of the team who is `online`, with fewer of the team's open conversations
// than its `capacity` (none: no limit); capacity counts the team's conversations, which the team's
// lock makes exact. `round_robin`: the next such member after the one given the last conversation,
// in the team's order; `least_busy`: the one with the fewest of the team's open conversations (then
// the team's order); `manual`: nobody, the queue waits for a person. A member going offline gives
// back their open conversations of the teams whose `onOffline` is `requeue` (the others keep them).
// Whatever wakes a drain (a close, a member online, a team given room) sends the same NOTIFY.
import type { Database, Tx } from '../../kernel/database/db.ts';
import { notFound } from '../../kernel/http/errors.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import type { Hooks } from '../../kernel/outbox/hooks.ts';
import {
  openCounts,
  requeueMember,
  setAssignment,
  setAssignments,
  setTeam,
  takeQueued,
  teamsWithQueues,
} from '../conversations/index.ts';
import { onlineMembers } from '../team/index.ts';
import { lockTeam, noteAssigned, type TeamRow, teamRef, teamsOfMember } from './repo.ts';

/** The channel that wakes the drain of a team (the payload is the team's id). */
export const ASSIGN_CHANNEL = 'tidings_assign';
/** Conversations one drain's transaction gives out. */
const DRAIN_BATCH = 200;

/** Wakes the drain of a team, at commit (a manual team's drain gives nothing: it waits for a person). */
export async function wakeDrain(tx: Tx, teamId: string): Promise<void> {
  await tx.query('SELECT pg_notify($1, $2)', [ASSIGN_CHANNEL, teamId]);
}

/** The next member with room, given each member's open conversations of the team (online ones). */
export function chooseMember(team: TeamRow, online: string[], load: Map<string, number>): string | null {
  const count = (m: string) => load.get(m) ?? 0;
  const room = online.filter((m) => team.capacity === null || count(m) < team.capacity);
  if (room.length === 0) return null;
  if (team.mode === 'least_busy') return room.reduce((best, m) => (count(m) < count(best) ? m : best));
  const last = team.members.indexOf(team.last_assigned_id ?? '');
  const order = [...team.members.slice(last + 1), ...team.members.slice(0, last + 1)];
  return order.find((m) => room.includes(m)) ?? null;
}

/** One batch of the team's queue given out, in the caller's transaction; answers how many. */
async function drainBatch(tx: Tx, events: EventOutbox, teamId: string, now: Date): Promise<number> {
  const team = await lockTeam(tx, teamId);
  if (!team || team.mode === 'manual' || team.members.length === 0) return 0;
  const present = await onlineMembers(tx, team.account_id, team.members);
  const online = team.members.filter((m) => present.has(m));
  if (online.length === 0) return 0;
  const queued = await takeQueued(tx, team.id, DRAIN_BATCH);
  if (queued.length === 0) return 0;
  const load = await openCounts(tx, team.id, online);
  const changes = [];
  for (const row of queued) {
    const member = chooseMember(team, online, load);
    if (!member) break;
    load.set(member, (load.get(member) ?? 0) + 1);
    team.last_assigned_id = member;
    changes.push({ row, assigneeId: member });
  }
  if (changes.length === 0) return 0;
  await setAssignments(tx, events, changes, 'auto', now);
  await noteAssigned(tx, team.id, team.last_assigned_id!);
  return changes.length;
}

/** Gives out the team's queue while its members have room, a batch a transaction; answers how many. */
export async function drainTeam(
  s: { db: Database; events: EventOutbox; now: () => Date },
  teamId: string,
): Promise<number> {
  let given = 0;
  for (;;) {
    const n = await s.db.transaction((tx) => drainBatch(tx, s.events, teamId, s.now()));
    given += n;
    if (n < DRAIN_BATCH) return given;
  }
}

/** The timed scan's safety net: every team with someone waiting (a wake-up lost, a process down). */
export async function drainQueues(s: {
  db: Database;
  events: EventOutbox;
  now: () => Date;
}): Promise<number> {
  const waiting = await s.db.transaction((tx) => teamsWithQueues(tx, 1000));
  let given = 0;
  for (const { team_id } of waiting) given += await drainTeam(s, team_id);
  return given;
}

/** The teams' part in conversations' and members' changes (wired in app.ts). */
export function subscribeTeamAssignment(hooks: Hooks, now: () => Date): void {
  hooks.on('conversations.route', async (tx, p, events) => {
    const at = now();
    const row = p.conversation;
    if (p.occasion === 'moved') {
      const team = await teamRef(tx, p.accountId, p.teamId!);
      if (!team) throw notFound('team');
      const assigneeId = p.assigneeId ?? null;
      await setAssignment(tx, events, row, { assigneeId, teamId: team.id }, p.reason, at);
      if (assigneeId === null) await wakeDrain(tx, team.id);
      return;
    }
    const team = await teamRef(tx, p.accountId, row.team_id);
    if (!team) return;
    if (p.occasion === 'opened') {
      // The caller shows the conversation with its team (its conversation.opened is emitted after).
      await setTeam(tx, row, team.id);
      row.team_id = team.id;
      if (team.mode !== 'manual') await wakeDrain(tx, team.id);
      return;
    }
    // Reopened with a member on it who is at their desk: it stays theirs; else it waits its turn.
    const member = row.assignee_id;
    const stays = member !== null && (await onlineMembers(tx, p.accountId, [member])).has(member);
    await setAssignment(tx, events, row, { assigneeId: stays ? member : null, teamId: team.id }, 'auto', at);
    if (!stays) await wakeDrain(tx, team.id);
  });
  hooks.on('conversations.closed', async (tx, p) => {
    if (p.teamId) await wakeDrain(tx, p.teamId);
  });
  hooks.on('team.availability-changed', async (tx, p, events) => {
    if (p.availability === 'away') return;
    const teams = await teamsOfMember(tx, p.memberId, p.availability === 'offline' ? 'requeue' : undefined);
    if (
      p.availability === 'offline' &&
      (await requeueMember(tx, events, p.accountId, p.memberId, teams, now())) === 0
    )
      return;
    for (const id of teams) await wakeDrain(tx, id);
  });
}
