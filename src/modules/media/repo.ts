// Media rows and their chunks. Reads always name the account, so another tenant's media is not found.
import type { Sql } from '../../kernel/database/db.ts';
import { ERASED } from '../erasure/index.ts';
import type { StoredMediaKind } from './kinds.ts';

export interface MediaRow {
  id: string;
  account_id: string;
  direction: 'uploaded' | 'inbound';
  kind: StoredMediaKind;
  mime_type: string | null;
  size_bytes: number | null;
  sha256: string | null;
  filename: string | null;
  provider: string | null;
  provider_media_id: string | null;
  provider_uploaded_at: Date | null;
  message_id: string | null;
  status: 'pending' | 'ready' | 'failed';
  error: string | null;
  expires_at: Date;
  created_at: Date;
}

export type NewMedia = Omit<MediaRow, 'created_at'>;

const COLUMNS =
  'id, account_id, direction, kind, mime_type, size_bytes, sha256, filename, provider, provider_media_id, provider_uploaded_at, message_id, status, error, expires_at, created_at';

/**
 * Inserts a media row with its chunks, in the caller's transaction. A row of a message that already
 * has one (a fetch that raced another) is not inserted: answers null, and no chunk is written; nor
 * is one of a message erased while its file was being fetched. The message is held FOR SHARE until
 * the commit, so an erasure (which rewrites it before deleting its files, erasure/erase.ts) either
 * waits and deletes this row, or has committed and the message is seen erased.
 */
export async function insertMedia(
  sql: Sql,
  row: NewMedia,
  chunks: Buffer[],
  now: Date,
): Promise<MediaRow | null> {
  if (row.message_id !== null) {
    const { rows: kept } = await sql.query(
      `SELECT 1 FROM messages WHERE id = $1 AND account_id = $2 AND phone <> '${ERASED}' FOR SHARE`,
      [row.message_id, row.account_id],
    );
    if (kept.length === 0) return null;
  }
  const values = [
    row.id,
    row.account_id,
    row.direction,
    row.kind,
    row.mime_type,
    row.size_bytes,
    row.sha256,
    row.filename,
    row.provider,
    row.provider_media_id,
    row.provider_uploaded_at,
    row.message_id,
    row.status,
    row.error,
    row.expires_at,
    now,
  ];
  const { rows } = await sql.query<MediaRow>(
    `INSERT INTO media (${COLUMNS})
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
     ON CONFLICT (message_id) WHERE message_id IS NOT NULL DO NOTHING
     RETURNING ${COLUMNS}`,
    values,
  );
  const inserted = rows[0];
  if (!inserted) return null;
  for (const [seq, bytes] of chunks.entries()) {
    await sql.query('INSERT INTO media_chunks (media_id, seq, bytes) VALUES ($1, $2, $3)', [
      row.id,
      seq,
      bytes,
    ]);
  }
  return inserted;
}

/** The account's media, expired or not (the caller decides). */
export async function findMedia(sql: Sql, accountId: string, id: string): Promise<MediaRow | null> {
  const { rows } = await sql.query<MediaRow>(
    `SELECT ${COLUMNS} FROM media WHERE id = $1 AND account_id = $2`,
    [id, accountId],
  );
  return rows[0] ?? null;
}

export async function findMediaOfMessage(
  sql: Sql,
  accountId: string,
  messageId: string,
): Promise<MediaRow | null> {
  const { rows } = await sql.query<MediaRow>(
    `SELECT ${COLUMNS} FROM media WHERE message_id = $1 AND account_id = $2`,
    [messageId, accountId],
  );
  return rows[0] ?? null;
}

export async function deleteMedia(sql: Sql, accountId: string, id: string): Promise<MediaRow | null> {
  const { rows } = await sql.query<MediaRow>(
    `DELETE FROM media WHERE id = $1 AND account_id = $2 RETURNING ${COLUMNS}`,
    [id, accountId],
  );
  return rows[0] ?? null;
}

export async function noteProviderCopy(
  sql: Sql,
  id: string,
  copy: { provider: string; providerMediaId: string; uploadedAt: Date },
): Promise<void> {
  await sql.query(
    'UPDATE media SET provider = $2, provider_media_id = $3, provider_uploaded_at = $4 WHERE id = $1',
    [id, copy.provider, copy.providerMediaId, copy.uploadedAt],
  );
}

const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** Chunks read per query while streaming: 1 MiB at a time, whatever the file's size. */
const CHUNKS_PER_READ = 4;

/** The media's bytes, chunk by chunk, a few chunks per query. */
export async function* readChunks(sql: Sql, mediaId: string): AsyncGenerator<Buffer> {
  let next = 0;
  for (;;) {
    const { rows } = await sql.query<{ seq: number; bytes: Uint8Array }>(
      'SELECT seq, bytes FROM media_chunks WHERE media_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3',
      [mediaId, next, CHUNKS_PER_READ],
    );
    for (const row of rows) yield asBuffer(row.bytes);
    if (rows.length < CHUNKS_PER_READ) return;
    next = rows[rows.length - 1]!.seq + 1;
  }
}

/**
 * Deletes up to `limit` media whose time is past (their chunks go with them), answering what was
 * deleted. Rows another process is deleting are skipped, not waited for.
 */
export async function deleteExpired(
  sql: Sql,
  now: Date,
  limit: number,
): Promise<Pick<MediaRow, 'id' | 'account_id' | 'provider' | 'provider_media_id' | 'direction'>[]> {
  const { rows } = await sql.query<
    Pick<MediaRow, 'id' | 'account_id' | 'provider' | 'provider_media_id' | 'direction'>
  >(
    `DELETE FROM media WHERE id IN (
       SELECT id FROM media WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     RETURNING id, account_id, provider, provider_media_id, direction`,
    [now, limit],
  );
  return rows;
}
