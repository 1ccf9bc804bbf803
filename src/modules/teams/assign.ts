// Auto-assignment: which member of a team a conversation goes to, decided in the transaction that
// opens, reopens or moves it, with the team's row locked (FOR UPDATE), so that two conversations
// arriving at once, in one process or two, are given one after the other and each exactly once.
//
//   - Who may take one: a member of the team who is `online`, with fewer of the team's open
//     conversations than its `capacity` (none: no limit). Capacity counts the team's conversations
//     only, which the team's lock makes exact; a member of two teams has room in each.
//   - `round_robin`: the next such member after the one given the last conversation, in the team's
//     order; `least_busy`: the one with the fewest of the team's open conversations (then the
//     team's order); `manual`: nobody, the conversation waits in the queue.
//   - Nobody can take it: it waits in the team's queue (its team set, no assignee) and is given as
//     soon as someone has room: when a conversation of the team closes, when a member comes online,
//     and on the automation worker's timed scan (drainQueues), oldest first, FOR UPDATE SKIP LOCKED.
//   - A member going offline gives back their open conversations of the teams whose `onOffline` is
//     `requeue` (the others keep them), which the rest of the team then takes.
//   - The default team takes every new conversation (and a reopened one of no team); a rule or a
//     person routing it elsewhere moves it (`conversations.route`, occasion `moved`).
// Every change is one conversation.assigned (conversations/assignment.ts), `reason` `auto` unless a
// rule (`rule`) or a person (`manual`) moved it.
import type { Database, Tx } from '../../kernel/database/db.ts';
import { notFound } from '../../kernel/http/errors.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import type { Hooks } from '../../kernel/outbox/hooks.ts';
import {
  type ConversationRow,
  openCounts,
  requeueMember,
  setAssignment,
  takeQueued,
  teamsWithQueues,
} from '../conversations/index.ts';
import { onlineMembers } from '../team/index.ts';
import { findDefaultTeam, findTeam, noteAssigned, type TeamRow, teamsOfMember } from './repo.ts';

/** Conversations one drain gives out (the rest: the next occasion, or the timed scan). */
const DRAIN_BATCH = 100;

/** The member the (locked) team gives its next conversation to, or null: nobody has room. */
export async function pickMember(tx: Tx, team: TeamRow): Promise<string | null> {
  if (team.mode === 'manual' || team.members.length === 0) return null;
  const online = await onlineMembers(tx, team.account_id, team.members);
  const candidates = team.members.filter((m) => online.has(m));
  if (candidates.length === 0) return null;
  const counts = await openCounts(tx, team.id, candidates);
  const load = (m: string) => counts.get(m) ?? 0;
  const room = candidates.filter((m) => team.capacity === null || load(m) < team.capacity);
  if (room.length === 0) return null;
  if (team.mode === 'least_busy') return room.reduce((best, m) => (load(m) < load(best) ? m : best));
  const last = team.members.indexOf(team.last_assigned_id ?? '');
  const order = [...team.members.slice(last + 1), ...team.members.slice(0, last + 1)];
  return order.find((m) => room.includes(m)) ?? null;
}

/** Gives the (locked) conversation to the team's next member, or to its queue. */
async function giveTo(
  tx: Tx,
  events: EventOutbox,
  team: TeamRow,
  row: ConversationRow,
  reason: 'manual' | 'rule' | 'auto',
  now: Date,
): Promise<void> {
  const member = await pickMember(tx, team);
  await setAssignment(tx, events, row, { assigneeId: member, teamId: team.id }, reason, now);
  if (member) {
    await noteAssigned(tx, team.id, member);
    team.last_assigned_id = member;
  }
}

/** Gives out the team's waiting conversations while its members have room; answers how many. */
export async function drainQueue(
  tx: Tx,
  events: EventOutbox,
  accountId: string,
  teamId: string,
  now: Date,
): Promise<number> {
  const team = await findTeam(tx, accountId, teamId, { lock: true });
  if (!team || team.mode === 'manual') return 0;
  let given = 0;
  while (given < DRAIN_BATCH) {
    const member = await pickMember(tx, team);
    if (!member) break;
    const row = await takeQueued(tx, team.id);
    if (!row) break;
    await setAssignment(tx, events, row, { assigneeId: member, teamId: team.id }, 'auto', now);
    await noteAssigned(tx, team.id, member);
    team.last_assigned_id = member;
    given++;
  }
  return given;
}

/** The teams' reactions to conversations and members (wired in app.ts). */
export function subscribeTeamAssignment(hooks: Hooks, now: () => Date): void {
  hooks.on('conversations.route', async (tx, p, events) => {
    const at = now();
    if (p.occasion === 'moved') {
      const team = await findTeam(tx, p.accountId, p.teamId!, { lock: true });
      if (!team) throw notFound('team');
      if (p.assigneeId !== undefined) {
        await setAssignment(
          tx,
          events,
          p.conversation,
          { assigneeId: p.assigneeId, teamId: team.id },
          p.reason,
          at,
        );
        return;
      }
      await giveTo(tx, events, team, p.conversation, p.reason, at);
      return;
    }
    const own = p.conversation.team_id;
    const team = own
      ? await findTeam(tx, p.accountId, own, { lock: true })
      : await findDefaultTeam(tx, p.accountId, { lock: true });
    if (!team) return;
    // Reopened with a member on it who is at their desk: it stays theirs.
    const member = p.conversation.assignee_id;
    if (member && p.occasion === 'reopened' && (await onlineMembers(tx, p.accountId, [member])).has(member)) {
      await setAssignment(tx, events, p.conversation, { assigneeId: member, teamId: team.id }, 'auto', at);
      return;
    }
    await giveTo(tx, events, team, p.conversation, 'auto', at);
  });
  hooks.on('conversations.closed', async (tx, p, events) => {
    if (p.teamId) await drainQueue(tx, events, p.accountId, p.teamId, now());
  });
  hooks.on('team.availability-changed', async (tx, p, events) => {
    const at = now();
    if (p.availability === 'offline') {
      const requeuing = await teamsOfMember(tx, p.memberId, 'requeue');
      if ((await requeueMember(tx, events, p.accountId, p.memberId, requeuing, at)) === 0) return;
      for (const teamId of requeuing) await drainQueue(tx, events, p.accountId, teamId, at);
    } else if (p.availability === 'online') {
      for (const teamId of await teamsOfMember(tx, p.memberId))
        await drainQueue(tx, events, p.accountId, teamId, at);
    }
  });
}

/**
 * The timed scan's safety net: every team with someone waiting is drained, each in a transaction
 * of its own (a member who came back, a capacity raised, a member added). Answers how many it gave.
 */
export async function drainQueues(s: {
  db: Database;
  events: EventOutbox;
  now: () => Date;
}): Promise<number> {
  const waiting = await s.db.transaction((tx) => teamsWithQueues(tx, 1000));
  let given = 0;
  for (const { account_id, team_id } of waiting) {
    given += await s.db.transaction((tx) => drainQueue(tx, s.events, account_id, team_id, s.now()));
  }
  return given;
}
