// What the agent writes: a reply to the customer (text while the window is open, with the `/`
// canned responses; a template once it has closed) or a private note for colleagues, `@` naming
// those to tell (GET /team/members). Notes go on open and closed conversations alike.
import type { Tidings } from '@tidings/sdk';
import { useState } from 'react';
import { NoteComposer } from './NoteComposer.tsx';
import { TemplateReply } from './TemplateReply.tsx';
import { TextReply } from './TextReply.tsx';
import type { Conversation, Member, Message, Note } from './types.ts';

interface Props {
  api: Tidings;
  conversation: Conversation;
  members: Member[];
  onSent: (m: Message) => void;
  onNote: (n: Note) => void;
}

export function Composer({ api, conversation: c, members, onSent, onNote }: Props) {
  const [mode, setMode] = useState<'reply' | 'note'>('reply');
  return (
    <div className="compose">
      <fieldset className="mode-switch">
        <legend className="visually-hidden">Write</legend>
        <button
          type="button"
          className="btn btn-quiet"
          aria-pressed={mode === 'reply'}
          onClick={() => setMode('reply')}
        >
          Reply
        </button>
        <button
          type="button"
          className="btn btn-quiet"
          aria-pressed={mode === 'note'}
          onClick={() => setMode('note')}
        >
          Note
        </button>
      </fieldset>
      {mode === 'note' ? (
        <NoteComposer api={api} id={c.id} members={members} onNote={onNote} />
      ) : c.status === 'closed' ? (
        <p className="muted">This conversation is closed. Reopen it to reply.</p>
      ) : c.serviceWindowOpen ? (
        <TextReply api={api} id={c.id} onSent={onSent} />
      ) : (
        <TemplateReply api={api} id={c.id} onSent={onSent} />
      )}
    </div>
  );
}
