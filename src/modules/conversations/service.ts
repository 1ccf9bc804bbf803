// Changing a conversation's state: assign, close, reopen. Each is one transaction that locks the
// conversation, checks the move is allowed (409 otherwise), writes it and emits its event. And
// deleting one with its history.
import { type Database, DEADLOCK, type Sql, sqlState, type Tx } from '../../kernel/database/db.ts';
import { type ApiError, conflict, invalid, notFound } from '../../kernel/http/errors.ts';
import type { EventInput, EventOutbox } from '../../kernel/outbox/events.ts';
import type { Hooks } from '../../kernel/outbox/hooks.ts';
import { changeBalance } from '../billing/index.ts';
import { findMember } from '../team/index.ts';
import { type AssignReason, setAssignment } from './assignment.ts';
import { emitEach } from './bulk-events.ts';
import { mergeConversationsOf } from './contact-merges.ts';
import {
  CONVERSATION_COLUMNS,
  type ConversationRow,
  deleteConversationMessages,
  deleteConversationRow,
  findConversation,
  findConversationRow,
  findOpenConversation,
  type UnsentMessage,
} from './repo.ts';
import { toConversation } from './schemas.ts';

export interface ConversationServices {
  db: Database;
  events: EventOutbox;
  now: () => Date;
}

const notFoundConversation = (): ApiError => notFound('conversation');

/** What a change emits: an event type (with the previous status or assignee), or a type and its extras. */
export type ConversationChange =
  | EventInput['type']
  | {
      type: EventInput['type'];
      extra?: object;
      /** What follows the event, in the same transaction (the view answered is read after it). */
      after?: (tx: Tx) => Promise<void>;
    }
  | null;

/** Runs `change` on the locked conversation; answers the conversation as the API shows it after. */
export async function changeConversation(
  s: ConversationServices,
  accountId: string,
  id: string,
  change: (tx: Tx, row: ConversationRow, now: Date) => Promise<ConversationChange>,
  options: { lockContactFirst?: boolean } = {},
) {
  return s.db.transaction(async (tx) => {
    // Inbound messages lock the contact, then its conversation: a change that needs the contact
    // locks in the same order, so the two never wait on each other in a cycle.
    if (options.lockContactFirst) await lockContactOf(tx, accountId, id);
    const row = await findConversationRow(tx, accountId, id, { lock: true });
    if (!row) throw notFoundConversation();
    const now = s.now();
    const made = await change(tx, row, now);
    const view = toConversation((await findConversation(tx, accountId, id))!, now);
    if (!made) return view;
    const type = typeof made === 'string' ? made : made.type;
    const extra = typeof made !== 'string' && made.extra ? made.extra : { previousStatus: row.status };
    await s.events.emit(tx, { type, accountId, data: { ...view, ...extra } });
    if (typeof made === 'string' || !made.after) return view;
    await made.after(tx);
    return toConversation((await findConversation(tx, accountId, id))!, now);
  });
}

/** Who to give it to: a member (null: nobody), a team (null: none), or both; what is left out stays. */
export interface AssignTo {
  assigneeId?: string | null;
  teamId?: string | null;
}

/**
 * Assigns to a member of the account's team (another account's member is not found), or to nobody;
 * and to a team, whose assignment picks the member when none is named (modules/teams, through the
 * `conversations.route` hook, which refuses another account's team as not found).
 */
export function assignConversation(
  s: ConversationServices,
  accountId: string,
  id: string,
  to: AssignTo,
  reason: AssignReason = 'manual',
) {
  if (to.assigneeId === undefined && to.teamId === undefined)
    throw invalid('assigneeId', 'give assigneeId, teamId or both');
  return changeConversation(s, accountId, id, async (tx, row, now) => {
    if (to.assigneeId && !(await findMember(tx, accountId, to.assigneeId))) throw notFound('team member');
    if (to.teamId) {
      // The team's: it checks the team is the account's, then sets the member named or picks one.
      await s.events.hook(tx, 'conversations.route', {
        accountId,
        conversation: row,
        teamId: to.teamId,
        reason,
        occasion: 'moved',
        ...(to.assigneeId !== undefined ? { assigneeId: to.assigneeId } : {}),
      });
      return null;
    }
    const assigneeId = to.assigneeId !== undefined ? to.assigneeId : row.assignee_id;
    const teamId = to.teamId === null ? null : row.team_id;
    await setAssignment(tx, s.events, row, { assigneeId, teamId }, reason, now);
    return null;
  });
}

