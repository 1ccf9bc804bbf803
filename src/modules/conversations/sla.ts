// A conversation's SLA columns (docs/conversations.md § SLA policies): the statements are here
// because the table is; which policy applies and when its targets fall due are the sla module's
// (above this one), asked through the hook `conversations.sla` in the transaction of every change
// that can change them: the conversation opened or reopened, its labels or its team changed.
//
// The clock starts when the conversation opens (or is reopened: `sla_started_at`); the business's
// first reply since then is `first_response_at`, written with the message (messages/first-response.ts);
// a close drops the due times still to come (a target closed in time is met). The breach scan takes
// the conversations whose next due time has passed, locked, each judged once per target: the
// target's `…_breached_at` is set while null, so a breach is told once, whichever process looks.
import type { Tx } from '../../kernel/database/db.ts';
import { CONVERSATION_COLUMNS, type ConversationRow } from './repo.ts';

declare module '../../kernel/outbox/hooks.ts' {
  interface HookPayloads {
    /**
     * The conversation's SLA may have changed (modules/sla): its row as it is now, locked. The
     * handler writes the due times and sets them on the object given (the caller's event shows them).
     */
    'conversations.sla': { accountId: string; conversation: ConversationRow };
  }
}

/** What the sla module decided for a conversation: its policy and due times (null: none applies). */
export interface SlaDue {
  policyId: string | null;
  firstResponseDueAt: Date | null;
  resolutionDueAt: Date | null;
  nextDueAt: Date | null;
}

/** Writes the decision on the (locked) conversation, and on the object given. */
export async function setSlaDue(tx: Tx, row: ConversationRow, due: SlaDue): Promise<void> {
  await tx.query(
    `UPDATE conversations SET sla_policy_id = $3, sla_first_response_due_at = $4, sla_resolution_due_at = $5,
            sla_next_due_at = $6, sla_started_at = coalesce(sla_started_at, opened_at)
      WHERE account_id = $1 AND id = $2`,
    [row.account_id, row.id, due.policyId, due.firstResponseDueAt, due.resolutionDueAt, due.nextDueAt],
  );
  row.sla_policy_id = due.policyId;
  row.sla_first_response_due_at = due.firstResponseDueAt;
  row.sla_resolution_due_at = due.resolutionDueAt;
  row.sla_next_due_at = due.nextDueAt;
  row.sla_started_at ??= row.opened_at;
}

/** A policy deleted: the open conversations it ran on keep no due times (their breaches stay). */
export async function dropSlaOfPolicy(tx: Tx, accountId: string, policyId: string): Promise<void> {
  await tx.query(
    `UPDATE conversations SET sla_policy_id = NULL, sla_first_response_due_at = NULL,
            sla_resolution_due_at = NULL, sla_next_due_at = NULL
      WHERE account_id = $1 AND sla_policy_id = $2 AND sla_next_due_at IS NOT NULL`,
    [accountId, policyId],
  );
}

/** Conversations whose next due time has passed, of every account, locked; those others hold are skipped. */
export async function takeSlaDue(tx: Tx, now: Date, limit: number): Promise<ConversationRow[]> {
  const { rows } = await tx.query<ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS} FROM conversations WHERE sla_next_due_at <= $1
      ORDER BY sla_next_due_at LIMIT ${limit} FOR UPDATE SKIP LOCKED`,
    [now],
  );
  return rows;
}

/** A judged conversation: the targets it missed now (set only where still null) and its next due time. */
export interface SlaJudgement {
  row: ConversationRow;
  firstResponseBreached: boolean;
  resolutionBreached: boolean;
  nextDueAt: Date | null;
}

/** Writes the judgements (locked rows) in one statement. */
export async function recordSlaJudgements(tx: Tx, judged: SlaJudgement[], now: Date): Promise<void> {
  if (judged.length === 0) return;
  await tx.query(
    `UPDATE conversations c
        SET sla_first_response_breached_at = CASE WHEN v.first THEN coalesce(c.sla_first_response_breached_at, $2)
                                                  ELSE c.sla_first_response_breached_at END,
            sla_resolution_breached_at = CASE WHEN v.resolution THEN coalesce(c.sla_resolution_breached_at, $2)
                                              ELSE c.sla_resolution_breached_at END,
            sla_next_due_at = v.next_due_at
       FROM unnest($1::text[], $3::boolean[], $4::boolean[], $5::timestamptz[]) AS v (id, first, resolution, next_due_at)
      WHERE c.id = v.id`,
    [
      judged.map((j) => j.row.id),
      now,
      judged.map((j) => j.firstResponseBreached),
      judged.map((j) => j.resolutionBreached),
      judged.map((j) => j.nextDueAt),
    ],
  );
}
