// Voice scripts and their published versions in the database. Every function takes the account:
// another tenant's script is not found.
import type { Sql } from '../../kernel/database/db.ts';
import { Versioned } from '../../kernel/database/versioned.ts';
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

/** Scripts one account may have. */
export const MAX_SCRIPTS_PER_ACCOUNT = 200;

export const VOICE_SCRIPTS = new Versioned<ScriptRow, 'publish', ScriptWithTwiml>({
  table: 'voice_scripts',
  noun: 'voice script',
  nouns: 'voice scripts',
  limit: MAX_SCRIPTS_PER_ACCOUNT,
  created: ['name', 'type'],
  edited: ['name'],
  versions: { table: 'voice_script_versions', key: 'script_id', extras: ['twiml'] },
  read: { select: WITH_TWIML, alias: 's' },
  moves: { publish: { from: ['draft'], to: 'published', done: 'published' } },
});

export function findScript(
  sql: Sql,
  accountId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<ScriptWithTwiml | null> {
  return VOICE_SCRIPTS.find(sql, accountId, id, options);
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

export function listScripts(
  sql: Sql,
  accountId: string,
  page: Page,
  filters: { status?: string },
): Promise<ScriptWithTwiml[]> {
  return VOICE_SCRIPTS.list(sql, accountId, page, filters);
}
