// What timed triggers wait for, shared by rules' timed triggers (rules/timed.ts) and journeys'
// timed entries (journeys/timed.ts): an occasion is one wait, named by its kind, its subject and
// the time it counts from (`occ_unanswered_<conversation>_<ms>`), in JavaScript and in SQL alike,
// so that each fires once per occasion; and the SQL that finds the waits (an unanswered
// conversation, a contact fallen silent). Shared vocabulary of the automation engines, kept here
// where both may import it.

export const occasionId = (kind: string, subject: string, since: Date) =>
  `occ_${kind}_${subject}_${since.getTime()}`;
// The same id in SQL: milliseconds since the epoch, cut as JavaScript's Date cuts them.
export const occasionSql = (kind: string, subject: string, since: string) =>
  `'occ_${kind}_' || ${subject} || '_' || floor(extract(epoch from ${since}) * 1000)::bigint`;

/**
 * Open conversations `c` whose customer is waiting for a reply, with `w.since`: their first message
 * after the business last wrote. A FROM clause and its condition.
 */
export const UNANSWERED_FROM = `conversations c
       CROSS JOIN LATERAL (
         SELECT min(m.created_at) AS since FROM messages m
          WHERE m.conversation_id = c.id AND m.direction = 'inbound'
            AND m.created_at > coalesce((SELECT max(o.created_at) FROM messages o
                                          WHERE o.conversation_id = c.id AND o.direction = 'outbound'),
                                         '-infinity'::timestamptz)) w`;
export const UNANSWERED_WHERE = `c.status = 'open' AND c.unread_count > 0`;
/** When a contact `c` fell silent: its last message, or its creation if it never wrote. */
export const INACTIVE_SINCE = 'coalesce(c.last_inbound_at, c.created_at)';
