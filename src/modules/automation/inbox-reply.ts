// A message the business's inbox sends by itself (business hours' away message and greeting, a
// satisfaction survey and its follow-ups): through the send path, as a rule's send_message goes
// (its window rule, price, charge and refusals), in the caller's transaction, marked
// `source: automation`, at most once per idempotency key.
import type { Tx } from '../../kernel/database/db.ts';
import { type ContactRow, recipientOf } from '../contacts/index.ts';
import {
  acceptBatch,
  type MessageFieldsInput,
  placeInConversation,
  prepareMessage,
  type SendResult,
  templateLookup,
} from '../messages/index.ts';
import type { AccountActor } from './actors.ts';
import { type EffectServices, joinTransaction } from './run-actions.ts';

/**
 * Sends `message` to the contact; answers its id when it was accepted (`sent` gets it, for the
 * dispatchers), else null. `conversationId`: the (closed) conversation it belongs to.
 */
export async function sendInboxReply(
  s: EffectServices,
  tx: Tx,
  to: { actor: AccountActor & { mode: 'live' | 'sandbox' }; contact: ContactRow },
  message: MessageFieldsInput,
  idempotencyKey: string,
  sent: SendResult[],
  conversationId?: string,
): Promise<string | null> {
  const { actor, contact } = to;
  const prepared = await prepareMessage(
    { ...message, ...recipientOf(contact) },
    { countryCode: actor.countryCode, lookup: templateLookup(tx, actor.accountId, s.approvedTemplates) },
  );
  const [result] = await acceptBatch({ ...s, db: joinTransaction(tx, s.db) }, tx, [
    {
      sender: {
        account: { id: actor.accountId, channelProvider: actor.channelProvider },
        mode: actor.mode,
        idempotencyKey,
        automated: true,
      },
      message: prepared,
    },
  ]);
  if (result!.kind !== 'accepted') return null;
  sent.push(result!);
  const id = result!.message.id;
  if (conversationId) await placeInConversation(tx, actor.accountId, [id], conversationId);
  return id;
}
