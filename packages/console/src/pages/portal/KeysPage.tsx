// API keys of the account: the list (never the key itself: its last four), a new key whose text is
// shown once, and revoking one after a confirmation. GET|POST /keys, DELETE /keys/{id}.
import type { ItemOf } from '@tidings/sdk';
import { useId, useRef, useState } from 'react';
import { useAccount } from '../../account.tsx';
import { type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmButton } from '../../components/ConfirmButton.tsx';
import { closeDialogOf, Dialog } from '../../components/Dialog.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Field } from '../../components/Field.tsx';
import { dateTime } from '../../components/format.ts';
import { SecretOnce } from '../../components/SecretOnce.tsx';
import { type Column, Table } from '../../components/Table.tsx';
import { useLoad } from '../../components/useLoad.ts';
import { formValues } from '../forms.ts';

type Key = ItemOf<'/api/v1/public/keys'>;

const SCOPES: Record<string, string> = { live: 'Live', sandbox: 'Sandbox', partner: 'Partner' };

export function KeysPage() {
  const { api } = useAccount();
  const listKeys = () => api.keys.list({ limit: 100 }).toArray(1000);
  const keys = useLoad(listKeys, [api]);
  const [created, setCreated] = useState<{ name: string; apiKey: string } | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const scopeHint = useId();
  const form = useRef<HTMLFormElement>(null);

  const columns: Column<Key>[] = [
    { header: 'Name', cell: (k) => k.name },
    { header: 'Scope', cell: (k) => SCOPES[k.scope] ?? k.scope },
    { header: 'Key', cell: (k) => <code>…{k.lastFour}</code> },
    { header: 'Created', cell: (k) => dateTime(k.createdAt) },
    { header: 'Last used', cell: (k) => (k.lastUsedAt ? dateTime(k.lastUsedAt) : 'Never') },
    { header: 'Revoked', cell: (k) => (k.revokedAt ? dateTime(k.revokedAt) : 'No') },
    {
      header: 'Actions',
      cell: (k) =>
        k.revokedAt ? null : (
          <ConfirmButton
            label="Revoke"
            ariaLabel={`Revoke ${k.name}`}
            variant="danger"
            title={`Revoke “${k.name}”?`}
            confirmLabel="Revoke the key"
            onConfirm={async () => {
              await api.keys.revoke(k.id);
              // The list as it now is, before the dialog closes: the revoked key loses its button.
              keys.setData(await listKeys());
            }}
          >
            <p>
              Programs using the key ending in <code>{k.lastFour}</code> stop being able to call the API at
              once. This cannot be undone.
            </p>
          </ConfirmButton>
        ),
    },
  ];

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        API keys
      </h1>
      <p className="muted">
        Keys let your programs call the API as this account. Live keys send for real and are charged; sandbox
        keys are simulated and never charged.
      </p>

      <div className="block">
        <h2>Create a key</h2>
        <form
          ref={form}
          onSubmit={async (event) => {
            const v = formValues(event);
            setBusy(true);
            setError(null);
            try {
              const answer = await api.keys.create({
                name: v.name!.trim(),
                scope: v.scope === 'sandbox' ? 'sandbox' : 'live',
              });
              form.current?.reset();
              setCreated({ name: answer.name, apiKey: answer.apiKey });
              keys.reload();
            } catch (err) {
              setError(shownError(err));
            } finally {
              setBusy(false);
            }
          }}
        >
          <Field
            label="Name"
            name="name"
            required
            maxLength={100}
            hint="What the key is for, e.g. “CRM sync”."
          />
          <fieldset className="choices" aria-describedby={scopeHint}>
            <legend>Scope</legend>
            <p className="field-hint" id={scopeHint}>
              Live: real messages and charges. Sandbox: simulated, for tests.
            </p>
            <label className="choice">
              <input type="radio" name="scope" value="live" defaultChecked /> Live
            </label>
            <label className="choice">
              <input type="radio" name="scope" value="sandbox" /> Sandbox
            </label>
          </fieldset>
          <ErrorMessage error={error} />
          <Button type="submit" variant="primary" busy={busy}>
            Create key
          </Button>
        </form>
      </div>

      <ErrorMessage error={keys.error} />
      {keys.data ? (
        <Table
          caption="API keys of this account, newest first"
          columns={columns}
          rows={keys.data}
          rowKey={(k) => k.id}
          empty="No keys yet."
        />
      ) : keys.loading ? (
        <p className="muted">Loading keys…</p>
      ) : null}

      {created ? (
        <Dialog
          title={`Your new key “${created.name}”`}
          onClose={() => setCreated(null)}
          returnTo={() => form.current?.querySelector('button[type="submit"]')}
        >
          <SecretOnce label="API key" secret={created.apiKey} />
          <p>
            Send it in the <code>X-Api-Key</code> header. The list shows only its last four characters.
          </p>
          <div className="dialog-actions">
            <Button variant="secondary" onClick={(e) => closeDialogOf(e.currentTarget)}>
              I have stored it: close
            </Button>
          </div>
        </Dialog>
      ) : null}
    </section>
  );
}
