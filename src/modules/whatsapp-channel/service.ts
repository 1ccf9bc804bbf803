// Configuring an account's channel (PUT /account/channel). WhatsApp Cloud API credentials are
// checked with Meta before they are saved, so a wrong token is a 400 now rather than a failed
// message later; they are stored sealed and never shown again.
import type { Channels } from '../../channels/registry.ts';
import {
  type ChannelConfig,
  DEFAULT_SANDBOX,
  type SandboxSettings,
  throughputOf,
  type WhatsAppSecrets,
  type WhatsAppSettings,
} from '../../channels/settings.ts';
import type { SecretBox } from '../../kernel/crypto/secrets.ts';
import type { Database, Tx } from '../../kernel/database/db.ts';
import { ApiError, conflict } from '../../kernel/http/errors.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { invalidFields } from '../contacts/index.ts';
import { COEXISTENCE_THROUGHPUT } from './embedded-signup.ts';
import { partnerAppOfAccount } from './partner-app.ts';
import { accountWithNumber, loadChannel, saveChannel } from './repo.ts';
import { numberView } from './signals.ts';

export interface ChannelServices {
  db: Database;
  channels: Channels;
  secrets: SecretBox;
  events: EventOutbox;
  now: () => Date;
}

export interface ChannelInput {
  provider: 'sandbox' | 'whatsapp_cloud';
  whatsapp?: {
    phoneNumberId: string;
    businessAccountId: string;
    accessToken?: string;
    appSecret?: string;
    verifyToken?: string;
    appId?: string;
  };
  sandbox?: Partial<SandboxSettings>;
}

/**
 * The credentials to use: those given, else the stored ones of the same number and business. The
 * app secret and verify token may be missing when the account's partner has set its Meta app.
 */
function secretsFor(
  s: ChannelServices,
  stored: ChannelConfig,
  input: NonNullable<ChannelInput['whatsapp']>,
  partnerHasApp: boolean,
): WhatsAppSecrets {
  const given = {
    accessToken: input.accessToken,
    appSecret: input.appSecret,
    verifyToken: input.verifyToken,
  };
  const sameNumber =
    stored.whatsapp?.phoneNumberId === input.phoneNumberId &&
    stored.whatsapp?.businessAccountId === input.businessAccountId;
  const kept: Partial<WhatsAppSecrets> =
    sameNumber && stored.secretsSealed ? s.channels.secretsOf(stored) : {};
  const secrets = {
    accessToken: given.accessToken ?? kept.accessToken,
    appSecret: given.appSecret ?? kept.appSecret,
    verifyToken: given.verifyToken ?? kept.verifyToken,
    pin: kept.pin,
  };
  const required: ('accessToken' | 'appSecret' | 'verifyToken')[] = partnerHasApp
    ? ['accessToken']
    : ['accessToken', 'appSecret', 'verifyToken'];
  const missing = required.filter((k) => !secrets[k]);
  if (missing.length > 0) {
    throw invalidFields(
      missing.map((k) => ({
        field: `whatsapp.${k}`,
        issue:
          k === 'accessToken'
            ? 'is required (it may be left out only to keep the one stored for this same number)'
            : "is required (it may be left out to keep the one stored for this same number, or when the account's partner has set its Meta app)",
      })),
    );
  }
  // Only what there is: an absent app secret means the partner's app checks the callbacks.
  return Object.fromEntries(Object.entries(secrets).filter(([, v]) => v)) as unknown as WhatsAppSecrets;
}

