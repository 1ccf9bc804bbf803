// An account's voice channel in the database: no row is the sandbox.

import { SANDBOX_VOICE, type VoiceChannel, type VoiceProvider } from '../../channels/voice.ts';

import type { Sql } from '../../kernel/database/db.ts';

interface Row {
  provider: VoiceProvider;
  account_sid: string | null;
  from_number: string | null;
  auth_token_sealed: string | null;
  updated_at: Date;
}

export async function loadVoiceChannel(sql: Sql, accountId: string): Promise<VoiceChannel> {
  const { rows } = await sql.query<Row>('SELECT * FROM voice_channels WHERE account_id = $1', [accountId]);
  const row = rows[0];
  if (!row) return SANDBOX_VOICE;
  return {
    provider: row.provider,
    twilio:
      row.provider === 'twilio' && row.account_sid && row.from_number
        ? { accountSid: row.account_sid, from: row.from_number }
        : null,
    authTokenSealed: row.auth_token_sealed,
    updatedAt: row.updated_at,
  };
}

export async function saveVoiceChannel(
  sql: Sql,
  accountId: string,
  channel: VoiceChannel,
  now: Date,
): Promise<void> {
  await sql.query(
    `INSERT INTO voice_channels (account_id, provider, account_sid, from_number, auth_token_sealed, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (account_id) DO UPDATE SET provider = EXCLUDED.provider, account_sid = EXCLUDED.account_sid,
       from_number = EXCLUDED.from_number, auth_token_sealed = EXCLUDED.auth_token_sealed, updated_at = EXCLUDED.updated_at`,
    [
      accountId,
      channel.provider,
      channel.twilio?.accountSid ?? null,
      channel.twilio?.from ?? null,
      channel.authTokenSealed,
      now,
    ],
  );
}
