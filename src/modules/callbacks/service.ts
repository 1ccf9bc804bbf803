// Provider callbacks, whichever provider sends them: checked with the provider's CallbackAdapter
// (channels/types.ts) against the right secret, read into batches of updates by destination, each
// batch checked against (or routed to) the account whose channel has that number, and applied
// through apply.ts. Routes (whatsapp-routes.ts) only turn HTTP into a CallbackRequest and back.
//
// Two URLs per provider:
// - an account's own (/whatsapp/{accountId}): verified with its channel's app secret (or, for a
//   channel without one, its partner's app's); a batch for a number that is not the account's (a
//   payload for another phone_number_id, signed with the same Meta app secret) stores nothing;
// - the app-level one (/whatsapp): Meta sends every client number's webhooks to a partner's one
//   app URL. The signature says which partner's app sent it (each partner's secret is tried), and
//   each batch goes to that partner's account whose channel has the number (and WABA) it names; a
//   template update names only a WABA and goes to every account of the partner on that WABA.
// A batch stored nowhere is logged, counted (tidings_callback_entries_dropped_total) and the
// callback still answers 200, since the provider would otherwise retry it for days.
import type { FastifyBaseLogger } from 'fastify';
import type { Channels } from '../../channels/registry.ts';
import type { ChannelConfig, WhatsAppSettings } from '../../channels/settings.ts';
import {
  type CallbackAdapter,
  type CallbackBatch,
  type CallbackDestination,
  type CallbackRequest,
  type Provider,
  type ProviderUpdate,
  UnreadableCallback,
} from '../../channels/types.ts';
import type { KernelContext } from '../../kernel/context.ts';
import { ApiError, notFound } from '../../kernel/http/errors.ts';
import type { MediaStore } from '../media/index.ts';
import type { ApprovedTemplates } from '../templates/index.ts';
import {
  allPartnerApps,
  type ChannelDestination,
  channelsOfPartner,
  loadChannel,
  partnerAppOfAccount,
} from '../whatsapp-channel/index.ts';
import { applyProviderUpdates } from './apply.ts';

/** The kernel's context and the services this file uses. */
export interface CallbacksContext extends KernelContext {
  approvedTemplates: ApprovedTemplates;
  channels: Channels;
  media: MediaStore;
}

export interface CallbackOutcome {
  /** Updates that changed something, and new messages stored. */
  applied: number;
  /** Batches stored nowhere (for another number). */
  dropped: number;
}

/** What an account's callbacks are checked against: its channel's number and its Meta app's secrets. */
interface AccountCallbackChannel {
  whatsapp: WhatsAppSettings;
  appSecret: string;
  verifyToken: string;
}

function adapterFor(ctx: CallbacksContext, provider: Provider): CallbackAdapter {
  const adapter = ctx.channels.callbacks(provider);
  if (!adapter) throw notFound(`${provider} callbacks`);
  return adapter;
}

/** The account's WhatsApp channel and the secrets its callbacks are signed with, or 404. */
async function accountChannel(ctx: CallbacksContext, accountId: string): Promise<AccountCallbackChannel> {
  const channel: ChannelConfig | null = /^acc_[0-9a-z]{26}$/.test(accountId)
    ? await loadChannel(ctx.db, accountId)
    : null;
  if (channel?.provider !== 'whatsapp_cloud' || !channel.whatsapp || !channel.secretsSealed) {
    throw notFound('WhatsApp channel for this account');
  }
  const own = ctx.channels.secretsOf(channel);
  // A channel without its own app secret is served by its partner's Meta app.
  const app =
    own.appSecret && own.verifyToken ? null : await partnerAppOfAccount(ctx.db, ctx.secrets, accountId);
  return {
    whatsapp: channel.whatsapp,
    // Empty: nothing verifies (the adapters refuse an empty secret or token).
    appSecret: own.appSecret ?? app?.appSecret ?? '',
    verifyToken: own.verifyToken ?? app?.verifyToken ?? '',
  };
}

