// The webhook fields of a number on the WhatsApp Business app too (coexistence; Meta's
// "Onboard WhatsApp Business app users", docs/history/issue-46-meta.md § 9):
//   smb_message_echoes  value.message_echoes[]: what the business sent from the app ({from: the
//                       business, to: the customer, id, timestamp, type, …}, `to_user_id` since
//                       usernames); `edit` and `revoke` are kept whole as unsupported content;
//   smb_app_state_sync  value.state_sync[]: {type: contact, contact: {full_name, first_name,
//                       phone_number, user_id, username}, action: add|remove, metadata: {timestamp}}.
// Like callbacks.ts, parsing never throws: what cannot be read comes back as `unknown`, to be logged.
import { fromProviderDigits } from '../../kernel/values/phones.ts';
import { providerUserId, usernameFrom } from '../../kernel/values/whatsapp-user-ids.ts';
import type { ProviderUpdate } from '../types.ts';
import { parseContent } from './inbound.ts';
import { isRecord, type Json, records, unixSeconds } from './json.ts';

const text = (value: unknown) => (typeof value === 'string' && value ? value : null);

export function echoesChange(value: Json): ProviderUpdate[] {
  const echoes = records(value.message_echoes);
  if (echoes.length === 0) return [{ kind: 'unknown', field: 'smb_message_echoes', raw: value }];
  return echoes.map((echo): ProviderUpdate => {
    const unknown: ProviderUpdate = { kind: 'unknown', field: 'smb_message_echoes', raw: echo };
    try {
      const id = text(echo.id);
      const to = fromProviderDigits(echo.to);
      const toUserId = providerUserId(echo.to_user_id);
      const sentAt = unixSeconds(echo.timestamp);
      if (!id || (!to && !toUserId) || !sentAt) return unknown;
      const providerType = text(echo.type) ?? '';
      const parsed = parseContent(providerType, echo) ?? {
        type: 'unsupported' as const,
        content: { unsupported: { providerType, raw: echo } },
      };
      return {
        kind: 'business_echo',
        echo: { providerMessageId: id, to, toUserId, sentAt, type: parsed.type, content: parsed.content },
      };
    } catch {
      return unknown;
    }
  });
}

export function appStateChange(value: Json, entryTime: unknown): ProviderUpdate[] {
  const syncs = records(value.state_sync);
  if (syncs.length === 0) return [{ kind: 'unknown', field: 'smb_app_state_sync', raw: value }];
  return syncs.map((sync): ProviderUpdate => {
    const contact = isRecord(sync.contact) ? sync.contact : null;
    const action = sync.action === 'add' || sync.action === 'remove' ? sync.action : null;
    const phone = contact ? fromProviderDigits(contact.phone_number) : null;
    const userId = contact ? providerUserId(contact.user_id) : null;
    if (sync.type !== 'contact' || !contact || !action || (!phone && !userId))
      return { kind: 'unknown', field: 'smb_app_state_sync', raw: sync };
    const metadata = isRecord(sync.metadata) ? sync.metadata : {};
    return {
      kind: 'app_contact',
      contact: {
        action,
        phone,
        userId,
        username: usernameFrom(contact.username),
        fullName: text(contact.full_name) ?? text(contact.first_name),
        at: unixSeconds(metadata.timestamp) ?? unixSeconds(entryTime) ?? new Date(),
      },
    };
  });
}
