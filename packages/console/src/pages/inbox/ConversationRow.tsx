// One conversation in the inbox's list: the customer, the last message, the unread count, and its
// team-inbox state (team and assignee or "in the queue", labels, snoozed), and its SLA when a target
// is due or was missed.
import { Link } from 'react-router-dom';
import { shortWhen } from '../../components/format.ts';
import { slaBadge } from './Sla.tsx';
import { type Conversation, messageText } from './types.ts';

interface Props {
  c: Conversation;
  current: boolean;
  name: string;
  team: string | null;
  assignee: string | null;
}

export function ConversationRow({ c, current, name, team, assignee }: Props) {
  const snoozed = c.snoozedUntil !== null && Date.parse(c.snoozedUntil) > Date.now();
  const sla = slaBadge(c);
  const who = team ? `${team} · ${assignee ?? 'in the queue'}` : assignee;
  return (
    <Link to={`/inbox/${c.id}`} aria-current={current ? 'page' : undefined} className="conversation-row">
      <span className="row-top">
        <span className="row-name">{name}</span>
        <time dateTime={c.lastMessageAt}>{shortWhen(c.lastMessageAt)}</time>
      </span>
      <span className="row-bottom">
        <span className="row-last">
          {c.lastMessage
            ? `${c.lastMessage.direction === 'outbound' ? 'You: ' : ''}${messageText(c.lastMessage)}`
            : 'No messages'}
        </span>
        {c.unreadCount > 0 ? (
          <span className="unread">
            {c.unreadCount}
            <span className="visually-hidden"> unread</span>
          </span>
        ) : null}
      </span>
      {who || c.labels.length > 0 || snoozed || sla ? (
        <span className="row-meta">
          {sla ? (
            <span className={`row-sla sla-${sla.tone}`} title={sla.title}>
              {sla.text}
            </span>
          ) : null}
          {who ? <span className="row-who">{who}</span> : null}
          {snoozed ? <span className="row-snoozed">Snoozed</span> : null}
          {c.labels.map((l) => (
            <span key={l} className="row-label">
              <span className="visually-hidden">label </span>
              {l}
            </span>
          ))}
        </span>
      ) : null}
    </Link>
  );
}
