// One conversation: who and what state (status, assignee, the customer service window), its
// history as chat bubbles (oldest at the top), and the reply: text while the window is open, an
// approved template when it is closed. Events (message.*, conversation.*) update it in place.
import type { Tidings, WebhookEvent } from '@tidings/sdk';
import { useEffect, useId, useState } from 'react';
import { Link } from 'react-router-dom';
import { type ShownError, shownError } from '../../api.ts';
import { Bubble } from '../../components/Bubble.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { dateTime } from '../../components/format.ts';
import { LoadMore } from '../../components/LoadMore.tsx';
import { useOne, usePaged } from '../../components/usePaged.ts';
import type { EventListener } from './InboxPage.tsx';
import { TemplateReply } from './TemplateReply.tsx';
import { type Conversation, type Member, type Message, messageText } from './types.ts';

interface Props {
  id: string;
  api: Tidings;
  memberId: string | null;
  members: Member[];
  membersError: ShownError | null;
  name: (contactId: string) => string | undefined;
  subscribe: (listener: EventListener) => () => void;
  /** The conversation changed here (assigned, closed, replied): the list reads itself again. */
  onChanged: () => void;
}

export function ConversationView({
  id,
  api,
  memberId,
  members,
  membersError,
  name,
  subscribe,
  onChanged,
}: Props) {
  const conversation = useOne(() => api.conversations.get(id), [api, id]);
  const history = usePaged<Message>(
    (cursor) => api.conversations.messages(id, { limit: 50, cursor }),
    [api, id],
  );
  const [actionError, setActionError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const assignId = useId();
  const c = conversation.value;

  const { setItems } = history;
  const { setValue, reload } = conversation;
  // biome-ignore lint/correctness/useExhaustiveDependencies: the setters are stable enough per id
  useEffect(
    () =>
      subscribe((event: WebhookEvent) => {
        const data = event.data as Record<string, unknown>;
        if (event.type.startsWith('message.') && data.conversationId === id) {
          const message = data as unknown as Message;
          setItems((items) =>
            items.some((m) => m.id === message.id)
              ? items.map((m) => (m.id === message.id && newer(message, m) ? message : m))
              : [message, ...items],
          );
          // A customer's message moves the window.
          if (event.type === 'message.received') reload();
        }
        if (event.type.startsWith('conversation.') && data.id === id)
          setValue((current) => latest(current, data as unknown as Conversation));
      }),
    [id, subscribe],
  );

  const act = async (what: string, run: () => Promise<Conversation>) => {
    setBusy(what);
    setActionError(null);
    try {
      const next = await run();
      setValue((current) => latest(current, next));
      onChanged();
    } catch (err) {
      setActionError(shownError(err));
    } finally {
      setBusy(null);
    }
  };

  const sent = (message: Message) => {
    setItems((items) => (items.some((m) => m.id === message.id) ? items : [message, ...items]));
    onChanged();
  };

  const contactName = c ? name(c.contactId) : undefined;
  const messages = [...(history.items ?? [])].reverse();
  return (
    <section className="conversation" aria-labelledby="conversation-title">
      <p className="narrow-only">
        <Link to="/inbox">← Back to the conversations</Link>
      </p>
      <ErrorMessage error={conversation.error} />
      {c ? (
        <>
          <div className="page-head">
            <h2 id="conversation-title">
              {contactName && c.phone
                ? `${contactName} (${c.phone})`
                : contactName || c.phone || 'WhatsApp customer'}
            </h2>
            <span className={`badge badge-${c.status}`}>{c.status === 'open' ? 'Open' : 'Closed'}</span>
          </div>
          <p className="window">
            {c.serviceWindowOpen
              ? `Customer service window open until ${dateTime(c.serviceWindowExpiresAt)}.`
              : c.serviceWindowExpiresAt
                ? `Customer service window closed at ${dateTime(c.serviceWindowExpiresAt)}: reply with a template.`
                : 'The customer has not written: reply with a template.'}
          </p>
          <div className="toolbar">
            <div className="field">
              <label htmlFor={assignId}>Assigned to</label>
              <select
                id={assignId}
                className="input"
                value={c.assigneeId ?? ''}
                disabled={busy !== null}
                onChange={(e) =>
                  act('assign', () => api.conversations.assign(id, { assigneeId: e.target.value || null }))
                }
              >
                <option value="">Nobody</option>
                {c.assigneeId && !members.some((m) => m.id === c.assigneeId) ? (
                  <option value={c.assigneeId}>{c.assigneeId}</option>
                ) : null}
                {members.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.name}
                    {m.id === memberId ? ' (me)' : ''}
                  </option>
                ))}
              </select>
            </div>
            {memberId && c.assigneeId !== memberId ? (
              <Button
                busy={busy === 'me'}
                onClick={() => act('me', () => api.conversations.assign(id, { assigneeId: memberId }))}
              >
                Assign to me
              </Button>
            ) : null}
            {c.status === 'open' ? (
              <Button busy={busy === 'close'} onClick={() => act('close', () => api.conversations.close(id))}>
                Close
              </Button>
            ) : (
              <Button
                busy={busy === 'reopen'}
                onClick={() => act('reopen', () => api.conversations.reopen(id))}
              >
                Reopen
              </Button>
            )}
          </div>
          <ErrorMessage error={membersError} />
          <ErrorMessage error={actionError} />
        </>
      ) : conversation.error ? null : (
        <p className="muted" role="status">
          Loading…
        </p>
      )}

      <div className="chat">
        <LoadMore list={history} label="Load earlier messages" />
        {/* A log: new messages are announced as they arrive, the history already shown is not. */}
        <div role="log" aria-live="polite" aria-label="Messages">
          <ol>
            {messages.map((m) => (
              <li key={m.id}>
                <Bubble direction={m.direction} status={m.status} at={m.createdAt} error={m.error?.message}>
                  <span className="visually-hidden">
                    {m.direction === 'inbound' ? 'Customer: ' : 'You: '}
                  </span>
                  {messageText(m)}
                </Bubble>
              </li>
            ))}
          </ol>
        </div>
        {history.items && history.items.length === 0 ? <p className="muted">No messages yet.</p> : null}
      </div>

      {c ? (
        c.status === 'closed' ? (
          <p className="muted">This conversation is closed. Reopen it to reply.</p>
        ) : c.serviceWindowOpen ? (
          <TextReply api={api} id={id} onSent={sent} />
        ) : (
          <TemplateReply api={api} id={id} onSent={sent} />
        )
      ) : null}
    </section>
  );
}

