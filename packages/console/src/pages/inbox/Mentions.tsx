// The signed-in member's mentions as they arrive (conversation.mentioned with their memberId, on
// the inbox's event stream): a status region that announces each, linking to its conversation.
import { Link } from 'react-router-dom';

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
