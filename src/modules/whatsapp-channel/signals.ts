// What Meta says about the business's number and account, outside any one message, applied to the
// account's channel and told as events (in the transaction that applies it):
//   - phone_number_quality_update → the messaging limit tier, the last quality event, and a read of
//     the number from Meta (the refresh job) for its quality rating, which the webhook does not
//     carry → channel.quality_changed (again from the job when the rating it reads has moved);
//   - account_update → the last account update → channel.account_updated;
//   - errors → the last error → channel.error.
// These come WABA-wide (callbacks/service.ts): an update naming another number of the WABA
// (by its display number) is not this channel's and changes nothing. A repeated webhook (same
// event, same time) changes nothing either.
import type { Channels } from '../../channels/registry.ts';
import { throughputOf, type WhatsAppSettings } from '../../channels/settings.ts';
import type { ProviderUpdate } from '../../channels/types.ts';
import type { Database, Tx } from '../../kernel/database/db.ts';
import type { JobDefinition, Jobs } from '../../kernel/jobs/jobs.ts';
import type { EventInput, EventOutbox } from '../../kernel/outbox/events.ts';
import { type ChannelRow, lockWhatsApp, saveWhatsApp, toChannelConfig } from './repo.ts';

export const CHANNEL_REFRESH_JOB = 'channel.refresh-number';

export type ChannelSignal = Extract<
  ProviderUpdate,
  { kind: 'number_quality' | 'account_update' | 'channel_error' }
>;

export function isChannelSignal(u: ProviderUpdate): u is ChannelSignal {
  return u.kind === 'number_quality' || u.kind === 'account_update' || u.kind === 'channel_error';
}

interface RefreshJobData {
  accountId: string;
  phoneNumberId: string;
}

const digits = (value: string | null | undefined) => (value ?? '').replace(/\D/g, '');

/** The number as events show it: what Meta says of it, never a credential. */
export function numberView(w: WhatsAppSettings) {
  return {
    phoneNumberId: w.phoneNumberId,
    businessAccountId: w.businessAccountId,
    displayPhoneNumber: w.displayPhoneNumber,
    qualityRating: w.qualityRating ?? null,
    messagingLimitTier: w.messagingLimitTier ?? null,
    throughputPerSecond: w.throughputPerSecond ?? throughputOf(null),
  };
}

/** account_update events after which the partner's app no longer reaches the business. */
const UNINSTALLED = ['PARTNER_APP_UNINSTALLED', 'PARTNER_REMOVED'];

/** The channel after the signal, and the event that tells it; null when it is not this channel's or a repeat. */
function applied(
  w: WhatsAppSettings,
  signal: ChannelSignal,
): { whatsapp: WhatsAppSettings; event: Omit<EventInput, 'accountId'> } | null {
  if (signal.kind === 'number_quality') {
    const s = signal.signal;
    if (s.displayPhoneNumber && digits(w.displayPhoneNumber) !== s.displayPhoneNumber) return null;
    const at = s.at.toISOString();
    if (w.lastQualityEvent?.event === s.event && w.lastQualityEvent.at === at) return null;
    const tier = s.currentLimit?.startsWith('TIER_') ? s.currentLimit : (w.messagingLimitTier ?? null);
    const whatsapp: WhatsAppSettings = {
      ...w,
      messagingLimitTier: tier,
      // Meta raises a number to its high throughput level (1,000 a second) with this event.
      ...(s.event === 'THROUGHPUT_UPGRADE' ? { throughputPerSecond: throughputOf('HIGH') } : {}),
      lastQualityEvent: {
        event: s.event,
        currentLimit: s.currentLimit,
        previousLimit: s.previousLimit,
        maxDailyConversations: s.maxDailyConversations,
        at,
      },
    };
    return {
      whatsapp,
      event: {
        type: 'channel.quality_changed',
        data: {
          whatsapp: numberView(whatsapp),
          event: s.event,
          previousMessagingLimitTier: w.messagingLimitTier ?? null,
          maxDailyConversations: s.maxDailyConversations,
          at,
        },
      },
    };
  }
  if (signal.kind === 'account_update') {
    const s = signal.signal;
    if (s.phoneNumber && digits(w.displayPhoneNumber) !== s.phoneNumber) return null;
    const at = s.at.toISOString();
    if (w.lastAccountUpdate?.event === s.event && w.lastAccountUpdate.at === at) return null;
    // The business took the partner's app away (uninstalled it, or unshared the WABA): the token
    // is of no use any more, and the number must be connected again.
    const cut = UNINSTALLED.includes(s.event) && !w.needsReconnect;
    const whatsapp: WhatsAppSettings = {
      ...w,
      lastAccountUpdate: { event: s.event, details: s.details, at },
      ...(cut
        ? { needsReconnect: { since: at, providerCode: null, message: `Meta reported ${s.event}` } }
        : {}),
    };
    return {
      whatsapp,
      event: {
        type: 'channel.account_updated',
        data: {
          whatsapp: numberView(whatsapp),
          event: s.event,
          details: s.details,
          at,
          nextStep: whatsapp.needsReconnect ? RECONNECT_STEP : null,
        },
      },
    };
  }
  const e = signal.error;
  const lastError = { ...e, at: e.at.toISOString() };
  const last = w.lastError;
  if (last && last.at === lastError.at && last.providerCode === e.providerCode && last.title === e.title)
    return null;
  const whatsapp = { ...w, lastError };
  return {
    whatsapp,
    event: {
      type: 'channel.error',
      data: { whatsapp: numberView(whatsapp), error: lastError, nextStep: null },
    },
  };
}