/**
 * The newer of two states of the conversation. An event can arrive after the answer to a later
 * action (the stream is not the HTTP response): applied blindly, a late `conversation.assigned`
 * showed a closed conversation as open, and the agent's next click landed on the wrong button.
 */
function latest(current: Conversation | null, next: Conversation): Conversation {
  return current && Date.parse(current.updatedAt) > Date.parse(next.updatedAt) ? current : next;
}

const RANK: Record<Message['status'], number> = {
  queued: 0,
  sent: 1,
  delivered: 2,
  read: 3,
  failed: 1,
  received: 0,
};

/** Whether an event's copy of a message is at least as far along as the one shown. */
function newer(incoming: Message, shown: Message): boolean {
  if (incoming.updatedAt !== shown.updatedAt) return incoming.updatedAt > shown.updatedAt;
  return RANK[incoming.status] >= RANK[shown.status];
}

function TextReply({ api, id, onSent }: { api: Tidings; id: string; onSent: (m: Message) => void }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const replyId = useId();
  return (
    <form
      className="composer"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!text.trim()) return;
        setBusy(true);
        setError(null);
        try {
          onSent(await api.conversations.reply(id, { type: 'text', text }));
          setText('');
        } catch (err) {
          setError(shownError(err));
        } finally {
          setBusy(false);
        }
      }}
    >
      <div className="field">
        <label htmlFor={replyId}>Reply</label>
        <textarea
          id={replyId}
          className="input"
          value={text}
          maxLength={4096}
          rows={3}
          onChange={(e) => setText(e.target.value)}
        />
      </div>
      <ErrorMessage error={error} />
      <Button type="submit" variant="primary" busy={busy} disabled={!text.trim()}>
        Send
      </Button>
    </form>
  );
}
