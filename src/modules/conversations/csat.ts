// A conversation's satisfaction survey, on its row (modules/csat sends the survey; this file keeps
// what it asked and what the customer answered):
//   - claimSurvey: the survey of one close, claimed once (csat_close_at = that close's closed_at),
//     about who closed it (else its assignee), the previous close's answer cleared;
//   - the answer: a tap on one of the survey's options (its id `csat:<conversationId>:<score>`) is
//     stored in the closed conversation it asks about, as a message of it, instead of opening a new
//     conversation, and told by `csat.received` (inbound.ts asks takeSurveyTap first);
//   - the comment: when the survey asked for one (openCommentWindow), the customer's next text
//     before `csat_comment_until` is the comment, stored the same way, and told by `csat.received`
//     again, with the comment (looked for only when the contact has no open conversation). Anything else the customer writes opens a conversation as usual.
import type { InboundMessage } from '../../channels/types.ts';
import type { Tx } from '../../kernel/database/db.ts';
import { CONVERSATION_COLUMNS, type ConversationRow } from './repo.ts';

const SURVEY_OPTION = /^csat:(cnv_[0-9a-z]{26}):([1-5])$/;

/** The id of a survey's option for this conversation and score (what the customer's tap sends back). */
export const surveyOptionId = (conversationId: string, score: number) => `csat:${conversationId}:${score}`;

/** Claims the survey of the conversation's close at `closedAt`; null when it was sent (or it moved on). */
export async function claimSurvey(
  tx: Tx,
  accountId: string,
  conversationId: string,
  closedAt: Date,
): Promise<ConversationRow | null> {
  const { rows } = await tx.query<ConversationRow>(
    `UPDATE conversations
        SET csat_close_at = closed_at, csat_agent_id = coalesce(closed_by, assignee_id), csat_score = NULL,
            csat_comment = NULL, csat_answered_at = NULL, csat_comment_until = NULL
      WHERE account_id = $1 AND id = $2 AND status = 'closed' AND closed_at = $3
        AND csat_close_at IS DISTINCT FROM closed_at
      RETURNING ${CONVERSATION_COLUMNS}`,
    [accountId, conversationId, closedAt],
  );
  return rows[0] ?? null;
}

/** The survey asked for a comment: the customer's next text until `until` is it. */
export async function openCommentWindow(
  tx: Tx,
  accountId: string,
  conversationId: string,
  until: Date,
): Promise<void> {
  await tx.query(
    `UPDATE conversations SET csat_comment_until = $3
      WHERE account_id = $1 AND id = $2 AND csat_score IS NOT NULL AND csat_comment IS NULL`,
    [accountId, conversationId, until],
  );
}

/** What a customer's message answers of a survey: the conversation it goes to, and what it sets. */
export interface SurveyAnswer {
  conversation: ConversationRow;
  score?: number;
  comment?: string;
}

/** The closed conversation a tap on one of its survey's options answers (not answered yet), locked, or null. */
export async function takeSurveyTap(
  tx: Tx,
  accountId: string,
  contactId: string,
  m: InboundMessage,
): Promise<SurveyAnswer | null> {
  const option = 'interactive' in m.content ? SURVEY_OPTION.exec(m.content.interactive.id) : null;
  if (!option) return null;
  const { rows } = await tx.query<ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS} FROM conversations
      WHERE account_id = $1 AND id = $2 AND contact_id = $3 AND status = 'closed'
        AND csat_close_at = closed_at AND csat_answered_at IS NULL
      FOR UPDATE`,
    [accountId, option[1], contactId],
  );
  return rows[0] ? { conversation: rows[0], score: Number(option[2]) } : null;
}

/**
 * The closed conversation whose comment window a text falls in, locked, or null. Asked only for a
 * contact with no open conversation (inbound.ts, with the contact's row locked).
 */
export async function takeSurveyComment(
  tx: Tx,
  accountId: string,
  contactId: string,
  m: InboundMessage,
  now: Date,
): Promise<SurveyAnswer | null> {
  if (!('text' in m.content)) return null;
  const { rows } = await tx.query<ConversationRow>(
    `SELECT ${CONVERSATION_COLUMNS} FROM conversations
      WHERE account_id = $1 AND contact_id = $2 AND status = 'closed' AND csat_comment_until > $3
        AND csat_comment IS NULL
      ORDER BY closed_at DESC LIMIT 1 FOR UPDATE`,
    [accountId, contactId, now],
  );
  return rows[0] ? { conversation: rows[0], comment: m.content.text.body.slice(0, 4096) } : null;
}

/** Stores the answer on its conversation, with the message that carried it as its last. */
export async function storeSurveyAnswer(
  tx: Tx,
  answer: SurveyAnswer,
  message: { id: string },
  wroteAt: Date,
  now: Date,
): Promise<ConversationRow> {
  const c = answer.conversation;
  const { rows } = await tx.query<ConversationRow>(
    `UPDATE conversations
        SET csat_score = coalesce($3, csat_score), csat_answered_at = CASE WHEN $3::int IS NULL THEN csat_answered_at ELSE $5 END,
            csat_comment = coalesce($4, csat_comment),
            csat_comment_until = CASE WHEN $4::text IS NULL THEN csat_comment_until END,
            last_message_at = greatest(last_message_at, $5), last_message_id = $6,
            last_inbound_at = greatest(last_inbound_at, $7), updated_at = $5
      WHERE account_id = $1 AND id = $2
      RETURNING ${CONVERSATION_COLUMNS}`,
    [c.account_id, c.id, answer.score ?? null, answer.comment ?? null, now, message.id, wroteAt],
  );
  return rows[0]!;
}
