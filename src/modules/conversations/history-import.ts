// A coexistence number's chat history (the WhatsApp Business app's last six months, Meta's
// `history` webhooks), imported once. Meta's advice is followed: a chunk is stored as it comes
// (history_chunks, once: Meta retries webhooks) and imported by a job, one transaction a chunk:
//   - each thread is a customer: their contact is found or made, as a customer writing is;
//   - their messages go into one closed conversation of their own (history_threads), dated when
//     the messages were sent, so that later chunks and phases add to it and it sorts in the past;
//   - the customer's messages are `received`, the business's (from the app) `business_app` with
//     the status Meta gives; none is charged, none opens a window (Meta: a window opens only when
//     the customer writes after onboarding), none is an event (six months of messages are not news
//     for webhooks or automation);
//   - a message stored before (a chunk repeated, a message the webhooks brought) is skipped.
// The chunk's payload, which holds the customers' messages, is cleared once they are messages; the
// channel notes the progress (whatsapp-channel noteHistory): `complete` once Meta's progress is
// 100 and no chunk waits.
import type { HistoryChunk, HistoryMessage } from '../../channels/types.ts';
import type { Tx } from '../../kernel/database/db.ts';
import type { JobDefinition, Jobs } from '../../kernel/jobs/jobs.ts';
import type { EventInput } from '../../kernel/outbox/events.ts';
import { newIdAt } from '../../kernel/values/ids.ts';
import { type ContactRow, customerContact, identityKey } from '../contacts/index.ts';
import { type HistoryRow, insertHistory } from '../messages/index.ts';
import { noteHistory } from '../whatsapp-channel/index.ts';
import type { ConversationServices } from './service.ts';

export const HISTORY_IMPORT_JOB = 'conversations.history-import';

interface ImportJobData {
  accountId: string;
  phase: number;
  chunkOrder: number;
}

/** Stores a chunk (once) and has it imported; the channel notes the progress. */
export async function storeHistoryChunk(
  s: { jobs: Jobs; now: () => Date },
  tx: Tx,
  accountId: string,
  chunk: HistoryChunk,
): Promise<boolean> {
  const now = s.now();
  const messages = chunk.threads.reduce((n, t) => n + t.messages.length, 0);
  const { rows } = await tx.query(
    `INSERT INTO history_chunks (account_id, phase, chunk_order, progress, payload, messages, received_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING phase`,
    [accountId, chunk.phase, chunk.chunkOrder, chunk.progress, JSON.stringify(chunk.threads), messages, now],
  );
  if (rows.length === 0) return false;
  const data: ImportJobData = { accountId, phase: chunk.phase, chunkOrder: chunk.chunkOrder };
  await s.jobs.enqueue(tx, HISTORY_IMPORT_JOB, data);
  await noteHistory(
    tx,
    accountId,
    { status: 'importing', progress: chunk.progress, phase: chunk.phase },
    now,
  );
  return true;
}

const STATUSES: Record<string, string> = {
  READ: 'read',
  PLAYED: 'read',
  DELIVERED: 'delivered',
  SENT: 'sent',
  PENDING: 'sent',
  ERROR: 'failed',
};

/** The customer's history conversation: found, else made (closed, dated at its first message). */
async function conversationOf(
  tx: Tx,
  accountId: string,
  contact: ContactRow,
  first: Date,
  now: Date,
): Promise<string> {
  // Its conversation may have been deleted since (with the contact's data, say): then a new one.
  const { rows } = await tx.query<{ conversation_id: string }>(
    `SELECT t.conversation_id FROM history_threads t
       JOIN conversations c ON c.account_id = t.account_id AND c.id = t.conversation_id
      WHERE t.account_id = $1 AND t.contact_id = $2`,
    [accountId, contact.id],
  );
  if (rows[0]) return rows[0].conversation_id;
  const id = newIdAt('conversation', first);
  await tx.query(
    `INSERT INTO conversations (id, account_id, contact_id, phone, status, last_message_at, opened_at, closed_at,
                                created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'closed', $5, $5, $5, $6, $6)`,
    [id, accountId, contact.id, contact.phone, first, now],
  );
  await tx.query(
    'INSERT INTO history_threads (account_id, contact_id, conversation_id) VALUES ($1, $2, $3)',
    [accountId, contact.id, id],
  );
  return id;
}

/** The conversation spans its messages: opened at the first, last activity at the last. */
async function spanConversation(tx: Tx, accountId: string, id: string, messages: HistoryMessage[]) {
  const times = messages.map((m) => m.sentAt.getTime());
  const inbound = messages.filter((m) => !m.fromBusiness).map((m) => m.sentAt.getTime());
  await tx.query(
    `UPDATE conversations
        SET opened_at = least(opened_at, $3), last_message_at = greatest(last_message_at, $4),
            closed_at = greatest(closed_at, $4),
            last_inbound_at = CASE WHEN $5::timestamptz IS NULL THEN last_inbound_at
                                   ELSE greatest(last_inbound_at, $5) END,
            last_message_id = (SELECT id FROM messages WHERE account_id = $1 AND conversation_id = $2
                                ORDER BY created_at DESC, id DESC LIMIT 1)
      WHERE account_id = $1 AND id = $2`,
    [
      accountId,
      id,
      new Date(Math.min(...times)),
      new Date(Math.max(...times)),
      inbound.length > 0 ? new Date(Math.max(...inbound)) : null,
    ],
  );
}

