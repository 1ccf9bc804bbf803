// The team of an account: the people its conversations can be assigned to, one per email.
import { type Database, sqlState, UNIQUE_VIOLATION } from '../../kernel/database/db.ts';
import { ApiError, conflict, invalid, notFound } from '../../kernel/http/errors.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import {
  type Availability,
  countMembers,
  deleteMember,
  findMember,
  findMemberByEmail,
  insertMember,
  type MemberRow,
  type Role,
  setAvailability,
} from './repo.ts';

declare module '../../kernel/outbox/hooks.ts' {
  interface HookPayloads {
    /** A member was deleted, in the deleting transaction (modules/conversations unassigns them). */
    'team.member-removed': { accountId: string; memberId: string };
    /** A member's availability changed, in its transaction (modules/teams: requeue, drain). */
    'team.availability-changed': { accountId: string; memberId: string; availability: Availability };
  }
}

/** Members one account may have. */
export const MAX_MEMBERS_PER_ACCOUNT = 1000;

export interface MemberInput {
  name: string;
  email: string;
  role: Role;
}

function alreadyMember(memberId: string | undefined): ApiError {
  return conflict('A team member with this email already exists.', [
    { field: 'email', issue: 'is already a team member', memberId },
  ]);
}

export async function addMember(
  db: Database,
  accountId: string,
  input: MemberInput,
  now: Date,
): Promise<MemberRow> {
  const name = input.name.trim();
  if (!name) throw invalid('name', 'must not be blank');
  // Emails compare without case: Ann@Example.com and ann@example.com are one person.
  const email = input.email.trim().toLowerCase();
  try {
    return await db.transaction(async (tx) => {
      // Serialises concurrent additions to one account so the count below holds.
      await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`team:${accountId}`]);
      const existing = await findMemberByEmail(tx, accountId, email);
      if (existing) throw alreadyMember(existing.id);
      if ((await countMembers(tx, accountId)) >= MAX_MEMBERS_PER_ACCOUNT) {
        throw conflict(`At most ${MAX_MEMBERS_PER_ACCOUNT} team members are allowed; remove one first.`);
      }
      return insertMember(
        tx,
        { id: newId('teamMember'), account_id: accountId, name, email, role: input.role },
        now,
      );
    });
  } catch (err) {
    // A writer that does not take the lock above got there first.
    if (sqlState(err) !== UNIQUE_VIOLATION) throw err;
    throw alreadyMember((await findMemberByEmail(db, accountId, email))?.id);
  }
}

/**
 * Sets a member's availability: an admin (or an API key) any member's, an agent their own only (403
 * otherwise: availability is how a person says they are at their desk).
 */
export async function changeAvailability(
  s: { db: Database; events: EventOutbox },
  accountId: string,
  id: string,
  availability: Availability,
  caller: { agentMemberId: string | null },
  now: Date,
): Promise<MemberRow> {
  return s.db.transaction(async (tx) => {
    // Another account's member is not found, whoever asks; then an agent is refused another's.
    const before = await findMember(tx, accountId, id, { lock: true });
    if (!before) throw notFound('team member');
    if (caller.agentMemberId !== null && caller.agentMemberId !== id)
      throw new ApiError('FORBIDDEN', 'An agent sets their own availability only.');
    const row = (await setAvailability(tx, accountId, id, availability, now))!;
    if (before.availability !== availability)
      await s.events.hook(tx, 'team.availability-changed', { accountId, memberId: id, availability });
    return row;
  });
}

export async function getMember(db: Database, accountId: string, id: string): Promise<MemberRow> {
  const row = await findMember(db, accountId, id);
  if (!row) throw notFound('team member');
  return row;
}

/** Removes a member; the conversations assigned to them are assigned to nobody (with their events). */
export async function removeMember(
  s: { db: Database; events: EventOutbox },
  accountId: string,
  id: string,
): Promise<void> {
  await s.db.transaction(async (tx) => {
    if (!(await deleteMember(tx, accountId, id))) throw notFound('team member');
    await s.events.hook(tx, 'team.member-removed', { accountId, memberId: id });
  });
}
