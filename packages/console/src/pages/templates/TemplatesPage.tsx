// Templates: the account's templates with their status and rejection reason; admins create one
// (with a live preview that fills in the sample values) and submit it for review. While one is in
// review (PENDING) the list is read again every second or two until the decision arrives.
import { useEffect, useState } from 'react';
import { useAccount } from '../../account.tsx';
import { type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { dateTime } from '../../components/format.ts';
import { LoadMore } from '../../components/LoadMore.tsx';
import { Table } from '../../components/Table.tsx';
import { usePaged } from '../../components/usePaged.ts';
import { useSession } from '../../session.tsx';
import { CreateTemplate } from './CreateTemplate.tsx';
import type { Template } from './template-text.ts';
import '../../components/components.css';

const POLL_MS = 1500;

export default function TemplatesPage() {
  const { api } = useAccount();
  const { state } = useSession();
  const admin = state.status === 'signed-in' && state.user.role !== 'agent';
  const list = usePaged<Template>((cursor) => api.templates.list({ limit: 100, cursor }), [api]);
  const [submitting, setSubmitting] = useState<string | null>(null);
  const [error, setError] = useState<ShownError | null>(null);

  const pending = (list.items ?? []).some((t) => t.status === 'PENDING');
  const { reload } = list;
  // biome-ignore lint/correctness/useExhaustiveDependencies: polls while a review is pending
  useEffect(() => {
    if (!pending) return;
    const timer = setInterval(reload, POLL_MS);
    return () => clearInterval(timer);
  }, [pending]);

  const submit = async (t: Template) => {
    setSubmitting(t.id);
    setError(null);
    try {
      const updated = await api.templates.submit(t.id);
      list.setItems((items) => items.map((x) => (x.id === updated.id ? updated : x)));
    } catch (err) {
      setError(shownError(err));
    } finally {
      setSubmitting(null);
    }
  };

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Templates</h1>
      {admin ? (
        <CreateTemplate
          api={api}
          onCreated={(t) => list.setItems((items) => [t, ...items.filter((x) => x.id !== t.id)])}
        />
      ) : (
        <p className="muted">Templates are created and submitted by the account’s administrators.</p>
      )}
      <ErrorMessage error={error} />
      <Table<Template>
        caption="The account’s templates"
        rows={list.items ?? []}
        rowKey={(t) => t.id}
        empty={list.items === null ? 'Loading…' : 'No templates yet.'}
        columns={[
          { header: 'Name', cell: (t) => <code>{t.name}</code> },
          { header: 'Language', cell: (t) => t.language },
          { header: 'Category', cell: (t) => t.category },
          {
            header: 'Status',
            cell: (t) => (
              <span className={`badge badge-${t.status.toLowerCase()}`} data-template={t.name}>
                {t.status}
              </span>
            ),
          },
          { header: 'Rejection reason', cell: (t) => t.rejectionReason ?? '—' },
          { header: 'Updated', cell: (t) => dateTime(t.updatedAt) },
          {
            header: 'Actions',
            cell: (t) =>
              admin && (t.status === 'DRAFT' || t.status === 'REJECTED') ? (
                <Button
                  busy={submitting === t.id}
                  onClick={() => submit(t)}
                  aria-label={`Submit ${t.name} (${t.language}) for review`}
                >
                  Submit for review
                </Button>
              ) : null,
          },
        ]}
      />
      <div aria-live="polite" className="visually-hidden">
        {pending ? 'A template is in review; its status updates here.' : ''}
      </div>
      <LoadMore list={list} />
    </section>
  );
}