export async function configureChannel(
  s: ChannelServices,
  accountId: string,
  input: ChannelInput,
): Promise<ChannelConfig> {
  const sandbox = { ...DEFAULT_SANDBOX, ...(input.sandbox ?? {}) };
  if (input.provider === 'sandbox') {
    if (input.whatsapp) {
      throw invalidFields([{ field: 'whatsapp', issue: 'is only for provider whatsapp_cloud' }]);
    }
    const before = await loadChannel(s.db, accountId);
    return s.db.transaction(async (tx) => {
      const saved = await saveChannel(
        tx,
        accountId,
        { provider: 'sandbox', sandbox, whatsapp: null, secretsSealed: null },
        s.now(),
      );
      await announce(s, tx, accountId, before.whatsapp, null);
      return saved;
    });
  }
  if (!input.whatsapp)
    throw invalidFields([{ field: 'whatsapp', issue: 'is required with provider whatsapp_cloud' }]);
  const stored = await loadChannel(s.db, accountId);
  const partnerApp = await partnerAppOfAccount(s.db, s.secrets, accountId);
  const secrets = secretsFor(s, stored, input.whatsapp, partnerApp !== null);
  const ids = {
    phoneNumberId: input.whatsapp.phoneNumberId,
    businessAccountId: input.whatsapp.businessAccountId,
  };
  // A number is one account's: its callbacks are routed to the account by it.
  if (await accountWithNumber(s.db, ids.phoneNumberId, accountId)) {
    throw conflict('This WhatsApp number is the channel of another account.', [
      { field: 'whatsapp.phoneNumberId', issue: 'is the channel of another account' },
    ]);
  }
  const checked = await s.channels.whatsapp(ids, secrets.accessToken).fetchPhoneNumber();
  if (!checked.ok) {
    if (checked.retryable) {
      throw new ApiError(
        'SERVICE_UNAVAILABLE',
        'The WhatsApp Cloud API could not be reached to check the credentials; nothing was saved. Retry shortly.',
        { headers: { 'retry-after': '5' } },
      );
    }
    throw invalidFields([
      {
        field: 'whatsapp',
        issue: `was refused by the WhatsApp Cloud API (${checked.error.code}): ${checked.error.message}`,
      },
    ]);
  }
  // The same number keeps how it was connected (an Embedded Signup number given a new token is
  // still one Tidings registered, and deregisters when disconnected).
  const same = stored.whatsapp?.phoneNumberId === ids.phoneNumberId ? stored.whatsapp : null;
  const onboarding = same?.onboarding ?? null;
  const appId = input.whatsapp.appId ?? same?.appId ?? null;
  const whatsapp: WhatsAppSettings = {
    ...ids,
    displayPhoneNumber: checked.displayPhoneNumber,
    verifiedName: checked.verifiedName,
    throughputPerSecond:
      onboarding?.mode === 'coexistence' ? COEXISTENCE_THROUGHPUT : throughputOf(checked.throughputLevel),
    messagingLimitTier: checked.messagingLimitTier,
    qualityRating: checked.qualityRating,
    ...(onboarding ? { onboarding } : {}),
    ...(appId ? { appId } : {}),
  };
  return s.db.transaction(async (tx) => {
    const saved = await saveChannel(
      tx,
      accountId,
      { provider: 'whatsapp_cloud', sandbox, whatsapp, secretsSealed: s.channels.sealSecrets(secrets) },
      s.now(),
    );
    await announce(s, tx, accountId, stored.provider === 'whatsapp_cloud' ? stored.whatsapp : null, whatsapp);
    return saved;
  });
}

/** channel.disconnected for the number that went, channel.connected for the one that came. */
async function announce(
  s: ChannelServices,
  tx: Tx,
  accountId: string,
  before: WhatsAppSettings | null,
  after: WhatsAppSettings | null,
): Promise<void> {
  if (before?.phoneNumberId === after?.phoneNumberId) return;
  if (before) {
    await s.events.emit(tx, {
      type: 'channel.disconnected',
      accountId,
      data: {
        whatsapp: numberView(before),
        reason: after ? 'replaced' : 'disconnected',
        deregistered: false,
        unsubscribed: false,
      },
    });
  }
  if (after) {
    await s.events.emit(tx, {
      type: 'channel.connected',
      accountId,
      data: { whatsapp: numberView(after), via: 'token', mode: null },
    });
  }
}
