// A partner's Meta app (GET|PUT /partner/whatsapp-app): a Tech Provider or BSP has one app for all
// its clients, and Meta sends every client's webhooks to that app's one callback URL
// (/api/v1/callbacks/whatsapp), signed with the app's secret. The app id is shown; the secret and
// the verify token are write-only, sealed with SECRETS_KEY (like a channel's credentials). A
// client's channel may then leave out its own app secret and verify token: its callbacks are
// checked with its partner's (modules/callbacks/service.ts). The routes are in partner/
// (whatsapp-app-routes.ts); the rows are kept here, beside the channels that fall back on them.

import type { SecretBox } from '../../kernel/crypto/secrets.ts';
import type { Sql } from '../../kernel/database/db.ts';
import { invalidFields } from '../contacts/index.ts';

export interface PartnerWhatsAppApp {
  partnerId: string;
  appId: string;
  appSecret: string;
  verifyToken: string;
  /** The app's Embedded Signup configuration (Meta's `config_id`), if the partner onboards with it. */
  configurationId: string | null;
  updatedAt: Date;
}

export interface PartnerAppInput {
  appId: string;
  appSecret?: string;
  verifyToken?: string;
  /** Left out: kept for the same app id; null: removed (no Embedded Signup). */
  configurationId?: string | null;
}

interface Row {
  partner_id: string;
  app_id: string;
  secrets_sealed: string;
  configuration_id: string | null;
  updated_at: Date;
}

function opened(secrets: SecretBox, row: Row): PartnerWhatsAppApp {
  const { appSecret, verifyToken } = JSON.parse(secrets.open(row.secrets_sealed)) as {
    appSecret: string;
    verifyToken: string;
  };
  return {
    partnerId: row.partner_id,
    appId: row.app_id,
    appSecret,
    verifyToken,
    configurationId: row.configuration_id,
    updatedAt: row.updated_at,
  };
}

const COLUMNS = 'p.partner_id, p.app_id, p.secrets_sealed, p.configuration_id, p.updated_at';

export async function loadPartnerApp(
  sql: Sql,
  secrets: SecretBox,
  partnerId: string,
): Promise<PartnerWhatsAppApp | null> {
  const { rows } = await sql.query<Row>(
    `SELECT ${COLUMNS} FROM partner_whatsapp_apps p WHERE p.partner_id = $1`,
    [partnerId],
  );
  return rows[0] ? opened(secrets, rows[0]) : null;
}

/** The app of the account's partner, if the account has a partner and the partner an app. */
export async function partnerAppOfAccount(
  sql: Sql,
  secrets: SecretBox,
  accountId: string,
): Promise<PartnerWhatsAppApp | null> {
  const { rows } = await sql.query<Row>(
    `SELECT ${COLUMNS} FROM accounts a JOIN partner_whatsapp_apps p ON p.partner_id = a.partner_id
      WHERE a.id = $1`,
    [accountId],
  );
  return rows[0] ? opened(secrets, rows[0]) : null;
}

/** Every partner's app: an app-level callback is signed by one of them, and says by its signature which. */
export async function allPartnerApps(sql: Sql, secrets: SecretBox): Promise<PartnerWhatsAppApp[]> {
  const { rows } = await sql.query<Row>(
    `SELECT ${COLUMNS} FROM partner_whatsapp_apps p ORDER BY p.partner_id`,
  );
  return rows.map((row) => opened(secrets, row));
}

/**
 * Sets the partner's app. The secret and the verify token may be left out only to keep the stored
 * ones of the same app id (as a channel's credentials are kept for the same number).
 */
export async function configurePartnerApp(
  s: { db: Sql; secrets: SecretBox; now: () => Date },
  partnerId: string,
  input: PartnerAppInput,
): Promise<PartnerWhatsAppApp> {
  const stored = await loadPartnerApp(s.db, s.secrets, partnerId);
  const kept = stored?.appId === input.appId ? stored : null;
  const appSecret = input.appSecret ?? kept?.appSecret;
  const verifyToken = input.verifyToken ?? kept?.verifyToken;
  const configurationId =
    input.configurationId === undefined ? (kept?.configurationId ?? null) : input.configurationId;
  const missing = [...(appSecret ? [] : ['appSecret']), ...(verifyToken ? [] : ['verifyToken'])].map(
    (field) => ({
      field,
      issue: 'is required (it may be left out only to keep the one stored for this same app)',
    }),
  );
  if (missing.length > 0) throw invalidFields(missing);
  const now = s.now();
  const sealed = s.secrets.seal(JSON.stringify({ appSecret, verifyToken }));
  await s.db.query(
    `INSERT INTO partner_whatsapp_apps (partner_id, app_id, secrets_sealed, configuration_id, created_at, updated_at)
     VALUES ($1, $2, $3, $5, $4, $4)
     ON CONFLICT (partner_id) DO UPDATE
       SET app_id = EXCLUDED.app_id, secrets_sealed = EXCLUDED.secrets_sealed,
           configuration_id = EXCLUDED.configuration_id, updated_at = EXCLUDED.updated_at`,
    [partnerId, input.appId, sealed, now, configurationId],
  );
  return {
    partnerId,
    appId: input.appId,
    appSecret: appSecret!,
    verifyToken: verifyToken!,
    configurationId,
    updatedAt: now,
  };
}

export function appCallbackUrlOf(publicBaseUrl: string): string {
  return `${publicBaseUrl}/api/v1/callbacks/whatsapp`;
}

/** The app as the API shows it: never its secrets. */
export function toPartnerApp(app: PartnerWhatsAppApp | null, publicBaseUrl: string) {
  return {
    configured: app !== null,
    appId: app?.appId ?? null,
    configurationId: app?.configurationId ?? null,
    callbackUrl: appCallbackUrlOf(publicBaseUrl),
    updatedAt: app?.updatedAt.toISOString() ?? null,
  };
}