// A close meets every SLA target still to come (sla.ts); one already due is left for the scan to judge.
const DROP_COMING_DUE = 'sla_next_due_at = CASE WHEN sla_next_due_at > $2 THEN NULL ELSE sla_next_due_at END';

/** Closes an open conversation; `closedBy`: the console member who closes it (a survey's agent). */
export function closeConversation(
  s: ConversationServices,
  accountId: string,
  id: string,
  closedBy: string | null = null,
) {
  return changeConversation(s, accountId, id, async (tx, row, now) => {
    if (row.status === 'closed') throw conflict('The conversation is already closed.');
    await tx.query(
      `UPDATE conversations SET status = 'closed', closed_at = $2, closed_by = $3, unread_count = 0,
              snoozed_until = NULL, ${DROP_COMING_DUE}, updated_at = $2 WHERE id = $1`,
      [id, now, closedBy],
    );
    if (row.assignee_id && row.team_id)
      await s.events.hook(tx, 'conversations.closed', {
        accountId,
        teamId: row.team_id,
        assigneeId: row.assignee_id,
      });
    return 'conversation.closed';
  });
}

/**
 * Reopens a closed conversation, unless the contact has another one open (409 naming it: a
 * customer's message after the close opened a new one). The contact's row is locked first, as an
 * inbound message locks it, so the two never both leave an open conversation behind.
 */
export function reopenConversation(s: ConversationServices, accountId: string, id: string) {
  return changeConversation(
    s,
    accountId,
    id,
    async (tx, row, now) => {
      if (row.status === 'open') throw conflict('The conversation is already open.');
      const other = await findOpenConversation(tx, accountId, row.contact_id);
      if (other) {
        throw conflict('The contact has another open conversation; continue that one.', [
          { field: 'id', issue: 'the contact has another open conversation', conversationId: other.id },
        ]);
      }
      // Its SLA clock starts again (sla.ts: a target missed before is not told again).
      await tx.query(
        `UPDATE conversations SET status = 'open', closed_at = NULL, sla_started_at = $2,
                first_response_at = NULL, updated_at = $2 WHERE id = $1`,
        [id, now],
      );
      const reopened: ConversationRow = {
        ...row,
        status: 'open',
        closed_at: null,
        sla_started_at: now,
        first_response_at: null,
      };
      await s.events.hook(tx, 'conversations.sla', { accountId, conversation: reopened });
      // Its team gives it to a member again (one still on it and online keeps it), after the event.
      return {
        type: 'conversation.opened',
        after: (t) =>
          s.events.hook(t, 'conversations.route', {
            accountId,
            conversation: reopened,
            teamId: null,
            reason: 'auto',
            occasion: 'reopened',
          }),
      };
    },
    { lockContactFirst: true },
  );
}

/**
 * Deletes a conversation and its history, its messages, in one transaction; the contact stays, and
 * the customer's next message opens a new conversation. The contact's row is locked first, as an
 * inbound message locks it: a message arriving meanwhile lands before the delete (and goes with the
 * rest) or after it (in a new conversation). The wallet's transactions stay (they name their
 * message by id). A message no provider has had yet will never be sent now: it is refunded, and
 * its bulk send counts it as failed (the dispatch job finds nothing left to send). One a provider
 * has, or may have, keeps its charge; what the provider reports about it later finds nothing. No
 * event: the contract has none for a deleted conversation.
 */
export async function deleteConversation(s: ConversationServices, accountId: string, id: string) {
  for (let tries = 1; ; tries++) {
    try {
      return await s.db.transaction(async (tx) => {
        await lockContactOf(tx, accountId, id);
        if (!(await deleteConversationRow(tx, accountId, id))) throw notFoundConversation();
        await giveUpUnsent(s, tx, accountId, await deleteConversationMessages(tx, accountId, id));
      });
    } catch (err) {
      // A send holding the wallet a refund here waits for, and waiting for this conversation: the
      // aborted transaction wrote nothing, so it runs again.
      if (sqlState(err) !== DEADLOCK || tries >= 3) throw err;
    }
  }
}

