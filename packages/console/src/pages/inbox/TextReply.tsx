// A text reply inside the customer service window. Typing `/` and letters at its start offers the
// account's canned responses (GET /canned-responses?q=); the one picked is rendered for this
// customer (POST /canned-responses/{id}/render) and its text put in the box to edit and send, or,
// when it is media, sent as rendered. What did not render (`problems`) is shown. **Send later** sends
// the text at a chosen time (`sendAt`, at most 30 days ahead): the message waits `scheduled`.
import type { Tidings } from '@tidings/sdk';
import { useEffect, useId, useState } from 'react';
import { type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { type Suggestion, SuggestionList, suggestionKeys } from './Suggestions.tsx';
import type { CannedResponse, Message } from './types.ts';

export function TextReply({ api, id, onSent }: { api: Tidings; id: string; onSent: (m: Message) => void }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const [problems, setProblems] = useState<{ field: string; issue: string }[]>([]);
  const [found, setFound] = useState<CannedResponse[]>([]);
  const [active, setActive] = useState(0);
  const [closed, setClosed] = useState(false);
  const [later, setLater] = useState('');
  const [laterError, setLaterError] = useState<string | null>(null);
  const replyId = useId();
  const laterId = useId();
  const listId = useId();
  const hintId = useId();
  const query = /^\/([\w-]*)$/.exec(text)?.[1] ?? null;

  useEffect(() => {
    if (query === null) {
      setFound([]);
      return;
    }
    let live = true;
    const timer = setTimeout(() => {
      api.cannedResponses
        .list({ q: query || undefined, limit: 8 })
        .page()
        .then(
          (page) => {
            if (!live) return;
            setFound(page.data);
            setActive(0);
          },
          (err) => live && setError(shownError(err)),
        );
    }, 150);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [api, query]);

  const send = async (run: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await run();
    } catch (err) {
      setError(shownError(err));
    } finally {
      setBusy(false);
    }
  };

  const pick = (item: Suggestion) =>
    send(async () => {
      setFound([]);
      const rendered = await api.cannedResponses.render(item.id, { conversationId: id });
      setProblems(rendered.problems);
      const message = rendered.message;
      if (message && message.type !== 'text') {
        // Media (or a template): sent as rendered, nothing to edit.
        onSent(
          await api.conversations.reply(id, message as Parameters<Tidings['conversations']['reply']>[1]),
        );
        setText('');
      } else if (rendered.text !== null) setText(rendered.text);
    });

  const sendLater = () => {
    if (!text.trim()) return;
    const problem = sendAtProblem(later);
    setLaterError(problem);
    if (problem) return;
    void send(async () => {
      onSent(
        await api.conversations.reply(id, { type: 'text', text, sendAt: new Date(later).toISOString() }),
      );
      setText('');
      setLater('');
      setProblems([]);
    });
  };

  const items: Suggestion[] =
    query === null || closed ? [] : found.map((r) => ({ id: r.id, label: `/${r.shortcut}`, hint: r.title }));
  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        if (!text.trim()) return;
        void send(async () => {
          onSent(await api.conversations.reply(id, { type: 'text', text }));
          setText('');
          setProblems([]);
        });
      }}
    >
      <div className="field suggest">
        <label htmlFor={replyId}>Reply</label>
        <p className="field-hint" id={hintId}>
          Type / for the canned responses.
        </p>
        <textarea
          id={replyId}
          className="input"
          value={text}
          maxLength={4096}
          rows={3}
          aria-describedby={hintId}
          onChange={(e) => {
            setText(e.target.value);
            setClosed(false);
          }}
          {...suggestionKeys(listId, items, active, setActive, pick, () => setClosed(true))}
        />
        <SuggestionList id={listId} label="Canned responses" items={items} active={active} onPick={pick} />
      </div>
      {problems.length > 0 ? (
        <div className="problems" role="alert">
          <p>Parts of the canned response did not render for this customer:</p>
          <ul>
            {problems.map((p) => (
              <li key={`${p.field}:${p.issue}`}>
                {p.field}: {p.issue}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <ErrorMessage error={error} />
      <div className="reply-actions">
        <Button type="submit" variant="primary" busy={busy} disabled={!text.trim()}>
          Send
        </Button>
        <div className="field send-later">
          <label htmlFor={laterId}>Send later at</label>
          <input
            id={laterId}
            className="input"
            type="datetime-local"
            value={later}
            min={localInput(Date.now())}
            max={localInput(Date.now() + MAX_AHEAD)}
            aria-invalid={laterError ? true : undefined}
            aria-describedby={laterError ? `${laterId}-error` : undefined}
            onChange={(e) => {
              setLater(e.target.value);
              setLaterError(null);
            }}
          />
        </div>
        <Button busy={busy} disabled={!text.trim()} onClick={sendLater}>
          Send later
        </Button>
      </div>
      {laterError ? (
        <p className="field-error" id={`${laterId}-error`}>
          {laterError}
        </p>
      ) : null}
    </form>
  );
}

const MAX_AHEAD = 30 * 24 * 3600_000;

/** A datetime-local input's value (the reader's local time, to the minute) for an instant. */
function localInput(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** Why a Send later time cannot be used, or null: it must be ahead, at most 30 days. */
function sendAtProblem(value: string): string | null {
  if (!value) return 'Pick the date and time to send it at.';
  const at = new Date(value).getTime();
  if (Number.isNaN(at)) return 'Pick the date and time to send it at.';
  if (at <= Date.now()) return 'Pick a time in the future.';
  if (at > Date.now() + MAX_AHEAD) return 'Pick a time at most 30 days ahead.';
  return null;
}
