// Canned responses in the database. Every function takes the account: another tenant's is not found.
import { type Sql, sqlState } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';

export interface CannedMedia {
  kind: 'image' | 'video' | 'document';
  id?: string;
  url?: string;
  filename?: string;
}

export interface CannedTemplate {
  name: string;
  language: string;
  parameters?: string[];
}

export interface CannedResponseRow {
  id: string;
  account_id: string;
  shortcut: string;
  title: string;
  text: string;
  media: CannedMedia | null;
  template: CannedTemplate | null;
  created_at: Date;
  updated_at: Date;
}

export type CannedValues = Pick<CannedResponseRow, 'shortcut' | 'title' | 'text' | 'media' | 'template'>;

const UNIQUE = '23505';

/** Inserts one; null when the account has the shortcut already. */
export async function insertCanned(
  sql: Sql,
  accountId: string,
  id: string,
  values: CannedValues,
  now: Date,
): Promise<CannedResponseRow | null> {
  const { rows } = await sql.query<CannedResponseRow>(
    `INSERT INTO canned_responses (id, account_id, shortcut, title, text, media, template, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
     ON CONFLICT (account_id, shortcut) DO NOTHING RETURNING *`,
    [
      id,
      accountId,
      values.shortcut,
      values.title,
      values.text,
      json(values.media),
      json(values.template),
      now,
    ],
  );
  return rows[0] ?? null;
}

/** Writes a changed one; null when another of the account has the new shortcut. */
export async function updateCanned(
  sql: Sql,
  accountId: string,
  id: string,
  values: CannedValues,
  now: Date,
): Promise<CannedResponseRow | null> {
  try {
    const { rows } = await sql.query<CannedResponseRow>(
      `UPDATE canned_responses SET shortcut = $3, title = $4, text = $5, media = $6, template = $7, updated_at = $8
        WHERE account_id = $1 AND id = $2 RETURNING *`,
      [
        accountId,
        id,
        values.shortcut,
        values.title,
        values.text,
        json(values.media),
        json(values.template),
        now,
      ],
    );
    return rows[0] ?? null;
  } catch (err) {
    if (sqlState(err) === UNIQUE) return null;
    throw err;
  }
}

const json = (value: object | null) => (value === null ? null : JSON.stringify(value));

export async function findCanned(
  sql: Sql,
  accountId: string,
  id: string,
  options: { lock?: boolean } = {},
): Promise<CannedResponseRow | null> {
  const { rows } = await sql.query<CannedResponseRow>(
    `SELECT * FROM canned_responses WHERE account_id = $1 AND id = $2 ${options.lock ? 'FOR UPDATE' : ''}`,
    [accountId, id],
  );
  return rows[0] ?? null;
}

export async function findCannedByShortcut(
  sql: Sql,
  accountId: string,
  shortcut: string,
): Promise<CannedResponseRow | null> {
  const { rows } = await sql.query<CannedResponseRow>(
    'SELECT * FROM canned_responses WHERE account_id = $1 AND shortcut = $2',
    [accountId, shortcut],
  );
  return rows[0] ?? null;
}

export async function countCanned(sql: Sql, accountId: string): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM canned_responses WHERE account_id = $1',
    [accountId],
  );
  return rows[0]!.n;
}

/** Newest first; `q`: a shortcut starting with it or a title containing it, case aside. */
export async function listCanned(
  sql: Sql,
  accountId: string,
  page: Page,
  q: string | undefined,
): Promise<CannedResponseRow[]> {
  const params: unknown[] = [accountId];
  let where = 'account_id = $1';
  if (page.before) where += ` AND id < $${params.push(page.before)}`;
  if (q) {
    const like = q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
    const prefix = `$${params.push(`${like}%`)}`;
    const inside = `$${params.push(`%${like}%`)}`;
    where += ` AND (shortcut LIKE ${prefix} OR lower(title) LIKE ${inside})`;
  }
  const { rows } = await sql.query<CannedResponseRow>(
    `SELECT * FROM canned_responses WHERE ${where} ORDER BY id DESC LIMIT ${page.limit + 1}`,
    params,
  );
  return rows;
}

export async function deleteCanned(sql: Sql, accountId: string, id: string): Promise<boolean> {
  const { rowCount } = await sql.query('DELETE FROM canned_responses WHERE account_id = $1 AND id = $2', [
    accountId,
    id,
  ]);
  return rowCount > 0;
}
