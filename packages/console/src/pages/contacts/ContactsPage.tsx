// Contacts: search (name, phone or email), the list with tags, a contact's detail (tags and
// attributes, changed in place), and a CSV import with a progress bar.
import type { ItemOf } from '@tidings/sdk';
import { useId, useState } from 'react';
import { Link, Route, Routes } from 'react-router-dom';
import { useAccount } from '../../account.tsx';
import { Button } from '../../components/Button.tsx';
import { customerLabel, dateTime } from '../../components/format.ts';
import { LoadMore } from '../../components/LoadMore.tsx';
import { Table } from '../../components/Table.tsx';
import { usePaged } from '../../components/usePaged.ts';
import { ContactDetail } from './ContactDetail.tsx';
import { CsvImport } from './CsvImport.tsx';
import '../../components/components.css';

export type Contact = ItemOf<'/api/v1/public/contacts'>;

export default function ContactsPage() {
  return (
    <Routes>
      <Route index element={<ContactList />} />
      <Route path=":id" element={<ContactDetail />} />
    </Routes>
  );
}

function ContactList() {
  const { api } = useAccount();
  const [typed, setTyped] = useState('');
  const [q, setQ] = useState('');
  const searchId = useId();
  const list = usePaged<Contact>(
    (cursor) => api.contacts.list({ limit: 50, cursor, ...(q ? { q } : {}) }),
    [api, q],
  );

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Contacts</h1>
      <form
        className="toolbar"
        onSubmit={(e) => {
          e.preventDefault();
          setQ(typed.trim());
        }}
      >
        <div className="field">
          <label htmlFor={searchId}>Search contacts</label>
          <input
            id={searchId}
            className="input"
            type="search"
            value={typed}
            minLength={3}
            maxLength={100}
            aria-describedby={`${searchId}-hint`}
            onChange={(e) => setTyped(e.target.value)}
          />
          <p className="field-hint" id={`${searchId}-hint`}>
            Name, phone or email; at least 3 characters.
          </p>
        </div>
        <Button type="submit" variant="primary">
          Search
        </Button>
        {q ? (
          <Button
            variant="quiet"
            onClick={() => {
              setTyped('');
              setQ('');
            }}
          >
            Show all
          </Button>
        ) : null}
      </form>
      <Table<Contact>
        caption={q ? `Contacts matching “${q}”` : 'The account’s contacts'}
        rows={list.items ?? []}
        rowKey={(c) => c.id}
        empty={list.items === null ? 'Loading…' : q ? 'No contact matches.' : 'No contacts yet.'}
        columns={[
          { header: 'Name', cell: (c) => <Link to={`/contacts/${c.id}`}>{customerLabel(c)}</Link> },
          { header: 'Phone', cell: (c) => c.phone ?? '—' },
          { header: 'WhatsApp username', cell: (c) => (c.whatsappUsername ? `@${c.whatsappUsername}` : '—') },
          {
            header: 'Tags',
            cell: (c) =>
              c.tags.length === 0
                ? '—'
                : c.tags.map((t) => (
                    <span key={t} className="tag">
                      {t}
                    </span>
                  )),
          },
          { header: 'Updated', cell: (c) => dateTime(c.updatedAt) },
        ]}
      />
      <LoadMore list={list} />
      <CsvImport api={api} onDone={list.reload} />
    </section>
  );
}
