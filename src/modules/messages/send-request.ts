// One send on behalf of an HTTP request: POST /messages, and a reply in a conversation
// (POST /conversations/{id}/messages), which is the same send to the conversation's contact; with
// `sendAt`, either is scheduled instead (schedule.ts).

import type { FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import type { Channels } from '../../channels/registry.ts';
import { providerFor } from '../../channels/registry.ts';
import { accountOf } from '../../kernel/access/access.ts';
import type { KernelContext } from '../../kernel/context.ts';
import type { MediaStore } from '../media/index.ts';
import type { PriceTable } from '../pricing/index.ts';
import type { ApprovedTemplates } from '../templates/index.ts';
import { acceptMessage } from './accept.ts';
import type { AcceptQueue } from './accept-queue.ts';
import { prepareMessage, templateLookup } from './prepare.ts';
import { resolveRecipient } from './recipient.ts';
import { messageReferences } from './references.ts';
import { scheduleMessage, sendTimeOf } from './schedule.ts';
import type { SendMessageBody } from './schemas.ts';
import { toMessage } from './view.ts';

/** The kernel's context and the services this file uses. */
export interface SendContext extends KernelContext {
  approvedTemplates: ApprovedTemplates;
  media: MediaStore;
  prices: PriceTable;
  acceptQueue: AcceptQueue;
  channels: Channels;
}

/** Prepares, prices and accepts the message; throws the refusal (400, 402, 404, 422) as the API error. */
export async function sendForRequest(
  ctx: SendContext,
  request: FastifyRequest,
  body: Static<typeof SendMessageBody>,
): Promise<ReturnType<typeof toMessage>> {
  const account = accountOf(request);
  const { to, contactId, whatsappUserId, sendAt, ...fields } = body;
  // Checked before the body: a time out of range is refused whatever else the send holds.
  const at = sendTimeOf(sendAt, ctx.now());
  const recipient = await resolveRecipient(ctx.db, account.id, { to, contactId, whatsappUserId });
  const prepared = await prepareMessage(
    { ...fields, ...recipient },
    {
      countryCode: account.countryCode,
      lookup: templateLookup(ctx.db, account.id, ctx.approvedTemplates),
      media: (id) => ctx.media.forSend(account.id, id),
      // A reaction or a quote names a message of this chat, by the id of the provider it goes through.
      references: messageReferences(
        ctx.db,
        account.id,
        providerFor(account.channelProvider, request.principal!.mode),
        ctx.now(),
      ),
    },
  );
  const sender = {
    account,
    mode: request.principal!.mode,
    idempotencyKey: request.idempotency?.key ?? null,
  };
  // Send later: stored scheduled, decided (window, price) when it goes (schedule.ts).
  const accepted = at
    ? await scheduleMessage(ctx, sender, prepared, at)
    : await acceptMessage(ctx, sender, prepared);
  if (accepted.kind === 'refused') throw accepted.error;
  return toMessage(accepted.message);
}
