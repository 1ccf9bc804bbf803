// Webhooks of the account: the list, and a new one (URL, the events to send, a description) whose
// signing secret is shown once. Each webhook's page has its test event and delivery log.
import type { ItemOf } from '@tidings/sdk';
import { useId, useState } from 'react';
import { Link } from 'react-router-dom';
import { useAccount } from '../../account.tsx';
import { type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { closeDialogOf, Dialog } from '../../components/Dialog.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Field } from '../../components/Field.tsx';
import { dateTime } from '../../components/format.ts';
import { SecretOnce } from '../../components/SecretOnce.tsx';
import { type Column, Table } from '../../components/Table.tsx';
import { useLoad } from '../../components/useLoad.ts';
import { eventFamilies } from './events.ts';

type Webhook = ItemOf<'/api/v1/public/webhooks'>;

export function webhookState(w: Pick<Webhook, 'enabled' | 'disabledReason'>): string {
  return w.enabled ? 'Enabled' : `Disabled${w.disabledReason ? ` (${w.disabledReason})` : ''}`;
}

export function WebhooksPage() {
  const { api } = useAccount();
  const hooks = useLoad(() => api.webhooks.list({ limit: 100 }).toArray(1000), [api]);
  const [created, setCreated] = useState<{ id: string; url: string; secret: string } | null>(null);

  const columns: Column<Webhook>[] = [
    { header: 'URL', cell: (w) => <Link to={`/portal/webhooks/${w.id}`}>{w.url}</Link> },
    { header: 'Description', cell: (w) => w.description ?? '—' },
    { header: 'Events', cell: (w) => w.events.join(', ') },
    { header: 'State', cell: (w) => webhookState(w) },
    { header: 'Created', cell: (w) => dateTime(w.createdAt) },
  ];

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Webhooks
      </h1>
      <p className="muted">
        Tidings POSTs events to your URL, signed with the webhook's secret (Standard Webhooks), and retries
        failed deliveries for up to five days.
      </p>
      <ErrorMessage error={hooks.error} />
      {hooks.data ? (
        <Table
          caption="Webhooks of this account"
          columns={columns}
          rows={hooks.data}
          rowKey={(w) => w.id}
          empty="No webhooks yet."
        />
      ) : hooks.loading ? (
        <p className="muted">Loading webhooks…</p>
      ) : null}

      <CreateWebhook
        onCreated={(w) => {
          setCreated(w);
          hooks.reload();
        }}
      />

      {created ? (
        <Dialog
          title="Your new webhook's signing secret"
          onClose={() => setCreated(null)}
          returnTo={() => document.querySelector('#add-webhook button[type="submit"]')}
        >
          <p>
            Verify each delivery to <code>{created.url}</code> with this secret.
          </p>
          <SecretOnce label="Signing secret" secret={created.secret} />
          <div className="dialog-actions">
            <Link className="btn btn-secondary" to={`/portal/webhooks/${created.id}`}>
              Open the webhook
            </Link>
            <Button onClick={(e) => closeDialogOf(e.currentTarget)}>I have stored it: close</Button>
          </div>
        </Dialog>
      ) : null}
    </section>
  );
}

function CreateWebhook({
  onCreated,
}: {
  onCreated: (w: { id: string; url: string; secret: string }) => void;
}) {
  const { api } = useAccount();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const [eventsError, setEventsError] = useState<string | null>(null);
  const [all, setAll] = useState(false);
  const eventsErrorId = useId();

  return (
    <div className="block">
      <h2>Add a webhook</h2>
      <form
        id="add-webhook"
        onSubmit={async (event) => {
          event.preventDefault();
          const form = event.currentTarget;
          const data = new FormData(form);
          const events = data.getAll('events').map(String);
          if (events.length === 0) {
            setEventsError('Choose at least one event, or all events.');
            return;
          }
          setEventsError(null);
          setBusy(true);
          setError(null);
          try {
            const description = String(data.get('description') ?? '').trim();
            const answer = await api.webhooks.create({
              url: String(data.get('url')).trim(),
              events: events.includes('*') ? ['*'] : events,
              ...(description ? { description } : {}),
            });
            form.reset();
            setAll(false);
            onCreated({ id: answer.id, url: answer.url, secret: answer.secret });
          } catch (err) {
            setError(shownError(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <Field
          label="URL"
          name="url"
          type="url"
          required
          maxLength={2048}
          placeholder="https://example.com/hooks/tidings"
          hint="An https address your server answers on."
        />
        <Field label="Description" name="description" maxLength={500} hint="Optional: what it feeds." />
        <fieldset
          className="choices"
          aria-describedby={eventsError ? eventsErrorId : undefined}
          aria-invalid={eventsError ? true : undefined}
        >
          <legend>Events</legend>
          <label className="choice">
            <input
              type="checkbox"
              name="events"
              value="*"
              checked={all}
              onChange={(e) => setAll(e.target.checked)}
            />{' '}
            All events, including types added later
          </label>
          {eventFamilies().map(({ family, types }) => (
            <fieldset key={family} className="choices" disabled={all}>
              <legend>{family.replaceAll('_', ' ')}</legend>
              <div className="choice-grid">
                {types.map((type) => (
                  <label key={type} className="choice">
                    <input type="checkbox" name="events" value={type} /> <code>{type}</code>
                  </label>
                ))}
              </div>
            </fieldset>
          ))}
          {eventsError ? (
            <p className="field-error" id={eventsErrorId}>
              {eventsError}
            </p>
          ) : null}
        </fieldset>
        <ErrorMessage error={error} />
        <Button type="submit" variant="primary" busy={busy}>
          Add webhook
        </Button>
      </form>
    </div>
  );
}