/** Meta's subscription handshake on an account's URL: the challenge to echo, or 403. */
export async function answerAccountHandshake(
  ctx: CallbacksContext,
  provider: Provider,
  accountId: string,
  request: CallbackRequest,
  log: FastifyBaseLogger,
): Promise<string> {
  const adapter = adapterFor(ctx, provider);
  const channel = await accountChannel(ctx, accountId);
  const challenge = adapter.handshake(request, channel.verifyToken);
  if (challenge === null) {
    log.warn({ accountId, provider }, 'callback handshake refused: wrong verify token');
    throw new ApiError('FORBIDDEN', 'The verify token does not match the one configured for this channel.');
  }
  return challenge;
}

/** Why a batch for `destination` is not this channel's, or null when it is. */
function foreignTo(destination: CallbackDestination, whatsapp: WhatsAppSettings): string | null {
  if (destination.phoneNumberId !== null && destination.phoneNumberId !== whatsapp.phoneNumberId) {
    return 'other_number';
  }
  if (
    destination.businessAccountId !== null &&
    destination.businessAccountId !== whatsapp.businessAccountId
  ) {
    return 'other_business_account';
  }
  return null;
}

/** Reads a verified request; a body the provider would never send is a 400. */
function batchesOf(adapter: CallbackAdapter, request: CallbackRequest): CallbackBatch[] {
  try {
    return adapter.parse(request);
  } catch (err) {
    if (!(err instanceof UnreadableCallback)) throw err;
    throw new ApiError('INVALID_REQUEST', err.message, {
      details: [{ field: 'body', issue: 'is not valid JSON' }],
    });
  }
}

/** Logs what the provider sent that Tidings does not use (`about`: whose callback it was). */
function logUnknown(log: FastifyBaseLogger, about: Record<string, unknown>, batches: CallbackBatch[]) {
  for (const batch of batches) {
    for (const u of batch.updates) {
      if (u.kind === 'unknown') log.info({ ...about, field: u.field }, 'callback field ignored');
    }
  }
}

/** A refused signature, logged (whether the header was missing or wrong, never the secret). */
function badSignature(
  log: FastifyBaseLogger,
  adapter: CallbackAdapter,
  request: CallbackRequest,
  about: Record<string, unknown>,
): ApiError {
  const header = request.headers[adapter.signatureHeader];
  log.warn(
    { ...about, reason: header ? 'mismatch' : 'missing', bytes: request.rawBody.length },
    `callback refused: bad ${adapter.signatureHeader}`,
  );
  return new ApiError('INVALID_SIGNATURE');
}

/** A callback posted to an account's own URL: verified with its channel's app secret, applied to it. */
export async function receiveAccountCallback(
  ctx: CallbacksContext,
  provider: Provider,
  accountId: string,
  request: CallbackRequest,
  log: FastifyBaseLogger,
): Promise<CallbackOutcome> {
  const adapter = adapterFor(ctx, provider);
  const channel = await accountChannel(ctx, accountId);
  if (!adapter.verify(request, channel.appSecret))
    throw badSignature(log, adapter, request, { accountId, provider });
  const batches = batchesOf(adapter, request);
  logUnknown(log, { accountId, provider }, batches);
  let dropped = 0;
  const mine = batches.filter((batch) => {
    const reason = foreignTo(batch.destination, channel.whatsapp);
    if (reason === null) return true;
    dropped++;
    ctx.metrics.callbackEntriesDropped.inc({ provider, reason });
    log.warn(
      { accountId, provider, reason, ...batch.destination, updates: batch.updates.length },
      "callback entry for another number than the account's channel: nothing stored",
    );
    return false;
  });
  const applied = await applyProviderUpdates(
    ctx,
    { accountId, provider: 'whatsapp_cloud' },
    mine.flatMap((b) => b.updates),
  );
  return { applied, dropped };
}