/** Messages deleted before they went: each charge back to the wallet, each bulk send told. */
async function giveUpUnsent(
  s: Pick<ConversationServices, 'events' | 'now'>,
  tx: Tx,
  accountId: string,
  unsent: UnsentMessage[],
): Promise<void> {
  const failedByJob = new Map<string, number>();
  for (const m of unsent) {
    if (m.charged_micros > 0 && !m.refunded_at) {
      await changeBalance(tx, s.events, accountId, {
        type: 'refund',
        amountMicros: m.charged_micros,
        reference: m.id,
        description: 'refund: message deleted with its conversation before it was sent',
      });
    }
    if (m.bulk_job_id) failedByJob.set(m.bulk_job_id, (failedByJob.get(m.bulk_job_id) ?? 0) + 1);
  }
  if (failedByJob.size > 0) {
    const jobs = [...failedByJob].map(([jobId, failed]) => ({ jobId, sent: 0, failed }));
    await s.events.hook(tx, 'messages.bulk-counted', jobs);
  }
}

async function lockContactOf(tx: Tx, accountId: string, conversationId: string): Promise<void> {
  await tx.query(
    `SELECT 1 FROM contacts
      WHERE account_id = $1
        AND id = (SELECT contact_id FROM conversations WHERE account_id = $1 AND id = $2)
      FOR NO KEY UPDATE`,
    [accountId, conversationId],
  );
}

/**
 * A team member is being removed: the conversations assigned to them are assigned to nobody, each
 * with its conversation.assigned event, in the caller's transaction.
 */
/** Conversations follow their members and contacts (team's and contacts' hooks), wired in app.ts. */
export function subscribeConversationCleanup(hooks: Hooks, now: () => Date): void {
  hooks.on('team.member-removed', (tx, { accountId, memberId }, events) =>
    unassignMember({ events, now }, tx, accountId, memberId),
  );
  hooks.on('contacts.removed', (tx, { accountId, contactId }, events) =>
    closeConversationsOf({ events, now }, tx, accountId, contactId),
  );
  hooks.on('contacts.merging', (tx, { accountId, survivorId, mergedId }) =>
    mergeConversationsOf(tx, accountId, survivorId, mergedId, now()),
  );
}

export async function unassignMember(
  s: Pick<ConversationServices, 'events' | 'now'>,
  tx: Tx,
  accountId: string,
  memberId: string,
): Promise<void> {
  const now = s.now();
  const { rows } = await tx.query<ConversationRow>(
    `UPDATE conversations SET assignee_id = NULL, updated_at = $3
      WHERE account_id = $1 AND assignee_id = $2
      RETURNING ${CONVERSATION_COLUMNS}`,
    [accountId, memberId, now],
  );
  // Nobody chose this: the member was removed.
  await emitEach(s, tx, accountId, rows, now, 'conversation.assigned', (row) => ({
    previousAssigneeId: memberId,
    previousTeamId: row.team_id,
    reason: 'auto',
  }));
}

/**
 * A contact is being deleted (its row locked by the caller's transaction, as an inbound message
 * locks it): its open conversation is closed, with conversation.closed. Its history stays.
 */
export async function closeConversationsOf(
  s: Pick<ConversationServices, 'events' | 'now'>,
  tx: Tx,
  accountId: string,
  contactId: string,
): Promise<void> {
  const now = s.now();
  const { rows } = await tx.query<ConversationRow>(
    `UPDATE conversations SET status = 'closed', closed_at = $3, closed_by = NULL, unread_count = 0,
            snoozed_until = NULL, ${DROP_COMING_DUE.replace('$2', '$3')}, updated_at = $3
      WHERE account_id = $1 AND contact_id = $2 AND status = 'open'
      RETURNING ${CONVERSATION_COLUMNS}`,
    [accountId, contactId, now],
  );
  await emitEach(s, tx, accountId, rows, now, 'conversation.closed', { previousStatus: 'open' });
}

/** A conversation as the API shows it, or null (another account's is not found). */
export async function showConversation(sql: Sql, accountId: string, id: string, now: Date) {
  const row = await findConversation(sql, accountId, id);
  return row ? toConversation(row, now) : null;
}
