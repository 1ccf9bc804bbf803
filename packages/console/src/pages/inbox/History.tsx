// A conversation's history: its messages as chat bubbles, oldest at the top, and the private notes
// between them by time (GET /conversations/{id}/notes, a list of its own: notes are never
// messages), shown as notes for the team, never as bubbles to the customer. A reply sent for later
// says when it goes, with Cancel (POST /messages/{id}/cancel) while it waits.
import { useState } from 'react';
import { type ShownError, shownError } from '../../api.ts';
import { Bubble } from '../../components/Bubble.tsx';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { dateTime, shortWhen } from '../../components/format.ts';
import { LoadMore } from '../../components/LoadMore.tsx';
import type { Paged } from '../../components/usePaged.ts';
import { type Member, type Message, messageText, type Note } from './types.ts';

type Entry = { kind: 'message'; at: string; message: Message } | { kind: 'note'; at: string; note: Note };

export function History({
  history,
  notes,
  members,
  onCancel,
}: {
  history: Paged<Message>;
  notes: Note[];
  members: Member[];
  onCancel: (m: Message) => Promise<void>;
}) {
  const messages = history.items ?? [];
  // While earlier messages are still to load, notes older than those shown wait with them.
  const oldest = history.hasMore && messages.length > 0 ? messages[messages.length - 1]!.createdAt : null;
  const entries: Entry[] = [
    ...messages.map((m): Entry => ({ kind: 'message', at: m.createdAt, message: m })),
    ...notes
      .filter((n) => oldest === null || n.createdAt >= oldest)
      .map((n): Entry => ({ kind: 'note', at: n.createdAt, note: n })),
  ].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const nameOf = (id: string | null) =>
    id ? (members.find((m) => m.id === id)?.name ?? 'A colleague') : 'The API';

  return (
    <div className="chat">
      <LoadMore list={history} label="Load earlier messages" />
      {/* A log: new messages are announced as they arrive, the history already shown is not. */}
      <div role="log" aria-live="polite" aria-label="Messages">
        <ol>
          {entries.map((e) =>
            e.kind === 'message' ? (
              <li key={e.message.id}>
                <Bubble
                  direction={e.message.direction}
                  status={e.message.status}
                  at={e.message.createdAt}
                  error={e.message.error?.message}
                >
                  <span className="visually-hidden">
                    {e.message.direction === 'inbound' ? 'Customer: ' : 'You: '}
                  </span>
                  {messageText(e.message)}
                </Bubble>
                {e.message.sendAt && (e.message.status === 'scheduled' || e.message.status === 'canceled') ? (
                  <Scheduled message={e.message} onCancel={onCancel} />
                ) : null}
              </li>
            ) : (
              <li key={e.note.id}>
                <div className="note">
                  <p className="note-meta">
                    <span>Private note by {nameOf(e.note.authorId)}</span>
                    <time dateTime={e.note.createdAt}>{shortWhen(e.note.createdAt)}</time>
                  </p>
                  <p className="note-text">{e.note.text}</p>
                </div>
              </li>
            ),
          )}
        </ol>
      </div>
      {history.items && history.items.length === 0 && notes.length === 0 ? (
        <p className="muted">No messages yet.</p>
      ) : null}
    </div>
  );
}

function Scheduled({ message: m, onCancel }: { message: Message; onCancel: (m: Message) => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  return (
    <div className="scheduled">
      {m.status === 'scheduled' ? (
        <>
          <span>Scheduled for {dateTime(m.sendAt)}</span>
          <Button
            busy={busy}
            aria-label={`Cancel the message scheduled for ${dateTime(m.sendAt)}`}
            onClick={async () => {
              setBusy(true);
              setError(null);
              try {
                await onCancel(m);
              } catch (err) {
                setError(shownError(err));
              } finally {
                setBusy(false);
              }
            }}
          >
            Cancel
          </Button>
        </>
      ) : (
        <span>Canceled: it was scheduled for {dateTime(m.sendAt)} and was not sent</span>
      )}
      <ErrorMessage error={error} />
    </div>
  );
}
