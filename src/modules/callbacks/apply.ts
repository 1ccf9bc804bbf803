// What a provider reported, applied to one account, whichever provider reported it: the
// ProviderUpdates a channel adapter parsed from a verified callback. Each kind goes to the module
// that owns what it changes:
//   - message statuses → messages/status.ts (with what the provider says of the recipient, its
//     number's wa_id, user id and username, remembered on the contact first: contacts/identity.ts);
//   - template statuses → templates/service.ts;
//   - customers' messages → conversations/inbound.ts (and their files → media/service.ts);
//   - played voice messages → messages/played.ts;
//   - marketing preferences → contacts/marketing-preference.ts;
//   - a customer's changed number or user id (system messages) → contacts/identity.ts;
//   - the number's quality, the account's updates and errors → whatsapp-channel/signals.ts;
//   - a coexistence number's Business app: what the business sent from it → conversations/echoes.ts,
//     its address book → contacts/app-contacts.ts, its chat history → conversations/history-import.ts
//     (stored here, imported by a job) with its progress → whatsapp-channel/coexistence-sync.ts.
// Statuses and template updates are one transaction; customers' messages another. Either part may
// be repeated (a provider retries a callback that failed half-way): statuses only move forward and
// a stored message id is not stored again, so a repeat changes nothing.
import type { ProviderUpdate } from '../../channels/types.ts';
import type { Tx } from '../../kernel/database/db.ts';
import type { Jobs } from '../../kernel/jobs/jobs.ts';
import {
  applyAppContacts,
  applyIdentityChange,
  applyMarketingPreference,
  rememberIdentities,
} from '../contacts/index.ts';
import type { ConversationServices } from '../conversations/index.ts';
import { receiveInbound, recordEchoes, storeHistoryChunk } from '../conversations/index.ts';
import type { MediaStore } from '../media/index.ts';
import { applyStatuses, contactIdsOf, notePlayed, type TargetedChange } from '../messages/index.ts';
import type { ApprovedTemplates } from '../templates/index.ts';
import { applyTemplateCategory, applyTemplateQuality, applyTemplateStatus } from '../templates/index.ts';
import { applyChannelSignal, isChannelSignal, noteHistory } from '../whatsapp-channel/index.ts';

export interface CallbackSource {
  accountId: string;
  provider: 'whatsapp_cloud';
}

export type CallbackServices = ConversationServices & {
  approvedTemplates: ApprovedTemplates;
  jobs: Jobs;
  /** Fetches the files of customers' messages (modules/media). */
  media?: Pick<MediaStore, 'fetchLater'>;
};

type StatusUpdate = Extract<ProviderUpdate, { kind: 'message_status' }>;

function changeOf(accountId: string, u: StatusUpdate): TargetedChange {
  return {
    // By our id where the provider echoes it: a message whose hand-over was cut off
    // (messages/dispatch.ts) has no provider id yet, and learns it here.
    target: u.messageId
      ? { accountId, id: u.messageId }
      : { accountId, providerMessageId: u.providerMessageId },
    change: {
      status: u.status,
      at: u.at,
      providerMessageId: u.providerMessageId,
      ...(u.error ? { error: u.error } : {}),
      ...(u.pricing ? { pricing: u.pricing } : {}),
      ...(u.conversation ? { conversation: u.conversation } : {}),
    },
  };
}

