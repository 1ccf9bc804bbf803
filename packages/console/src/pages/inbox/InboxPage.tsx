// The inbox: the account's conversations (open or closed; everyone's, mine or unassigned) beside
// the open conversation. Live: the account's message.* and conversation.* events (GET
// /events/stream) refresh the list and reach the open conversation, without reloading. Below
// 640 px the list and the conversation take the whole width in turn.
import type { WebhookEvent } from '@tidings/sdk';
import { useCallback, useEffect, useId, useMemo, useRef, useState } from 'react';
import { Link, Route, Routes, useParams } from 'react-router-dom';
import { useAccount } from '../../account.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { shortWhen } from '../../components/format.ts';
import { LoadMore } from '../../components/LoadMore.tsx';
import { useLiveEvents } from '../../components/useLiveEvents.ts';
import { usePaged } from '../../components/usePaged.ts';
import { useSession } from '../../session.tsx';
import { ConversationView } from './ConversationView.tsx';
import { type Conversation, type Member, messageText } from './types.ts';
import { useContactNames } from './useContactNames.ts';
import '../../components/components.css';
import './inbox.css';

export default function InboxPage() {
  return (
    <Routes>
      <Route path=":id?" element={<Inbox />} />
    </Routes>
  );
}

type Who = 'all' | 'mine' | 'unassigned';
export type EventListener = (event: WebhookEvent) => void;

function Inbox() {
  const { id } = useParams();
  const { api } = useAccount();
  const { state } = useSession();
  const user = state.status === 'signed-in' ? state.user : null;
  const memberId = user?.memberId ?? null;
  const [status, setStatus] = useState<'open' | 'closed'>('open');
  const [who, setWho] = useState<Who>('all');
  const statusId = useId();
  const whoId = useId();

  const list = usePaged<Conversation>(
    (cursor) =>
      api.conversations.list({
        status,
        limit: 50,
        cursor,
        ...(who === 'mine' && memberId ? { assigneeId: memberId } : {}),
        ...(who === 'unassigned' ? { unassigned: true } : {}),
      }),
    [api, status, who, memberId],
  );
  const members = usePaged<Member>(() => api.team.list({ limit: 100 }), [api]);
  const names = useContactNames(
    api,
    (list.items ?? []).map((c) => c.contactId),
  );

  // Events reach the open conversation through these listeners; the list reads its first page
  // again (a burst of events makes one read).
  const listeners = useRef(new Set<EventListener>());
  const refresh = useRef<ReturnType<typeof setTimeout> | null>(null);
  const reloadList = list.reload;
  const onEvent = useCallback(
    (event: WebhookEvent) => {
      for (const l of listeners.current) l(event);
      if (refresh.current) clearTimeout(refresh.current);
      refresh.current = setTimeout(reloadList, 250);
    },
    [reloadList],
  );
  useEffect(() => () => void (refresh.current && clearTimeout(refresh.current)), []);
  const live = useLiveEvents(api, 'message.*,conversation.*', onEvent);
  const subscribe = useMemo(
    () => (l: EventListener) => {
      listeners.current.add(l);
      return () => void listeners.current.delete(l);
    },
    [],
  );

  return (
    <div className={`inbox${id ? ' has-detail' : ''}`}>
      <section className="inbox-list" aria-labelledby="page-title">
        <div className="page-head">
          <h1 id="page-title">Inbox</h1>
          <span className={`live live-${live.state}`} role="status">
            {live.state === 'live' ? 'Live' : live.state === 'connecting' ? 'Connecting…' : 'Not live'}
          </span>
        </div>
        <ErrorMessage error={live.error} />
        <div className="toolbar">
          <div className="field">
            <label htmlFor={statusId}>Status</label>
            <select
              id={statusId}
              className="input"
              value={status}
              onChange={(e) => setStatus(e.target.value as 'open' | 'closed')}
            >
              <option value="open">Open</option>
              <option value="closed">Closed</option>
            </select>
          </div>
          <div className="field">
            <label htmlFor={whoId}>Assigned</label>
            <select id={whoId} className="input" value={who} onChange={(e) => setWho(e.target.value as Who)}>
              <option value="all">Everyone’s</option>
              <option value="mine" disabled={!memberId}>
                Mine
              </option>
              <option value="unassigned">Unassigned</option>
            </select>
          </div>
        </div>
        {list.items && list.items.length === 0 ? <p className="muted">No conversations here.</p> : null}
        <ul className="conversation-list" aria-label="Conversations">
          {(list.items ?? []).map((c) => (
            <li key={c.id}>
              <Link
                to={`/inbox/${c.id}`}
                aria-current={c.id === id ? 'page' : undefined}
                className="conversation-row"
              >
                <span className="row-top">
                  <span className="row-name">{names[c.contactId] || c.phone || 'WhatsApp customer'}</span>
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
              </Link>
            </li>
          ))}
        </ul>
        <LoadMore list={list} />
      </section>
      {id ? (
        <ConversationView
          key={id}
          id={id}
          api={api}
          memberId={memberId}
          members={members.items ?? []}
          membersError={members.error}
          name={(contactId) => names[contactId]}
          subscribe={subscribe}
          onChanged={list.reload}
        />
      ) : (
        <section className="inbox-empty" aria-label="Conversation">
          <p className="muted">Pick a conversation to read it and reply.</p>
        </section>
      )}
    </div>
  );
}