interface ChunkMark {
  phase: number;
  chunk_order: number;
  progress: number;
  imported: boolean;
}

/**
 * Whether the whole history is in: Meta's 100 % chunk came, it is the last (highest phase, highest
 * order), no chunk before it is missing (orders run 1, 2, … within each phase, or across them: Meta
 * does not say which), and every chunk is imported. Chunks come in any order, so the 100 % chunk
 * alone does not say the others have come.
 */
function historyComplete(chunks: ChunkMark[]): boolean {
  const last = chunks.at(-1);
  if (!last || last.progress < 100 || chunks.some((c) => !c.imported)) return false;
  const across = chunks.every((c, i) => c.chunk_order === i + 1);
  const within = chunks.every((c, i) => {
    const previous = chunks[i - 1];
    return previous?.phase === c.phase ? c.chunk_order === previous.chunk_order + 1 : c.chunk_order === 1;
  });
  return across || within;
}

/** Imports one stored chunk, in one transaction; nothing when it is imported already. */
export async function importHistoryChunk(s: ConversationServices, data: ImportJobData): Promise<void> {
  await s.db.transaction(async (tx) => {
    const { rows } = await tx.query<{ payload: HistoryChunk['threads'] | null }>(
      `SELECT payload FROM history_chunks
        WHERE account_id = $1 AND phase = $2 AND chunk_order = $3 AND imported_at IS NULL FOR UPDATE`,
      [data.accountId, data.phase, data.chunkOrder],
    );
    const threads = rows[0]?.payload;
    if (!threads) return;
    const now = s.now();
    const events: EventInput[] = [];
    const who = (t: HistoryChunk['threads'][number]) => ({
      phone: t.phone,
      waId: t.phone?.replace(/\D/g, '') ?? null,
      userId: t.userId,
      parentUserId: null,
      username: t.username,
    });
    // Customers in a fixed order: two chunks never lock contacts in a cycle.
    const ordered = threads
      .filter((t) => t.messages.length > 0)
      .map((t) => ({ t, key: identityKey(who(t)) }))
      .sort((a, b) => a.key.localeCompare(b.key));
    const stored: HistoryRow[] = [];
    const spans: { id: string; messages: HistoryMessage[] }[] = [];
    for (const { t } of ordered) {
      const messages = t.messages.map((m) => ({ ...m, sentAt: new Date(m.sentAt) }));
      const { contact } = await customerContact(s, tx, data.accountId, who(t), { name: null, now }, events);
      const first = new Date(Math.min(...messages.map((m) => m.sentAt.getTime())));
      const conversationId = await conversationOf(tx, data.accountId, contact, first, now);
      spans.push({ id: conversationId, messages });
      for (const m of messages) {
        stored.push({
          id: newIdAt('message', m.sentAt),
          contactId: contact.id,
          conversationId,
          direction: m.fromBusiness ? 'outbound' : 'inbound',
          type: m.type,
          phone: contact.phone,
          whatsappUserId: t.userId ?? contact.whatsapp_user_id,
          content: m.content,
          status: m.fromBusiness ? (STATUSES[m.status ?? ''] ?? 'sent') : 'received',
          providerMessageId: m.providerMessageId,
          sentAt: m.sentAt,
        });
      }
    }
    const added = await insertHistory(tx, data.accountId, stored, now);
    for (const span of spans) await spanConversation(tx, data.accountId, span.id, span.messages);
    await tx.query(
      `UPDATE history_chunks SET payload = NULL, imported_at = $4
        WHERE account_id = $1 AND phase = $2 AND chunk_order = $3`,
      [data.accountId, data.phase, data.chunkOrder, now],
    );
    const { rows: all } = await tx.query<ChunkMark>(
      `SELECT phase, chunk_order, progress, imported_at IS NOT NULL AS imported
         FROM history_chunks WHERE account_id = $1 ORDER BY phase, chunk_order`,
      [data.accountId],
    );
    const done = historyComplete(all);
    await noteHistory(
      tx,
      data.accountId,
      { addMessages: added, ...(done ? { status: 'complete' } : {}) },
      now,
    );
    await s.events.emitMany(tx, events);
  });
}

export function historyImportJob(s: ConversationServices): JobDefinition<ImportJobData> {
  return {
    name: HISTORY_IMPORT_JOB,
    retryLimit: 5,
    retryDelaySeconds: 10,
    expireInSeconds: 300,
    handle: (data) => importHistoryChunk(s, data),
  };
}
