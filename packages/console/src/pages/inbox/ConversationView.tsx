// One conversation: who and what state (status, assignee, team, labels, snooze, the customer
// service window, the SLA's due times, the satisfaction survey), its history with the team's private notes between the
// messages, and the composer (a reply or a note). Events (message.*, conversation.*) update it in
// place; a conversation.mentioned brings the note it tells of.
import type { Tidings, WebhookEvent } from '@tidings/sdk';
import { useEffect, useId, useState } from 'react';
import { Link } from 'react-router-dom';
import { type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { dateTime } from '../../components/format.ts';
import { useOne, usePaged } from '../../components/usePaged.ts';
import { Composer } from './Composer.tsx';
import { Csat, Labels, Snooze, TeamPicker } from './ConversationTools.tsx';
import { History } from './History.tsx';
import type { EventListener } from './InboxPage.tsx';
import { SlaSummary } from './Sla.tsx';
import type { Conversation, Member, Message, Note, Team } from './types.ts';

interface Props {
  id: string;
  api: Tidings;
  memberId: string | null;
  members: Member[];
  teams: Team[];
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
  teams,
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
  const notes = usePaged<Note>(() => api.conversations.notes(id, { limit: 100 }), [api, id]);
  const [actionError, setActionError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const assignId = useId();
  const c = conversation.value;

  const { setItems } = history;
  const setNotes = notes.setItems;
  const { setValue, reload } = conversation;
  const noted = (note: Note) =>
    setNotes((items) => (items.some((n) => n.id === note.id) ? items : [note, ...items]));
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
          // A customer's message moves the window; the survey sent on a close is on the conversation.
          if (
            event.type === 'message.received' ||
            (event.type === 'message.sent' && message.source === 'automation')
          )
            reload();
        }
        if ((event.type.startsWith('conversation.') || event.type === 'csat.received') && data.id === id) {
          const { note, memberId: _m, reason: _r, target: _t, dueAt: _d, policyId: _p, ...rest } = data;
          setValue((current) => latest(current, rest as unknown as Conversation));
          if (event.type === 'conversation.mentioned' && note) noted(note as Note);
          // A breach: read the conversation again (a rule on it may have changed it meanwhile).
          if (event.type === 'conversation.sla_breached') reload();
        }
      }),
    [id, subscribe],
  );

  const act = async (what: string, run: () => Promise<Conversation>): Promise<boolean> => {
    setBusy(what);
    setActionError(null);
    try {
      const next = await run();
      setValue((current) => latest(current, next));
      onChanged();
      return true;
    } catch (err) {
      setActionError(shownError(err));
      return false;
    } finally {
      setBusy(null);
    }
  };

  const sent = (message: Message) => {
    setItems((items) => (items.some((m) => m.id === message.id) ? items : [message, ...items]));
    onChanged();
  };

  // A scheduled reply canceled: its bubble shows it (message.canceled may come before or after).
  const cancel = async (message: Message) => {
    const canceled = await api.messages.cancel(message.id);
    setItems((items) => items.map((m) => (m.id === canceled.id && newer(canceled, m) ? canceled : m)));
  };

  const contactName = c ? name(c.contactId) : undefined;
  const team = c?.teamId ? teams.find((t) => t.id === c.teamId) : undefined;
  const tools = c ? { api, c, teams, members, busy, act } : null;
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
            {c.teamId ? <span className="badge">Team: {team?.name ?? c.teamId}</span> : null}
          </div>
          <p className="window">
            {c.serviceWindowOpen
              ? `Customer service window open until ${dateTime(c.serviceWindowExpiresAt)}.`
              : c.serviceWindowExpiresAt
                ? `Customer service window closed at ${dateTime(c.serviceWindowExpiresAt)}: reply with a template.`
                : 'The customer has not written: reply with a template.'}
          </p>
          <SlaSummary c={c} />
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
            {tools ? <TeamPicker {...tools} /> : null}
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
          {tools ? <Labels {...tools} /> : null}
          {tools ? <Snooze {...tools} /> : null}
          <ErrorMessage error={membersError} />
          <ErrorMessage error={actionError} />
          <Csat c={c} members={members} />
        </>
      ) : conversation.error ? null : (
        <p className="muted" role="status">
          Loading…
        </p>
      )}

      <History history={history} notes={notes.items ?? []} members={members} onCancel={cancel} />
      <ErrorMessage error={notes.error} />

      {c ? <Composer api={api} conversation={c} members={members} onSent={sent} onNote={noted} /> : null}
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
  scheduled: -1,
  queued: 0,
  sent: 1,
  delivered: 2,
  read: 3,
  failed: 1,
  canceled: 1,
  received: 0,
};

/** Whether an event's copy of a message is at least as far along as the one shown. */
function newer(incoming: Message, shown: Message): boolean {
  if (incoming.updatedAt !== shown.updatedAt) return incoming.updatedAt > shown.updatedAt;
  return RANK[incoming.status] >= RANK[shown.status];
}
