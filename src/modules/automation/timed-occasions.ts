// What timed triggers wait for, shared by rules' timed triggers (rules/timed.ts) and journeys'
// timed entries (journeys/timed.ts): an occasion is one wait, named by its kind, its subject and
// the time it counts from (`occ_unanswered_<conversation>_<ms>`), in JavaScript and in SQL alike,
// so that each fires once per occasion; and the statement that finds the waits (an unanswered
// conversation, a contact fallen silent). Shared by the automation engines, kept here where both
// may import it; its SQL stays here, and each engine adds only its own test of whether an occasion
// was already taken (its runs' table).
import type { Sql } from '../../kernel/database/db.ts';

export const occasionId = (kind: string, subject: string, since: Date) =>
  `occ_${kind}_${subject}_${since.getTime()}`;
// The same id in SQL: milliseconds since the epoch, cut as JavaScript's Date cuts them.
const occasionSql = (kind: string, subject: string, since: string) =>
  `'occ_${kind}_' || ${subject} || '_' || floor(extract(epoch from ${since}) * 1000)::bigint`;

/**
 * Open conversations `c` whose customer is waiting for a reply, with `w.since`: their first message
 * after the business last wrote. A FROM clause and its condition.
 */
const UNANSWERED_FROM = `conversations c
       CROSS JOIN LATERAL (
         SELECT min(m.created_at) AS since FROM messages m
          WHERE m.conversation_id = c.id AND m.direction = 'inbound'
            AND m.created_at > coalesce((SELECT max(o.created_at) FROM messages o
                                          WHERE o.conversation_id = c.id AND o.direction = 'outbound'),
                                         '-infinity'::timestamptz)) w`;
const UNANSWERED_WHERE = `c.status = 'open' AND c.unread_count > 0`;
/** When a contact `c` fell silent: its last message, or its creation if it never wrote. */
const INACTIVE_SINCE = 'coalesce(c.last_inbound_at, c.created_at)';

/** A wait found: its subject (a conversation, or a contact), the contact, when it began, its id in SQL. */
export interface FoundOccasion {
  subjectId: string;
  contactId: string;
  since: Date;
  occasion: string;
}

/**
 * The account's ($1) waits of a kind that began at or before the cutoff ($2) and that `untaken`
 * lets through: SQL over the occasion's id and its contact, both given as SQL expressions, with
 * `params` as $3 onwards. At most `limit`.
 */
export async function findOccasions(
  sql: Sql,
  kind: 'unanswered' | 'inactive',
  q: {
    accountId: string;
    cutoff: Date;
    limit: number;
    untaken: (occasion: string, contact: string) => string;
    params: unknown[];
  },
): Promise<FoundOccasion[]> {
  const occasion =
    kind === 'unanswered'
      ? occasionSql('unanswered', 'c.id', 'w.since')
      : occasionSql('inactive', 'c.id', INACTIVE_SINCE);
  const text =
    kind === 'unanswered'
      ? `SELECT c.id, c.contact_id, ${occasion} AS occasion, w.since
           FROM ${UNANSWERED_FROM}
          WHERE c.account_id = $1 AND ${UNANSWERED_WHERE} AND w.since <= $2
            AND ${q.untaken(occasion, 'c.contact_id')}
          LIMIT ${q.limit}`
      : `SELECT c.id, c.id AS contact_id, ${occasion} AS occasion, ${INACTIVE_SINCE} AS since
           FROM contacts c
          WHERE c.account_id = $1 AND ${INACTIVE_SINCE} <= $2
            AND ${q.untaken(occasion, 'c.id')}
          LIMIT ${q.limit}`;
  const { rows } = await sql.query<{ id: string; contact_id: string; occasion: string; since: Date }>(text, [
    q.accountId,
    q.cutoff,
    ...q.params,
  ]);
  return rows.map((r) => ({
    subjectId: r.id,
    contactId: r.contact_id,
    since: new Date(r.since),
    occasion: r.occasion,
  }));
}
