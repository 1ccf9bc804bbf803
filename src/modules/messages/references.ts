// The earlier message a send names: the one a reaction goes on, or the one a reply quotes. WhatsApp
// names messages by its own id (the wamid), so a live send needs the one the message has; and it
// shows reactions and quotes only inside the chat they belong to, on messages it still has.
//   - not a message of the account → 400 (another account's ids are unknown here);
//   - of another chat (none of its addresses nor its contact's is `to`) → 400;
//   - a reaction on a reaction, or on a message older than 30 days (WhatsApp drops those) → 400;
//   - a live send naming a message without the provider's id (not handed over yet, or carried by
//     another channel) → 400. The sandbox stores whatever id the message has.
import type { Provider } from '../../channels/types.ts';
import type { Sql } from '../../kernel/database/db.ts';
import type { FieldIssue } from '../../kernel/http/errors.ts';

/** WhatsApp takes no reaction to a message older than this. */
const REACTION_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

export interface ReferencedMessage {
  id: string;
  type: string;
  /**
   * The chat's addresses: the message's number and user id, and its contact's (a contact's number
   * may differ from the message's: WhatsApp's wa_id; a customer may be written to by either).
   */
  addresses: string[];
  provider: Provider;
  providerMessageId: string | null;
  createdAt: Date;
}

/** How a send finds the messages it names: in its account, for the provider it goes through. */
export interface MessageReferences {
  provider: Provider;
  now: Date;
  find(id: string): Promise<ReferencedMessage | null>;
}

export function messageReferences(
  sql: Sql,
  accountId: string,
  provider: Provider,
  now: Date,
): MessageReferences {
  return {
    provider,
    now,
    async find(id) {
      const { rows } = await sql.query<{
        id: string;
        type: string;
        addresses: (string | null)[];
        provider: Provider;
        provider_message_id: string | null;
        created_at: Date;
      }>(
        `SELECT m.id, m.type, ARRAY[m.phone, m.whatsapp_user_id, c.phone, c.whatsapp_user_id] AS addresses,
                m.provider, m.provider_message_id, m.created_at
           FROM messages m LEFT JOIN contacts c ON c.account_id = m.account_id AND c.id = m.contact_id
          WHERE m.account_id = $1 AND m.id = $2`,
        [accountId, id],
      );
      const r = rows[0];
      if (!r) return null;
      return {
        id: r.id,
        type: r.type,
        addresses: r.addresses.filter((a): a is string => a !== null),
        provider: r.provider,
        providerMessageId: r.provider_message_id,
        createdAt: new Date(r.created_at),
      };
    },
  };
}

/**
 * The message `id` names for a send to `to`, or the problem with it (added to `issues`). `field`
 * is where the id was given (reaction.messageId, context.messageId).
 */
export async function referencedMessage(
  refs: MessageReferences,
  id: string,
  to: string,
  field: string,
  use: 'reaction' | 'quote',
  issues: FieldIssue[],
): Promise<{ messageId: string; providerMessageId: string | null } | null> {
  const found = await refs.find(id);
  const problem = (issue: string) => {
    issues.push({ field, issue });
    return null;
  };
  if (!found) return problem('is not a message of this account');
  if (!found.addresses.includes(to))
    return problem(`is a message of another chat (${found.addresses[0]}), not of ${to}`);
  if (use === 'reaction') {
    if (found.type === 'reaction') return problem('is a reaction: react to the message itself');
    if (refs.now.getTime() - found.createdAt.getTime() > REACTION_MAX_AGE_MS)
      return problem('is older than 30 days: WhatsApp takes no reaction to it');
  }
  if (refs.provider !== 'sandbox') {
    if (found.provider !== refs.provider)
      return problem(`went through the ${found.provider} channel, not ${refs.provider}`);
    if (!found.providerMessageId)
      return problem('has no WhatsApp message id yet (not handed over): wait for it to be sent');
  }
  return { messageId: found.id, providerMessageId: found.providerMessageId };
}
