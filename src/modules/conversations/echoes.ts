// What the business sent from the WhatsApp Business app of a coexistence number, as Meta echoes it
// (smb_message_echoes): stored as the business's outbound message, `source: "business_app"`, in
// the customer's open conversation (or, with none open, adopted by the next one, as a send is).
// Never dispatched and never charged: Meta sent it already, and messages from the app are free.
// The customer's window does not move (only the customer writing opens it). A contact the app
// wrote to for the first time is made, as a send to a new number makes one. An echo repeated
// (Meta retries a webhook) is stored once, by its wamid.
import type { BusinessEcho } from '../../channels/types.ts';
import type { EventInput } from '../../kernel/outbox/events.ts';
import { newId } from '../../kernel/values/ids.ts';
import { customerContact } from '../contacts/index.ts';
import { findByProviderId, insertEcho, recordFirstResponse, toMessage } from '../messages/index.ts';
import { findOpenConversation } from './repo.ts';
import type { ConversationServices } from './service.ts';

/** Stores the echoes in one transaction; answers how many were new. */
export async function recordEchoes(
  s: ConversationServices,
  accountId: string,
  echoes: BusinessEcho[],
): Promise<number> {
  if (echoes.length === 0) return 0;
  // One customer's echoes in the order sent; customers in a fixed order (contacts lock in it).
  const order = [...echoes].sort(
    (a, b) =>
      (a.toUserId ?? a.to ?? '').localeCompare(b.toUserId ?? b.to ?? '') ||
      a.sentAt.getTime() - b.sentAt.getTime(),
  );
  return s.db.transaction(async (tx) => {
    const events: EventInput[] = [];
    let fresh = 0;
    const now = s.now();
    for (const echo of order) {
      if (await findByProviderId(tx, accountId, echo.providerMessageId)) continue;
      const who = {
        phone: echo.to,
        waId: echo.to?.replace(/\D/g, '') ?? null,
        userId: echo.toUserId,
        parentUserId: null,
        username: null,
      };
      const { contact } = await customerContact(s, tx, accountId, who, { name: null, now }, events);
      const open = await findOpenConversation(tx, accountId, contact.id);
      const message = await insertEcho(tx, {
        id: newId('message'),
        accountId,
        contactId: contact.id,
        conversationId: open?.id ?? null,
        type: echo.type,
        phone: contact.phone,
        whatsappUserId: echo.toUserId ?? contact.whatsapp_user_id,
        content: echo.content,
        providerMessageId: echo.providerMessageId,
        now,
        sentAt: echo.sentAt,
      });
      if (!message) continue;
      if (open) {
        // The business answered, from its phone: the conversation's last message, nothing unread,
        // a reply (sla.ts).
        await tx.query(
          `UPDATE conversations SET last_message_at = greatest(last_message_at, $3), last_message_id = $4,
                  unread_count = 0, updated_at = $3
            WHERE account_id = $1 AND id = $2`,
          [accountId, open.id, now, message.id],
        );
        await recordFirstResponse(tx, accountId, open.id, now);
      }
      events.push({ type: 'message.sent', accountId, data: toMessage(message) });
      fresh++;
    }
    await s.events.emitMany(tx, events);
    return fresh;
  });
}