/** Meta's subscription handshake on the app-level URL: the challenge, if some partner's app has that verify token. */
export async function answerAppHandshake(
  ctx: CallbacksContext,
  provider: Provider,
  request: CallbackRequest,
  log: FastifyBaseLogger,
): Promise<string> {
  const adapter = adapterFor(ctx, provider);
  for (const app of await allPartnerApps(ctx.db, ctx.secrets)) {
    const challenge = adapter.handshake(request, app.verifyToken);
    if (challenge !== null) return challenge;
  }
  log.warn({ provider }, "app callback handshake refused: no partner's app has that verify token");
  throw new ApiError('FORBIDDEN', "The verify token is not that of any partner's app.");
}

/** Where a batch goes among the partner's channels: the accounts, or why none. */
export function routeBatch(
  batch: CallbackBatch,
  channels: ChannelDestination[],
): { accountIds: string[] } | { reason: 'unknown_number' | 'ambiguous' } {
  const { phoneNumberId, businessAccountId } = batch.destination;
  if (phoneNumberId !== null) {
    const found = channels.filter(
      (c) =>
        c.phoneNumberId === phoneNumberId &&
        (businessAccountId === null || c.businessAccountId === businessAccountId),
    );
    if (found.length === 1) return { accountIds: [found[0]!.accountId] };
    return { reason: found.length === 0 ? 'unknown_number' : 'ambiguous' };
  }
  const found =
    businessAccountId === null ? [] : channels.filter((c) => c.businessAccountId === businessAccountId);
  if (found.length === 0) return { reason: 'unknown_number' };
  // A template belongs to the WABA, and each account on it keeps its own copy: the update goes to
  // all of them. Messages without a number can only go where there is one account to go to.
  // So do the number's quality and the account's updates, which name no phone number id: each
  // account applies those that name its own number (whatsapp-channel/signals.ts).
  const wabaWide = batch.updates.every(
    (u) =>
      u.kind === 'template_status' ||
      u.kind === 'template_quality' ||
      u.kind === 'template_category' ||
      u.kind === 'number_quality' ||
      u.kind === 'account_update' ||
      u.kind === 'unknown',
  );
  return wabaWide || found.length === 1
    ? { accountIds: found.map((c) => c.accountId) }
    : { reason: 'ambiguous' };
}

/** A callback posted to the app-level URL: verified with the partner's app secret, routed by number. */
export async function receiveAppCallback(
  ctx: CallbacksContext,
  provider: Provider,
  request: CallbackRequest,
  log: FastifyBaseLogger,
): Promise<CallbackOutcome> {
  const adapter = adapterFor(ctx, provider);
  const app = (await allPartnerApps(ctx.db, ctx.secrets)).find((a) => adapter.verify(request, a.appSecret));
  if (!app) throw badSignature(log, adapter, request, { provider, url: 'app' });
  const batches = batchesOf(adapter, request);
  logUnknown(log, { partnerId: app.partnerId, provider }, batches);
  const ids = (key: keyof CallbackDestination) => [
    ...new Set(batches.flatMap((b) => (b.destination[key] === null ? [] : [b.destination[key]!]))),
  ];
  const channels = await channelsOfPartner(
    ctx.db,
    app.partnerId,
    ids('phoneNumberId'),
    ids('businessAccountId'),
  );
  const byAccount = new Map<string, ProviderUpdate[]>();
  let dropped = 0;
  for (const batch of batches) {
    const known = batch.updates.filter((u) => u.kind !== 'unknown');
    if (known.length === 0) continue;
    const route = routeBatch(batch, channels);
    if ('reason' in route) {
      dropped++;
      ctx.metrics.callbackEntriesDropped.inc({ provider, reason: route.reason });
      log.warn(
        {
          partnerId: app.partnerId,
          provider,
          reason: route.reason,
          ...batch.destination,
          updates: known.length,
        },
        "app callback entry for no account of the partner's: nothing stored",
      );
      continue;
    }
    for (const accountId of route.accountIds)
      byAccount.set(accountId, [...(byAccount.get(accountId) ?? []), ...known]);
  }
  let applied = 0;
  for (const [accountId, updates] of byAccount) {
    applied += await applyProviderUpdates(ctx, { accountId, provider: 'whatsapp_cloud' }, updates);
  }
  return { applied, dropped };
}