/** Statuses of messages and templates, in one transaction; answers how many changed something. */
async function applyStatusUpdates(
  s: CallbackServices,
  tx: Tx,
  accountId: string,
  updates: ProviderUpdate[],
): Promise<number> {
  const statuses = updates.filter((u): u is StatusUpdate => u.kind === 'message_status');
  const changes = statuses.map((u) => changeOf(accountId, u));
  // What Meta says of the recipient first: contacts are locked before messages, as inbound
  // processing does.
  const told = statuses.flatMap((u, i) =>
    u.recipientWaId || u.recipientUserId || u.recipientUsername ? [{ u, target: changes[i]!.target }] : [],
  );
  if (told.length > 0) {
    const contactIds = await contactIdsOf(
      tx,
      told.map((w) => w.target),
    );
    await rememberIdentities(
      s,
      tx,
      told.flatMap(({ u }, i) => {
        const contactId = contactIds[i];
        if (!contactId) return [];
        return [
          {
            accountId,
            contactId,
            waId: u.recipientWaId ?? null,
            userId: u.recipientUserId ?? null,
            parentUserId: u.recipientParentUserId ?? null,
            username: u.recipientUsername ?? null,
          },
        ];
      }),
    );
  }
  let applied = (await applyStatuses(s, tx, changes)).filter((r) => r !== null).length;
  for (const update of updates) {
    if (update.kind === 'template_status' && (await applyTemplateStatus(s, tx, accountId, update))) applied++;
    else if (update.kind === 'message_played' && (await notePlayed(tx, accountId, update))) applied++;
    else if (update.kind === 'marketing_preference') {
      const events = await applyMarketingPreference(s, tx, accountId, update);
      await s.events.emitMany(tx, events);
      if (events.length > 0) applied++;
    } else if (update.kind === 'identity_change') {
      const events = await applyIdentityChange(s, tx, accountId, update);
      await s.events.emitMany(tx, events);
      applied++;
    } else if (isChannelSignal(update) && (await applyChannelSignal(s, tx, accountId, update))) applied++;
    else if (update.kind === 'template_quality' && (await applyTemplateQuality(s, tx, accountId, update)))
      applied++;
    else if (update.kind === 'template_category' && (await applyTemplateCategory(s, tx, accountId, update)))
      applied++;
  }
  for (const update of updates) {
    if (update.kind === 'history_chunk' && (await storeHistoryChunk(s, tx, accountId, update.chunk)))
      applied++;
    else if (update.kind === 'history_declined') {
      const note = {
        status: 'declined' as const,
        providerCode: update.providerCode,
        message: update.message,
      };
      await noteHistory(tx, accountId, note, s.now());
      applied++;
    }
  }
  const appContacts = updates.flatMap((u) => (u.kind === 'app_contact' ? [u.contact] : []));
  if (appContacts.length > 0) {
    await s.events.emitMany(tx, await applyAppContacts(s, tx, accountId, appContacts));
    applied += appContacts.length;
  }
  return applied;
}

/** The updates applied in the statuses' transaction (all but customers' messages). */
const inStatusTransaction = (u: ProviderUpdate) =>
  u.kind !== 'inbound_message' && u.kind !== 'business_echo' && u.kind !== 'unknown';

/** Applies a callback's updates to the account; answers how many changed something or were new. */
export async function applyProviderUpdates(
  s: CallbackServices,
  source: CallbackSource,
  updates: ProviderUpdate[],
): Promise<number> {
  // Customers' messages alone (the usual callback) need no transaction for statuses.
  const reports = updates.some(inStatusTransaction);
  let applied = reports
    ? await s.db.transaction((tx) => applyStatusUpdates(s, tx, source.accountId, updates))
    : 0;
  const inbound = updates.flatMap((u) => (u.kind === 'inbound_message' ? [u.message] : []));
  if (inbound.length > 0) {
    const received = await receiveInbound(
      s,
      { accountId: source.accountId, provider: source.provider, sandbox: false },
      inbound,
    );
    const fresh = received.filter((r) => !r.duplicate);
    applied += fresh.length;
    // Their files are fetched by a job (a lost enqueue costs nothing: GET /messages/{id}/media
    // fetches a file not fetched yet).
    await s.media?.fetchLater(fresh.map((r) => r.message));
  }
  const echoes = updates.flatMap((u) => (u.kind === 'business_echo' ? [u.echo] : []));
  applied += await recordEchoes(s, source.accountId, echoes);
  return applied;
}
