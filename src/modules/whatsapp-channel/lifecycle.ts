// A connected number's life after its connection: disconnected (DELETE /account/channel), moved to
// another account of the same partner (POST /partner/accounts/{id}/channel/move), and marked for
// reconnection when Meta refuses its token (a send answered 190).
//
// Disconnecting releases at Meta what Tidings took there, and only that: a number Tidings
// registered (Embedded Signup, mode cloud_api) is deregistered, so that another provider may
// register it; the partner's app is unsubscribed from the WABA once no other channel uses the WABA.
// A number connected with a token the business gave (PUT) is only forgotten: Tidings did not
// register it and does not know what else uses it. A coexistence number cannot be deregistered
// (Meta: it stays on the Business app). History (messages, contacts, conversations) stays.
import type { Channels } from '../../channels/registry.ts';
import { DEFAULT_SANDBOX, type WhatsAppSettings } from '../../channels/settings.ts';
import type { GraphFailure } from '../../channels/whatsapp-cloud/onboarding.ts';
import type { Database, Tx } from '../../kernel/database/db.ts';
import { ApiError, conflict } from '../../kernel/http/errors.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import { loadChannel, lockChannelRow, saveChannel, toChannelConfig } from './repo.ts';
import { numberView } from './signals.ts';

export interface LifecycleServices {
  db: Database;
  channels: Channels;
  events: EventOutbox;
  now: () => Date;
}

/** What Meta was asked when a number was disconnected, and what it answered. */
export interface Release {
  phoneNumberId: string;
  deregistered: boolean;
  unsubscribed: boolean;
  /** Meta refused a step (the number is forgotten here all the same): which, and what it said. */
  metaError: {
    step: 'deregister_number' | 'unsubscribe_app';
    providerCode: number | null;
    message: string;
  } | null;
}

const lockChannel = async (tx: Tx, accountId: string) => toChannelConfig(await lockChannelRow(tx, accountId));

