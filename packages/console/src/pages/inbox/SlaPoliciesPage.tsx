// The account's SLA policies (POST|GET|PATCH|DELETE /sla-policies): how soon a conversation is to
// be first answered and closed, for conversations with some labels or in some teams, tried lowest
// position first. Admins add, change and delete them; an agent reads them.
import { useId, useState } from 'react';
import { Link } from 'react-router-dom';
import { useAccount } from '../../account.tsx';
import { type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmButton } from '../../components/ConfirmButton.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Field } from '../../components/Field.tsx';
import { Table } from '../../components/Table.tsx';
import { usePaged } from '../../components/usePaged.ts';
import { useSession } from '../../session.tsx';
import type { SlaPolicy, Team } from './types.ts';
import '../../components/pieces.css';

interface Form {
  name: string;
  firstResponseMinutes: string;
  resolutionMinutes: string;
  businessHours: boolean;
  labels: string;
  teamIds: string[];
  position: string;
}
const EMPTY: Form = {
  name: '',
  firstResponseMinutes: '',
  resolutionMinutes: '',
  businessHours: false,
  labels: '',
  teamIds: [],
  position: '0',
};
const minutesOrNull = (v: string) => (v.trim() === '' ? null : Number(v));

export function SlaPoliciesPage() {
  const { api } = useAccount();
  const { state } = useSession();
  const admin = state.status === 'signed-in' && state.user.role !== 'agent';
  const list = usePaged<SlaPolicy>(() => api.slaPolicies.list(), [api]);
  const teams = usePaged<Team>(() => api.teams.list({ limit: 100 }), [api]);
  const [form, setForm] = useState<Form>(EMPTY);
  const [editing, setEditing] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const teamsId = useId();
  const set = (k: keyof Form) => (e: { target: { value: string } }) =>
    setForm((f) => ({ ...f, [k]: e.target.value }));
  const teamName = (id: string) => teams.items?.find((t) => t.id === id)?.name ?? id;
  const minutes = (n: number | null) => (n === null ? '—' : `${n} min`);

  return (
    <section aria-labelledby="page-title">
      <p>
        <Link to="/inbox">← Back to the inbox</Link>
      </p>
      <h1 id="page-title">SLA policies</h1>
      <p className="muted">
        How soon a conversation is to get its first reply and be closed. The first policy that holds (lowest
        position first) applies as a conversation opens, reopens, or its labels or team change.
        {admin ? null : ' Only an administrator changes them.'}
      </p>
      <ErrorMessage error={list.error ?? teams.error} />
      <Table
        caption="SLA policies"
        rows={list.items ?? []}
        rowKey={(p) => p.id}
        empty="No SLA policies yet."
        columns={[
          { header: 'Position', cell: (p) => p.position },
          { header: 'Name', cell: (p) => p.name },
          { header: 'First response', cell: (p) => minutes(p.firstResponseMinutes) },
          { header: 'Resolution', cell: (p) => minutes(p.resolutionMinutes) },
          { header: 'Hours', cell: (p) => (p.businessHours ? 'Business hours' : 'Around the clock') },
          { header: 'Labels', cell: (p) => (p.labels.length ? p.labels.join(', ') : 'Any') },
          { header: 'Teams', cell: (p) => (p.teamIds.length ? p.teamIds.map(teamName).join(', ') : 'Any') },
          ...(admin
            ? [
                {
                  header: 'Actions',
                  cell: (p: SlaPolicy) => (
                    <span className="toolbar">
                      <Button
                        aria-label={`Edit ${p.name}`}
                        onClick={() => {
                          setEditing(p.id);
                          setError(null);
                          setForm({
                            name: p.name,
                            firstResponseMinutes: p.firstResponseMinutes?.toString() ?? '',
                            resolutionMinutes: p.resolutionMinutes?.toString() ?? '',
                            businessHours: p.businessHours,
                            labels: p.labels.join(', '),
                            teamIds: p.teamIds,
                            position: String(p.position),
                          });
                        }}
                      >
                        Edit
                      </Button>
                      <ConfirmButton
                        label="Delete"
                        ariaLabel={`Delete ${p.name}`}
                        title={`Delete ${p.name}?`}
                        confirmLabel="Delete"
                        variant="danger"
                        onConfirm={async () => {
                          await api.slaPolicies.delete(p.id);
                          list.reload();
                        }}
                      >
                        Its conversations lose their due times; breaches already found stay.
                      </ConfirmButton>
                    </span>
                  ),
                },
              ]
            : []),
        ]}
      />
      {admin ? (
        <form
          className="panel"
          onSubmit={async (e) => {
            e.preventDefault();
            setBusy(true);
            setError(null);
            const body = {
              name: form.name,
              firstResponseMinutes: minutesOrNull(form.firstResponseMinutes),
              resolutionMinutes: minutesOrNull(form.resolutionMinutes),
              businessHours: form.businessHours,
              labels: form.labels
                .split(',')
                .map((l) => l.trim())
                .filter(Boolean),
              teamIds: form.teamIds,
              position: Number(form.position || 0),
            };
            try {
              if (editing) await api.slaPolicies.update(editing, body);
              else await api.slaPolicies.create(body);
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
          <h2>{editing ? `Change ${form.name}` : 'New SLA policy'}</h2>
          <Field label="Name" required maxLength={100} value={form.name} onChange={set('name')} />
          <Field
            label="First response (minutes)"
            hint="Empty: no first response target."
            type="number"
            min={1}
            max={43200}
            value={form.firstResponseMinutes}
            onChange={set('firstResponseMinutes')}
          />
          <Field
            label="Resolution (minutes)"
            hint="Empty: no resolution target. At most 43,200 (30 days)."
            type="number"
            min={1}
            max={43200}
            value={form.resolutionMinutes}
            onChange={set('resolutionMinutes')}
          />
          <label className="choice">
            <input
              type="checkbox"
              checked={form.businessHours}
              onChange={(e) => setForm((f) => ({ ...f, businessHours: e.target.checked }))}
            />{' '}
            Count business hours only
          </label>
          <Field
            label="Labels"
            hint="Comma-separated; empty: whatever the labels."
            value={form.labels}
            onChange={set('labels')}
          />
          <div className="field">
            <label htmlFor={teamsId}>Teams</label>
            <p className="field-hint" id={`${teamsId}-hint`}>
              None picked: any team or none.
            </p>
            <select
              id={teamsId}
              className="input"
              multiple
              aria-describedby={`${teamsId}-hint`}
              value={form.teamIds}
              onChange={(e) =>
                setForm((f) => ({ ...f, teamIds: Array.from(e.target.selectedOptions, (o) => o.value) }))
              }
            >
              {(teams.items ?? []).map((t) => (
                <option key={t.id} value={t.id}>
                  {t.name}
                </option>
              ))}
            </select>
          </div>
          <Field
            label="Position"
            hint="Lowest first."
            type="number"
            min={0}
            value={form.position}
            onChange={set('position')}
          />
          <ErrorMessage error={error} />
          <div className="toolbar">
            <Button type="submit" variant="primary" busy={busy}>
              {editing ? 'Save' : 'Add SLA policy'}
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
      ) : null}
    </section>
  );
}
