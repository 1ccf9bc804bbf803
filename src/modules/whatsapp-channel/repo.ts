// The account_channels row: one per account that has configured its channel (none: the defaults).

import {
  type ChannelConfig,
  DEFAULT_CHANNEL,
  DEFAULT_SANDBOX,
  type WhatsAppSettings,
} from '../../channels/settings.ts';
import type { Sql, Tx } from '../../kernel/database/db.ts';

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

/** The account's channel row, locked for the transaction; null when it has none (the defaults). */
export async function lockChannelRow(tx: Tx, accountId: string): Promise<ChannelRow | null> {
  const { rows } = await tx.query<ChannelRow>(
    `SELECT provider, settings, secrets_sealed, updated_at FROM account_channels
      WHERE account_id = $1 FOR UPDATE`,
    [accountId],
  );
  return rows[0] ?? null;
}

/** The account's WhatsApp number, its row locked; null when the channel is not a number. */
export async function lockWhatsApp(
  tx: Tx,
  accountId: string,
): Promise<{ row: ChannelRow; whatsapp: WhatsAppSettings } | null> {
  const row = await lockChannelRow(tx, accountId);
  if (row?.provider !== 'whatsapp_cloud' || !row.settings.whatsapp) return null;
  return { row, whatsapp: row.settings.whatsapp };
}

/** Writes the number's settings back into the locked row (its other settings as they were). */
export async function saveWhatsApp(tx: Tx, accountId: string, row: ChannelRow, whatsapp: WhatsAppSettings) {
  await tx.query('UPDATE account_channels SET settings = $2 WHERE account_id = $1', [
    accountId,
    JSON.stringify({ ...row.settings, whatsapp }),
  ]);
}

export async function saveChannel(
  sql: Sql,
  accountId: string,
  channel: Omit<ChannelConfig, 'updatedAt'>,
  now: Date,
): Promise<ChannelConfig> {
  const settings = { sandbox: channel.sandbox, ...(channel.whatsapp ? { whatsapp: channel.whatsapp } : {}) };
  await sql.query(
    `INSERT INTO account_channels (account_id, provider, settings, secrets_sealed, created_at, updated_at,
                                   phone_number_id, business_account_id)
     VALUES ($1, $2, $3, $4, $5, $5, $6, $7)
     ON CONFLICT (account_id) DO UPDATE
       SET provider = EXCLUDED.provider, settings = EXCLUDED.settings,
           secrets_sealed = EXCLUDED.secrets_sealed, updated_at = EXCLUDED.updated_at,
           phone_number_id = EXCLUDED.phone_number_id, business_account_id = EXCLUDED.business_account_id`,
    [
      accountId,
      channel.provider,
      JSON.stringify(settings),
      channel.secretsSealed,
      now,
      channel.whatsapp?.phoneNumberId ?? null,
      channel.whatsapp?.businessAccountId ?? null,
    ],
  );
  return { ...channel, updatedAt: now };
}

/** Another account whose WhatsApp channel is this number, if any: a number belongs to one account. */
export async function accountWithNumber(
  sql: Sql,
  phoneNumberId: string,
  exceptAccountId: string,
): Promise<string | null> {
  const { rows } = await sql.query<{ account_id: string }>(
    `SELECT account_id FROM account_channels
      WHERE phone_number_id = $1 AND provider = 'whatsapp_cloud' AND account_id <> $2 LIMIT 1`,
    [phoneNumberId, exceptAccountId],
  );
  return rows[0]?.account_id ?? null;
}

/** A WhatsApp channel as callbacks are routed to it. */
export interface ChannelDestination {
  accountId: string;
  phoneNumberId: string;
  businessAccountId: string;
}

/** The partner's accounts on the WhatsApp Cloud API whose number, or WABA, is one of these. */
export async function channelsOfPartner(
  sql: Sql,
  partnerId: string,
  phoneNumberIds: string[],
  businessAccountIds: string[],
): Promise<ChannelDestination[]> {
  const { rows } = await sql.query<ChannelDestination>(
    `SELECT c.account_id AS "accountId", c.phone_number_id AS "phoneNumberId",
            c.business_account_id AS "businessAccountId"
       FROM account_channels c JOIN accounts a ON a.id = c.account_id
      WHERE a.partner_id = $1 AND c.provider = 'whatsapp_cloud'
        AND (c.phone_number_id = ANY($2::text[]) OR c.business_account_id = ANY($3::text[]))
      ORDER BY c.account_id`,
    [partnerId, phoneNumberIds, businessAccountIds],
  );
  return rows;
}
