// The shapes the inbox shows, as the SDK types them.
import type { ItemOf } from '@tidings/sdk';

export type Conversation = ItemOf<'/api/v1/public/conversations'>;
export type Message = ItemOf<'/api/v1/public/conversations/{id}/messages'>;
export type Member = ItemOf<'/api/v1/public/team/members'>;

/** A message's words as a line of text (the bubble and the list's last message). */
export function messageText(m: Message): string {
  if (m.text) return m.text;
  if (m.template) return m.template.body;
  if (m.media)
    return m.media.caption || `[${m.media.kind}${m.media.filename ? `: ${m.media.filename}` : ''}]`;
  if (m.interactive) return m.interactive.title ?? m.interactive.body ?? `[${m.interactive.kind}]`;
  if (m.button) return m.button.text;
  if (m.reaction) return m.reaction.emoji ? `Reacted ${m.reaction.emoji}` : 'Removed a reaction';
  if (m.location) return `📍 ${m.location.name ?? `${m.location.latitude}, ${m.location.longitude}`}`;
  if (m.contacts) return `[${m.contacts.length} contact card${m.contacts.length === 1 ? '' : 's'}]`;
  return `[${m.type}]`;
}

export type Note = ItemOf<'/api/v1/public/conversations/{id}/notes'>;
export type Team = ItemOf<'/api/v1/public/teams'>;
export type CannedResponse = ItemOf<'/api/v1/public/canned-responses'>;
export type SlaPolicy = ItemOf<'/api/v1/public/sla-policies'>;
