// The signed-in member's mentions as they arrive (conversation.mentioned with their memberId, on
// the inbox's event stream, or elsewhere the shell's: MentionWatcher): a status region that
// announces each, linking to its conversation.
import type { WebhookEvent } from '@tidings/sdk';
import { Link } from 'react-router-dom';
import './mentions.css';

export interface Mention {
  key: string;
  conversationId: string;
  text: string;
  author: string;
}

export function Mentions({ mentions, onDismiss }: { mentions: Mention[]; onDismiss: (key: string) => void }) {
  return (
    <div role="status" className="mentions">
      {mentions.length > 0 ? (
        <ul aria-label="Mentions">
          {mentions.map((m) => (
            <li key={m.key} className="mention">
              <span>
                {m.author} mentioned you: “{m.text}”{' '}
                <Link to={`/inbox/${m.conversationId}`} onClick={() => onDismiss(m.key)}>
                  Open the conversation
                </Link>
              </span>
              <button
                type="button"
                className="btn btn-quiet"
                aria-label="Dismiss the mention"
                onClick={() => onDismiss(m.key)}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

interface MentionData {
  memberId?: string;
  note?: { id: string; conversationId: string; text: string; authorId: string | null };
}

/** The event as a mention of `memberId`, or null (another member's, another event). */
export function mentionOf(
  event: WebhookEvent,
  memberId: string | null,
  nameOf: (id: string | null) => string | undefined,
): Mention | null {
  const data = event.data as MentionData;
  if (event.type !== 'conversation.mentioned' || !memberId || data.memberId !== memberId || !data.note)
    return null;
  const { id, conversationId, text, authorId } = data.note;
  return { key: id, conversationId, text, author: nameOf(authorId) ?? 'A colleague' };
}

/** Adds a mention once (an event may be told again after a reconnection). */
export function withMention(all: Mention[], m: Mention | null): Mention[] {
  return !m || all.some((x) => x.key === m.key) ? all : [m, ...all];
}
