// Provider callbacks, whichever provider sends them: checked with the provider's CallbackAdapter
// (channels/types.ts) against the right secret, read into batches of updates by destination, each
// batch checked against (or routed to) the account whose channel has that number, and applied
// through apply.ts. Routes (whatsapp-routes.ts) only turn HTTP into a CallbackRequest and back.
//
// A batch for a number that is not the account's (a payload for another phone_number_id, signed
// with the same Meta app secret, posted to this account's URL) stores nothing: it is logged,
// counted (tidings_callback_entries_dropped_total) and the callback still answers 200, since the
// provider would otherwise retry it for days.
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../../app-context.ts';
import {
  type CallbackAdapter,
  type CallbackBatch,
  type CallbackDestination,
  type CallbackRequest,
  type Provider,
  UnreadableCallback,
} from '../../channels/types.ts';
import { ApiError, notFound } from '../../kernel/errors.ts';
import { loadChannel } from '../channel/repo.ts';
import type { ChannelConfig, WhatsAppSettings } from '../channel/settings.ts';
import { applyProviderUpdates } from './apply.ts';

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

function adapterFor(ctx: AppContext, provider: Provider): CallbackAdapter {
  const adapter = ctx.channels.callbacks(provider);
  if (!adapter) throw notFound(`${provider} callbacks`);
  return adapter;
}

/** The account's WhatsApp channel and the secrets its callbacks are signed with, or 404. */
async function accountChannel(ctx: AppContext, accountId: string): Promise<AccountCallbackChannel> {
  const channel: ChannelConfig | null = /^acc_[0-9a-z]{26}$/.test(accountId)
    ? await loadChannel(ctx.db, accountId)
    : null;
  if (channel?.provider !== 'whatsapp_cloud' || !channel.whatsapp || !channel.secretsSealed) {
    throw notFound('WhatsApp channel for this account');
  }
  const { appSecret, verifyToken } = ctx.channels.secretsOf(channel);
  return { whatsapp: channel.whatsapp, appSecret, verifyToken };
}

/** Meta's subscription handshake on an account's URL: the challenge to echo, or 403. */
export async function answerAccountHandshake(
  ctx: AppContext,
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

function logUnknown(log: FastifyBaseLogger, provider: Provider, accountId: string, batches: CallbackBatch[]) {
  for (const batch of batches) {
    for (const u of batch.updates) {
      if (u.kind === 'unknown') log.info({ accountId, provider, field: u.field }, 'callback field ignored');
    }
  }
}

/** A callback posted to an account's own URL: verified with its channel's app secret, applied to it. */
export async function receiveAccountCallback(
  ctx: AppContext,
  provider: Provider,
  accountId: string,
  request: CallbackRequest,
  log: FastifyBaseLogger,
): Promise<CallbackOutcome> {
  const adapter = adapterFor(ctx, provider);
  const channel = await accountChannel(ctx, accountId);
  if (!adapter.verify(request, channel.appSecret)) {
    const header = request.headers[adapter.signatureHeader];
    log.warn(
      { accountId, provider, reason: header ? 'mismatch' : 'missing', bytes: request.rawBody.length },
      `callback refused: bad ${adapter.signatureHeader}`,
    );
    throw new ApiError('INVALID_SIGNATURE');
  }
  const batches = batchesOf(adapter, request);
  logUnknown(log, provider, accountId, batches);
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
