// Private notes: what agents write on a conversation for each other. A note is never a message: it
// is not sent, not in /messages or a conversation's messages, not in unread counts or the list's
// order (last activity stays the last message). The console shows notes between the messages by
// time (GET /conversations/{id}/notes beside GET /conversations/{id}/messages; decisions.md says why
// they are two lists). A note may mention team members of the account: each mention is one
// `conversation.mentioned` event (the conversation, the note, the member mentioned), which the
// console shows the member as a notification and a rule may react to.
//
// Bounded (limits.ts): a note's text is at most MAX_NOTE_LENGTH characters, it mentions at most
// MAX_MENTIONS members, and a conversation holds at most MAX_NOTES notes.
import type { Sql } from '../../kernel/database/db.ts';
import { conflict, type FieldIssue, invalidRequest, notFound } from '../../kernel/http/errors.ts';
import type { EventInput } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { existingMembers } from '../team/index.ts';
import { MAX_NOTES } from './limits.ts';
import { findConversation, findConversationRow } from './repo.ts';
import { toConversation } from './schemas.ts';
import type { ConversationServices } from './service.ts';

export interface NoteRow {
  id: string;
  account_id: string;
  conversation_id: string;
  author_id: string | null;
  text: string;
  mentions: string[];
  created_at: Date;
}

export function toNote(row: NoteRow) {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    authorId: row.author_id,
    text: row.text,
    mentions: row.mentions,
    createdAt: row.created_at.toISOString(),
  };
}

export interface NewNote {
  text: string;
  mentions?: string[];
  /** The team member writing it: a console session's own member, or the one an API key names. */
  authorId: string | null;
}

/** The members named that are not the account's team members, as the body's fields. */
async function strangers(sql: Sql, accountId: string, note: NewNote): Promise<FieldIssue[]> {
  const named = [...new Set([...(note.mentions ?? []), ...(note.authorId ? [note.authorId] : [])])];
  if (named.length === 0) return [];
  const known = await existingMembers(sql, accountId, named);
  const issues: FieldIssue[] = [];
  (note.mentions ?? []).forEach((id, i) => {
    if (!known.has(id))
      issues.push({ field: `mentions[${i}]`, issue: 'is not a team member of this account' });
  });
  if (note.authorId && !known.has(note.authorId))
    issues.push({ field: 'authorId', issue: 'is not a team member of this account' });
  return issues;
}

/** Adds a note to a conversation (open or closed), with one conversation.mentioned per member named. */
export async function addNote(
  s: ConversationServices,
  accountId: string,
  conversationId: string,
  note: NewNote,
) {
  const text = note.text.trim();
  if (text.length === 0) throw invalidRequest([{ field: 'text', issue: 'must not be blank' }]);
  const mentions = [...new Set(note.mentions ?? [])];
  return s.db.transaction(async (tx) => {
    // Locked: two notes at once count each other against the conversation's limit.
    const row = await findConversationRow(tx, accountId, conversationId, { lock: true });
    if (!row) throw notFound('conversation');
    const issues = await strangers(tx, accountId, note);
    if (issues.length > 0) throw invalidRequest(issues);
    const { rows: counted } = await tx.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM conversation_notes WHERE conversation_id = $1',
      [conversationId],
    );
    if (counted[0]!.n >= MAX_NOTES)
      throw conflict(`The conversation holds ${MAX_NOTES} notes, the most it may hold.`);
    const now = s.now();
    const { rows } = await tx.query<NoteRow>(
      `INSERT INTO conversation_notes (id, account_id, conversation_id, author_id, text, mentions, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [newId('note'), accountId, conversationId, note.authorId, text, mentions, now],
    );
    const shown = toNote(rows[0]!);
    if (mentions.length > 0) {
      const conversation = toConversation((await findConversation(tx, accountId, conversationId))!, now);
      const events: EventInput[] = mentions.map((memberId) => ({
        type: 'conversation.mentioned',
        accountId,
        data: { ...conversation, note: shown, memberId },
      }));
      await s.events.emitMany(tx, events);
    }
    return shown;
  });
}

/** A conversation's notes, newest first, paged by id. */
export async function listNotes(
  sql: Sql,
  accountId: string,
  conversationId: string,
  page: { limit: number; before: string | null },
): Promise<NoteRow[]> {
  const params: unknown[] = [accountId, conversationId];
  const before = page.before ? `AND id < $${params.push(page.before)}` : '';
  const { rows } = await sql.query<NoteRow>(
    `SELECT * FROM conversation_notes
      WHERE conversation_id = $2 AND account_id = $1 ${before}
      ORDER BY id DESC LIMIT ${page.limit + 1}`,
    params,
  );
  return rows;
}
