// The account's team: its members (who conversations are assigned to, and who may sign in to the
// console), adding one, giving one a login by a one-time invitation link (shown once: there is no
// mail server, the admin hands it over), and removing one (its login and sessions go with it).
// GET|POST /team/members, POST /team/members/{id}/invitation, DELETE /team/members/{id}.
import type { ItemOf } from '@tidings/sdk';
import { useRef, useState } from 'react';
import { useAccount } from '../../account.tsx';
import { type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmButton } from '../../components/ConfirmButton.tsx';
import { closeDialogOf, Dialog } from '../../components/Dialog.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Field } from '../../components/Field.tsx';
import { dateTime } from '../../components/format.ts';
import { SecretOnce } from '../../components/SecretOnce.tsx';
import { SelectField } from '../../components/SelectField.tsx';
import { type Column, Table } from '../../components/Table.tsx';
import { useLoad } from '../../components/useLoad.ts';
import { formValues } from '../forms.ts';

type Member = ItemOf<'/api/v1/public/team/members'>;

const ROLES = [
  { value: 'agent', label: 'Agent: the inbox, contacts and templates' },
  { value: 'admin', label: 'Admin: everything of this account' },
];

export function TeamPage() {
  const { api } = useAccount();
  const listMembers = () => api.team.list({ limit: 100 }).toArray(1000);
  const members = useLoad(listMembers, [api]);
  const [invited, setInvited] = useState<{ name: string; url: string; expiresAt: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const [rowError, setRowError] = useState<ShownError | null>(null);
  const form = useRef<HTMLFormElement>(null);
  const lastInviter = useRef<HTMLButtonElement | null>(null);

  const invite = async (m: Member, button: HTMLButtonElement) => {
    setRowError(null);
    lastInviter.current = button;
    try {
      const answer = await api.team.invite(m.id);
      setInvited({ name: m.name, url: answer.url, expiresAt: answer.expiresAt });
    } catch (err) {
      setRowError(shownError(err));
    }
  };

  const columns: Column<Member>[] = [
    { header: 'Name', cell: (m) => m.name },
    { header: 'Email', cell: (m) => m.email },
    { header: 'Role', cell: (m) => (m.role === 'admin' ? 'Admin' : 'Agent') },
    { header: 'Added', cell: (m) => dateTime(m.createdAt) },
    {
      header: 'Actions',
      cell: (m) => (
        <div className="actions">
          <Button
            variant="secondary"
            aria-label={`Invite ${m.name} to sign in`}
            onClick={(e) => invite(m, e.currentTarget)}
          >
            Invite
          </Button>
          <ConfirmButton
            label="Remove"
            ariaLabel={`Remove ${m.name}`}
            variant="danger"
            title={`Remove “${m.name}”?`}
            confirmLabel="Remove the member"
            onConfirm={async () => {
              await api.team.delete(m.id);
              members.setData(await listMembers());
            }}
          >
            <p>Their conversations become unassigned, and their console login and sessions end at once.</p>
          </ConfirmButton>
        </div>
      ),
    },
  ];

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Team
      </h1>
      <p className="muted">
        Members are who conversations are assigned to. An invitation gives one a console login: agents work in
        the inbox, admins manage everything of this account.
      </p>

      <div className="block">
        <h2>Add a member</h2>
        <form
          ref={form}
          onSubmit={async (event) => {
            const v = formValues(event);
            setBusy(true);
            setError(null);
            try {
              await api.team.create({
                name: v.name!.trim(),
                email: v.email!.trim(),
                role: v.role === 'admin' ? 'admin' : 'agent',
              });
              form.current?.reset();
              members.reload();
            } catch (err) {
              setError(shownError(err));
            } finally {
              setBusy(false);
            }
          }}
        >
          <Field label="Name" name="name" required maxLength={200} />
          <Field label="Email" name="email" type="email" required maxLength={254} />
          <SelectField label="Role" name="role" options={ROLES} defaultValue="agent" />
          <ErrorMessage error={error} />
          <Button type="submit" variant="primary" busy={busy}>
            Add member
          </Button>
        </form>
      </div>

      <ErrorMessage error={members.error ?? rowError} />
      {members.data ? (
        <Table
          caption="Team members of this account"
          columns={columns}
          rows={members.data}
          rowKey={(m) => m.id}
          empty="No members yet."
        />
      ) : members.loading ? (
        <p className="muted">Loading members…</p>
      ) : null}

      {invited ? (
        <Dialog
          title={`Invitation for ${invited.name}`}
          onClose={() => setInvited(null)}
          returnTo={() => lastInviter.current}
        >
          <SecretOnce label="Invitation link" secret={invited.url} />
          <p>
            Give it to {invited.name}: it works once, until {dateTime(invited.expiresAt)}, and lets them
            choose a password.
          </p>
          <div className="dialog-actions">
            <Button variant="secondary" onClick={(e) => closeDialogOf(e.currentTarget)}>
              Close
            </Button>
          </div>
        </Dialog>
      ) : null}
    </section>
  );
}
