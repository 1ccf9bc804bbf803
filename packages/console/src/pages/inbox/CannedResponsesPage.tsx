// The account's canned responses (POST|GET|PATCH|DELETE /canned-responses), which the reply box
// offers on `/shortcut`: a table, a form to add one or change the one picked, and delete. The
// text is Liquid over the customer and the conversation (checked when saved: the API's error shows
// at its field). Media and templates are set through the API.
import { useState } from 'react';
import { Link } from 'react-router-dom';
import { useAccount } from '../../account.tsx';
import { type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmButton } from '../../components/ConfirmButton.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Field } from '../../components/Field.tsx';
import { LoadMore } from '../../components/LoadMore.tsx';
import { Table } from '../../components/Table.tsx';
import { usePaged } from '../../components/usePaged.ts';
import type { CannedResponse } from './types.ts';

const EMPTY = { shortcut: '', title: '', text: '' };

export function CannedResponsesPage() {
  const { api } = useAccount();
  const list = usePaged<CannedResponse>((cursor) => api.cannedResponses.list({ limit: 50, cursor }), [api]);
  const [form, setForm] = useState(EMPTY);
  const [editing, setEditing] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const set = (k: keyof typeof EMPTY) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [k]: e.target.value }));

  return (
    <section aria-labelledby="page-title">
      <p>
        <Link to="/inbox">← Back to the inbox</Link>
      </p>
      <h1 id="page-title">Canned responses</h1>
      <p className="muted">
        Typing / and a shortcut in a reply offers them. The text may use the customer’s details:{' '}
        <code>{'{{ contact.name | default: "there" }}'}</code>, <code>{'{{ agent.name }}'}</code>.
      </p>
      <Table
        caption="Canned responses"
        rows={list.items ?? []}
        rowKey={(r) => r.id}
        empty="No canned responses yet."
        columns={[
          { header: 'Shortcut', cell: (r) => <code>/{r.shortcut}</code> },
          { header: 'Title', cell: (r) => r.title },
          { header: 'Text', cell: (r) => r.text },
          {
            header: 'Actions',
            cell: (r) => (
              <span className="toolbar">
                <Button
                  aria-label={`Edit /${r.shortcut}`}
                  onClick={() => {
                    setEditing(r.id);
                    setForm({ shortcut: r.shortcut, title: r.title, text: r.text });
                  }}
                >
                  Edit
                </Button>
                <ConfirmButton
                  label="Delete"
                  ariaLabel={`Delete /${r.shortcut}`}
                  title={`Delete /${r.shortcut}?`}
                  confirmLabel="Delete"
                  variant="danger"
                  onConfirm={async () => {
                    await api.cannedResponses.delete(r.id);
                    list.reload();
                  }}
                >
                  The reply box no longer offers it.
                </ConfirmButton>
              </span>
            ),
          },
        ]}
      />
      <LoadMore list={list} />
      <form
        className="panel"
        onSubmit={async (e) => {
          e.preventDefault();
          setBusy(true);
          setError(null);
          try {
            if (editing) await api.cannedResponses.update(editing, form);
            else await api.cannedResponses.create(form);
            setForm(EMPTY);
            setEditing(null);
            list.reload();
          } catch (err) {
            setError(shownError(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <h2>{editing ? `Change /${form.shortcut}` : 'New canned response'}</h2>
        <Field label="Shortcut" required maxLength={50} value={form.shortcut} onChange={set('shortcut')} />
        <Field label="Title" required maxLength={100} value={form.title} onChange={set('title')} />
        <div className="field">
          <label htmlFor="canned-text">Text</label>
          <textarea
            id="canned-text"
            className="input"
            required
            maxLength={4096}
            rows={4}
            value={form.text}
            onChange={set('text')}
          />
        </div>
        <ErrorMessage error={error} />
        <div className="toolbar">
          <Button type="submit" variant="primary" busy={busy}>
            {editing ? 'Save' : 'Add canned response'}
          </Button>
          {editing ? (
            <Button
              onClick={() => {
                setEditing(null);
                setForm(EMPTY);
              }}
            >
              Cancel
            </Button>
          ) : null}
        </div>
      </form>
    </section>
  );
}