/** Whether another account's channel uses the WABA: the app's subscription serves it too. */
async function wabaShared(db: Database, businessAccountId: string, accountId: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM account_channels
      WHERE business_account_id = $1 AND provider = 'whatsapp_cloud' AND account_id <> $2 LIMIT 1`,
    [businessAccountId, accountId],
  );
  return rows.length > 0;
}

function unavailable(step: string, f: GraphFailure): ApiError {
  return new ApiError(
    'SERVICE_UNAVAILABLE',
    `Meta could not be asked to ${step} (${f.message}); nothing was changed. Retry shortly.`,
    { headers: { 'retry-after': String(f.retryAfterSeconds ?? 30) } },
  );
}

/** Releases at Meta what Tidings took there; throws 503 (nothing changed) when Meta cannot be reached. */
async function releaseAtMeta(
  s: LifecycleServices,
  accountId: string,
  w: WhatsAppSettings,
  accessToken: string,
): Promise<Release> {
  const release: Release = {
    phoneNumberId: w.phoneNumberId,
    deregistered: false,
    unsubscribed: false,
    metaError: null,
  };
  if (w.onboarding?.via !== 'embedded_signup') return release;
  const meta = s.channels.whatsappOnboarding();
  if (w.onboarding.mode === 'cloud_api') {
    const done = await meta.deregister(accessToken, w.phoneNumberId);
    if (!done.ok && done.retry) throw unavailable('deregister the number', done);
    if (done.ok) release.deregistered = true;
    else
      release.metaError = { step: 'deregister_number', providerCode: done.metaCode, message: done.message };
  }
  if (!(await wabaShared(s.db, w.businessAccountId, accountId))) {
    const done = await meta.unsubscribeApp(accessToken, w.businessAccountId);
    if (!done.ok && done.retry) throw unavailable("unsubscribe the app from the number's WABA", done);
    if (done.ok) release.unsubscribed = true;
    else
      release.metaError ??= { step: 'unsubscribe_app', providerCode: done.metaCode, message: done.message };
  }
  return release;
}

/** DELETE /account/channel: the number released and forgotten, the account back on the sandbox. */
export async function disconnectChannel(s: LifecycleServices, accountId: string) {
  const channel = await loadChannel(s.db, accountId);
  if (channel.provider !== 'whatsapp_cloud' || !channel.whatsapp) {
    throw conflict('The account has no WhatsApp number connected: its channel is the sandbox.');
  }
  const w = channel.whatsapp;
  const release = await releaseAtMeta(s, accountId, w, s.channels.secretsOf(channel).accessToken);
  const now = s.now();
  const after = await s.db.transaction(async (tx) => {
    const locked = await lockChannel(tx, accountId);
    // Changed meanwhile (another number saved): that one stays.
    if (locked.whatsapp?.phoneNumberId !== w.phoneNumberId) return locked;
    const saved = await saveChannel(
      tx,
      accountId,
      {
        provider: 'sandbox',
        sandbox: locked.sandbox ?? DEFAULT_SANDBOX,
        whatsapp: null,
        secretsSealed: null,
      },
      now,
    );
    await s.events.emit(tx, {
      type: 'channel.disconnected',
      accountId,
      data: {
        whatsapp: numberView(w),
        reason: 'disconnected',
        deregistered: release.deregistered,
        unsubscribed: release.unsubscribed,
      },
    });
    return saved;
  });
  return { channel: after, release };
}

/**
 * Moves a partner's number from one of its accounts to another: the channel (ids, settings, sealed
 * token) and its onboarding go over in one transaction; Meta is not asked anything (same number,
 * same token, same app), and its callbacks reach the new account from then on, since they are
 * routed by the number. History stays with the account it happened in.
 */
export async function moveChannel(
  s: Pick<LifecycleServices, 'db' | 'events' | 'now'>,
  fromAccountId: string,
  toAccountId: string,
) {
  const now = s.now();
  return s.db.transaction(async (tx) => {
    // Both rows locked in one order, whichever way a move goes.
    const [first, second] = [fromAccountId, toAccountId].sort();
    await tx.query(
      'SELECT account_id FROM account_channels WHERE account_id = ANY($1) ORDER BY account_id FOR UPDATE',
      [[first, second]],
    );
    const from = await lockChannel(tx, fromAccountId);
    const to = await lockChannel(tx, toAccountId);
    if (from.provider !== 'whatsapp_cloud' || !from.whatsapp) {
      throw conflict('The account has no WhatsApp number to move: its channel is the sandbox.');
    }
    if (to.provider === 'whatsapp_cloud' && to.whatsapp) {
      throw conflict('The target account has a WhatsApp number already: disconnect it first.', [
        { field: 'toAccountId', issue: 'has a WhatsApp number connected' },
      ]);
    }
    const w = from.whatsapp;
    const moved = await saveChannel(
      tx,
      toAccountId,
      { provider: 'whatsapp_cloud', sandbox: to.sandbox, whatsapp: w, secretsSealed: from.secretsSealed },
      now,
    );
    await saveChannel(
      tx,
      fromAccountId,
      { provider: 'sandbox', sandbox: from.sandbox, whatsapp: null, secretsSealed: null },
      now,
    );
    await tx.query('DELETE FROM channel_onboardings WHERE account_id = $1 AND phone_number_id = $2', [
      toAccountId,
      w.phoneNumberId,
    ]);
    await tx.query(
      'UPDATE channel_onboardings SET account_id = $2 WHERE account_id = $1 AND phone_number_id = $3',
      [fromAccountId, toAccountId, w.phoneNumberId],
    );
    await s.events.emit(tx, {
      type: 'channel.disconnected',
      accountId: fromAccountId,
      data: {
        whatsapp: numberView(w),
        reason: 'moved',
        toAccountId,
        deregistered: false,
        unsubscribed: false,
      },
    });
    await s.events.emit(tx, {
      type: 'channel.connected',
      accountId: toAccountId,
      data: { whatsapp: numberView(w), via: 'moved', fromAccountId, mode: w.onboarding?.mode ?? null },
    });
    return moved;
  });
}
