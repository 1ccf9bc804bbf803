// A private note (POST /conversations/{id}/notes): never sent to the customer. Typing `@` and
// letters offers the team's members; those picked and still named in the text are the note's
// `mentions`, each told live (conversation.mentioned).
import type { Tidings } from '@tidings/sdk';
import { useId, useRef, useState } from 'react';
import { type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { type Suggestion, SuggestionList, suggestionKeys } from './Suggestions.tsx';
import type { Member, Note } from './types.ts';

interface Props {
  api: Tidings;
  id: string;
  members: Member[];
  onNote: (n: Note) => void;
}

export function NoteComposer({ api, id, members, onNote }: Props) {
  const [text, setText] = useState('');
  const [caret, setCaret] = useState(0);
  const [picked, setPicked] = useState<Member[]>([]);
  const [active, setActive] = useState(0);
  const [closed, setClosed] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const box = useRef<HTMLTextAreaElement>(null);
  const noteId = useId();
  const listId = useId();
  const hintId = useId();

  const at = /(^|\s)@([^\s@]*)$/.exec(text.slice(0, caret));
  const query = at ? at[2]!.toLowerCase() : null;
  const items: Suggestion[] =
    query === null || closed
      ? []
      : members
          .filter((m) =>
            `${m.name} ${m.email}`
              .toLowerCase()
              .split(/\s+/)
              .some((w) => w.startsWith(query)),
          )
          .slice(0, 8)
          .map((m) => ({ id: m.id, label: m.name, hint: m.email }));

  const pick = (item: Suggestion) => {
    const member = members.find((m) => m.id === item.id);
    if (!member || !at) return;
    const start = caret - at[2]!.length - 1;
    const next = `${text.slice(0, start)}@${member.name} ${text.slice(caret)}`;
    const to = start + member.name.length + 2;
    setText(next);
    setCaret(to);
    setPicked((p) => (p.some((m) => m.id === member.id) ? p : [...p, member]));
    requestAnimationFrame(() => box.current?.setSelectionRange(to, to));
  };

  return (
    <form
      className="composer composer-note"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!text.trim()) return;
        setBusy(true);
        setError(null);
        try {
          const mentions = picked.filter((m) => text.includes(`@${m.name}`)).map((m) => m.id);
          onNote(await api.conversations.addNote(id, { text, mentions }));
          setText('');
          setPicked([]);
        } catch (err) {
          setError(shownError(err));
        } finally {
          setBusy(false);
        }
      }}
    >
      <div className="field suggest">
        <label htmlFor={noteId}>Private note</label>
        <p className="field-hint" id={hintId}>
          Only your team sees it. Type @ to mention a colleague.
        </p>
        <textarea
          ref={box}
          id={noteId}
          className="input"
          value={text}
          maxLength={4096}
          rows={3}
          aria-describedby={hintId}
          onChange={(e) => {
            setText(e.target.value);
            setCaret(e.target.selectionStart);
            setClosed(false);
            setActive(0);
          }}
          onSelect={(e) => setCaret(e.currentTarget.selectionStart)}
          {...suggestionKeys(listId, items, active, setActive, pick, () => setClosed(true))}
        />
        <SuggestionList id={listId} label="Team members" items={items} active={active} onPick={pick} />
      </div>
      <ErrorMessage error={error} />
      <Button type="submit" variant="primary" busy={busy} disabled={!text.trim()}>
        Add note
      </Button>
    </form>
  );
}
