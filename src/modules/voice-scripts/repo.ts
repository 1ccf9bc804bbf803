// Voice scripts and their published versions in the database. Every function takes the account:
// another tenant's script is not found.
import type { Sql } from '../../kernel/database/db.ts';
import type { Page } from '../../kernel/http/pagination.ts';
import type { Definition } from './definition.ts';

export type ScriptStatus = 'draft' | 'published' | 'archived';

export interface ScriptRow {
  id: string;
  account_id: string;
  name: string;
  type: 'tts' | 'ivr';
  status: ScriptStatus;
  version: number;
  definition: Definition;
  created_at: Date;
  updated_at: Date;
}

/** A script with its current version's TwiML when that version was published (else null). */
const WITH_TWIML = `SELECT s.*, v.twiml FROM voice_scripts s
  LEFT JOIN voice_script_versions v ON v.script_id = s.id AND v.version = s.version`;

export type ScriptWithTwiml = ScriptRow & { twiml: Record<string, string> | null };

export async function countScripts(sql: Sql, accountId: string): Promise<number> {
  const { rows } = await sql.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM voice_scripts WHERE account_id = $1',
    [accountId],
  );
  return rows[0]!.n;
}

export async function insertScript(
  sql: Sql,
  row: Pick<ScriptRow, 'id' | 'account_id' | 'name' | 'type' | 'definition'>,
  now: Date,
): Promise<ScriptRow> {
  const { rows } = await sql.query<ScriptRow>(
    `INSERT INTO voice_scripts (id, account_id, name, type, status, version, definition, created_at, updated_at)
     VALUES ($1, $2, $3, $4, 'draft', 1, $5, $6, $6) RETURNING *`,
    [row.id, row.account_id, row.name, row.type, JSON.stringify(row.definition), now],
  );
  return rows[0]!;
}

export async function findScript(
  sql: Sql,
  accountId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<ScriptWithTwiml | null> {
  if (options.forUpdate) {
    await sql.query('SELECT 1 FROM voice_scripts WHERE id = $1 AND account_id = $2 FOR UPDATE', [
      id,
      accountId,
    ]);
  }
  const { rows } = await sql.query<ScriptWithTwiml>(`${WITH_TWIML} WHERE s.id = $1 AND s.account_id = $2`, [
    id,
    accountId,
  ]);
  return rows[0] ?? null;
}

export async function updateScript(
  sql: Sql,
  id: string,
  values: Pick<ScriptRow, 'name' | 'status' | 'version' | 'definition'>,
  now: Date,
): Promise<void> {
  await sql.query(
    `UPDATE voice_scripts SET name = $2, status = $3, version = $4, definition = $5, updated_at = $6 WHERE id = $1`,
    [id, values.name, values.status, values.version, JSON.stringify(values.definition), now],
  );
}

/** Keeps the script's current version as published, with its TwiML (calls play it). */
export async function saveVersion(
  sql: Sql,
  id: string,
  version: number,
  definition: Definition,
  twiml: Record<string, string>,
  now: Date,
): Promise<void> {
  await sql.query(
    `INSERT INTO voice_script_versions (script_id, version, definition, twiml, created_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (script_id, version) DO UPDATE SET definition = EXCLUDED.definition, twiml = EXCLUDED.twiml`,
    [id, version, JSON.stringify(definition), JSON.stringify(twiml), now],
  );
}

/** Why an account cannot place calls with this script (a place_call action's check), or null. */
export async function callableScriptProblem(sql: Sql, accountId: string, id: string): Promise<string | null> {
  const script = await findScript(sql, accountId, id);
  if (!script) return 'is not a voice script of this account';
  return script.status === 'published'
    ? null
    : `is a ${script.status} voice script: only a published one can be called`;
}

/** The secret a script's webhook actions sign with, sealed. */
export async function setSigningSecret(sql: Sql, id: string, sealed: string): Promise<void> {
  await sql.query('UPDATE voice_scripts SET signing_secret_sealed = $2 WHERE id = $1', [id, sealed]);
}

export async function deleteScript(sql: Sql, id: string): Promise<void> {
  await sql.query('DELETE FROM voice_scripts WHERE id = $1', [id]);
}

export async function listScripts(
  sql: Sql,
  accountId: string,
  page: Page,
  filters: { status?: string },
): Promise<ScriptWithTwiml[]> {
  const { rows } = await sql.query<ScriptWithTwiml>(
    `${WITH_TWIML}
      WHERE s.account_id = $1 AND ($2::text IS NULL OR s.id < $2) AND ($3::text IS NULL OR s.status = $3)
      ORDER BY s.id DESC LIMIT $4`,
    [accountId, page.before, filters.status ?? null, page.limit + 1],
  );
  return rows;
}