/** Applies one signal to the account's channel; answers whether it changed it. */
export async function applyChannelSignal(
  s: { events: EventOutbox; jobs: Jobs },
  tx: Tx,
  accountId: string,
  signal: ChannelSignal,
): Promise<boolean> {
  const channel = await lockWhatsApp(tx, accountId);
  if (!channel) return false;
  const change = applied(channel.whatsapp, signal);
  if (!change) return false;
  await saveWhatsApp(tx, accountId, channel.row, change.whatsapp);
  await s.events.emit(tx, { ...change.event, accountId });
  if (signal.kind === 'number_quality') {
    const data: RefreshJobData = { accountId, phoneNumberId: channel.whatsapp.phoneNumberId };
    await s.jobs.enqueue(tx, CHANNEL_REFRESH_JOB, data);
  }
  return true;
}

/** What to do about a channel whose token Meta refuses. */
export const RECONNECT_STEP =
  'Meta refused the access token of this number (expired, revoked, or the app removed from the business): connect the number again, with Embedded Signup (POST /account/channel/embedded-signup) or PUT /account/channel with a new accessToken. Until then its messages fail.';

/**
 * A send was refused for the channel's token (Meta's 190): the channel needs reconnecting. Told
 * once (channel.error with `nextStep`), not once a refused message: the mark stays until the number
 * is saved again, which clears it.
 */
export async function noteTokenRefused(
  s: { events: EventOutbox },
  tx: Tx,
  accountId: string,
  error: { providerCode: number | null; message: string },
  at: Date,
): Promise<boolean> {
  const channel = await lockWhatsApp(tx, accountId);
  if (!channel || channel.whatsapp.needsReconnect) return false;
  const lastError = {
    providerCode: error.providerCode,
    title: 'Access token refused',
    message: error.message,
    details: null,
    at: at.toISOString(),
  };
  const whatsapp: WhatsAppSettings = {
    ...channel.whatsapp,
    needsReconnect: { since: lastError.at, providerCode: error.providerCode, message: error.message },
    lastError,
  };
  await saveWhatsApp(tx, accountId, channel.row, whatsapp);
  await s.events.emit(tx, {
    type: 'channel.error',
    accountId,
    data: { whatsapp: numberView(whatsapp), error: lastError, nextStep: RECONNECT_STEP },
  });
  return true;
}

interface RefreshDeps {
  db: Database;
  events: EventOutbox;
  channels: Channels;
}

/**
 * Reads the number from Meta again (quality rating, messaging limit tier, throughput) after a
 * quality signal. A rating that moved is a channel.quality_changed of its own (`event:
 * QUALITY_RATING`). Meta unreachable: the job is tried again; the number changed meanwhile (the
 * channel saved anew, which reads it too): nothing to do.
 */
export async function refreshNumber(d: RefreshDeps, data: RefreshJobData): Promise<void> {
  const { rows } = await d.db.query<ChannelRow>(
    'SELECT provider, settings, secrets_sealed, updated_at FROM account_channels WHERE account_id = $1',
    [data.accountId],
  );
  const config = toChannelConfig(rows[0] ?? null);
  if (config.provider !== 'whatsapp_cloud' || config.whatsapp?.phoneNumberId !== data.phoneNumberId) return;
  const read = await d.channels
    .whatsapp(config.whatsapp, d.channels.secretsOf(config).accessToken)
    .fetchPhoneNumber();
  if (!read.ok) {
    if (read.retryable) throw new Error(`reading the number from Meta failed: ${read.error.code}`);
    return;
  }
  await d.db.transaction(async (tx) => {
    const channel = await lockWhatsApp(tx, data.accountId);
    if (!channel || channel.whatsapp.phoneNumberId !== data.phoneNumberId) return;
    const before = channel.whatsapp;
    const whatsapp: WhatsAppSettings = {
      ...before,
      qualityRating: read.qualityRating,
      messagingLimitTier: read.messagingLimitTier ?? before.messagingLimitTier ?? null,
      // A coexistence number keeps Meta's fixed 20 a second, whatever its level reads.
      throughputPerSecond:
        before.onboarding?.mode === 'coexistence'
          ? before.throughputPerSecond
          : throughputOf(read.throughputLevel),
    };
    await saveWhatsApp(tx, data.accountId, channel.row, whatsapp);
    if ((before.qualityRating ?? null) === whatsapp.qualityRating) return;
    await d.events.emit(tx, {
      type: 'channel.quality_changed',
      accountId: data.accountId,
      data: {
        whatsapp: numberView(whatsapp),
        event: 'QUALITY_RATING',
        previousQualityRating: before.qualityRating ?? null,
        previousMessagingLimitTier: before.messagingLimitTier ?? null,
        at: new Date().toISOString(),
      },
    });
  });
}

export function channelRefreshJob(d: RefreshDeps): JobDefinition<RefreshJobData> {
  return {
    name: CHANNEL_REFRESH_JOB,
    retryLimit: 5,
    retryDelaySeconds: 30,
    expireInSeconds: 60,
    handle: (data) => refreshNumber(d, data),
  };
}
