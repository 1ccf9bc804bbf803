// The account_channels row: one per account that has configured its channel (none: the defaults).
import type { Sql } from '../../kernel/db.ts';
import { type ChannelConfig, DEFAULT_CHANNEL, DEFAULT_SANDBOX } from './settings.ts';

export interface ChannelRow {
  provider: ChannelConfig['provider'];
  settings: { sandbox?: Partial<ChannelConfig['sandbox']>; whatsapp?: ChannelConfig['whatsapp'] };
  secrets_sealed: string | null;
  updated_at: Date;
}

export async function loadChannel(sql: Sql, accountId: string): Promise<ChannelConfig> {
  const { rows } = await sql.query<ChannelRow>(
    'SELECT provider, settings, secrets_sealed, updated_at FROM account_channels WHERE account_id = $1',
    [accountId],
  );
  return toChannelConfig(rows[0] ?? null);
}

/** A channel row as the configuration it holds (no row: the default sandbox). */
export function toChannelConfig(row: ChannelRow | null): ChannelConfig {
  if (!row) return DEFAULT_CHANNEL;
  return {
    provider: row.provider,
    sandbox: { ...DEFAULT_SANDBOX, ...(row.settings.sandbox ?? {}) },
    whatsapp: row.settings.whatsapp ?? null,
    secretsSealed: row.secrets_sealed,
    updatedAt: row.updated_at,
  };
}

export async function saveChannel(
  sql: Sql,
  accountId: string,
  channel: Omit<ChannelConfig, 'updatedAt'>,
  now: Date,
): Promise<ChannelConfig> {
  const settings = { sandbox: channel.sandbox, ...(channel.whatsapp ? { whatsapp: channel.whatsapp } : {}) };
  await sql.query(
    `INSERT INTO account_channels (account_id, provider, settings, secrets_sealed, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $5)
     ON CONFLICT (account_id) DO UPDATE
       SET provider = EXCLUDED.provider, settings = EXCLUDED.settings,
           secrets_sealed = EXCLUDED.secrets_sealed, updated_at = EXCLUDED.updated_at`,
    [accountId, channel.provider, JSON.stringify(settings), channel.secretsSealed, now],
  );
  return { ...channel, updatedAt: now };
}
