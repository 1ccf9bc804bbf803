// One webhook: its settings, a test event, enable/disable, delete, and the delivery log (each
// delivery's status, attempts, last status code, latency and the receiver's answer), with a retry
// per delivery. After an action the log refreshes itself for a while, so the outcome shows up.
import type { ItemOf } from '@tidings/sdk';
import { useCallback, useEffect, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router-dom';
import { useAccount } from '../../account.tsx';
import { type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmButton } from '../../components/ConfirmButton.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { dateTime } from '../../components/format.ts';
import { type Column, Table } from '../../components/Table.tsx';
import { useLoad } from '../../components/useLoad.ts';
import { webhookState } from './WebhooksPage.tsx';

type Delivery = ItemOf<'/api/v1/public/webhooks/{id}/deliveries'>;

const PAGE = 20;
/** How long the log keeps refreshing after a test or a retry. */
const WATCH_MS = 30_000;

function deliveryStatus(d: Delivery): { text: string; className?: string } {
  if (d.status === 'succeeded') return { text: 'Succeeded', className: 'status-ok' };
  if (d.status === 'failed') return { text: 'Failed', className: 'status-bad' };
  if (d.attemptCount === 0) return { text: 'Pending' };
  return { text: `Failed, retrying ${dateTime(d.nextAttemptAt)}`, className: 'status-bad' };
}

export function WebhookPage() {
  const { id = '' } = useParams();
  const { api } = useAccount();
  const navigate = useNavigate();
  const hook = useLoad(() => api.webhooks.get(id), [api, id]);
  const [deliveries, setDeliveries] = useState<Delivery[] | null>(null);
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [logError, setLogError] = useState<ShownError | null>(null);
  const [actionError, setActionError] = useState<ShownError | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [watchUntil, setWatchUntil] = useState(0);
  const [busy, setBusy] = useState<string | null>(null);

  /** The newest deliveries again, as many as are shown (a refresh keeps what "load more" added). */
  const refresh = useCallback(
    async (shown: number) => {
      try {
        const page = await api.webhooks
          .deliveries(id, { limit: Math.min(100, Math.max(PAGE, shown)) })
          .page();
        setDeliveries(page.data);
        setNextCursor(page.nextCursor);
        setLogError(null);
      } catch (err) {
        setLogError(shownError(err));
      }
    },
    [api, id],
  );

  useEffect(() => {
    void refresh(PAGE);
  }, [refresh]);

  const shown = deliveries?.length ?? 0;
  useEffect(() => {
    if (watchUntil <= Date.now()) return;
    const timer = setInterval(() => {
      if (Date.now() > watchUntil) clearInterval(timer);
      else void refresh(shown);
    }, 1000);
    return () => clearInterval(timer);
  }, [watchUntil, refresh, shown]);

  const act = async (name: string, run: () => Promise<string>) => {
    setBusy(name);
    setActionError(null);
    setNotice(null);
    try {
      setNotice(await run());
      setWatchUntil(Date.now() + WATCH_MS);
      await refresh(shown);
    } catch (err) {
      setActionError(shownError(err));
    } finally {
      setBusy(null);
    }
  };

  const columns: Column<Delivery>[] = [
    { header: 'Created', cell: (d) => dateTime(d.createdAt) },
    { header: 'Event', cell: (d) => <code>{d.eventType}</code> },
    {
      header: 'Status',
      cell: (d) => {
        const s = deliveryStatus(d);
        return <span className={s.className}>{s.text}</span>;
      },
    },
    { header: 'Attempts', cell: (d) => d.attemptCount, numeric: true },
    { header: 'Last status code', cell: (d) => d.lastStatusCode ?? '—', numeric: true },
    {
      header: 'Latency',
      cell: (d) => {
        const last = d.attempts[d.attempts.length - 1];
        return last ? `${last.latencyMs} ms` : '—';
      },
      numeric: true,
    },
    {
      header: 'Response',
      cell: (d) => {
        const last = d.attempts[d.attempts.length - 1];
        const text = last?.responseExcerpt || last?.error || d.lastError;
        return text ? <code className="excerpt">{text}</code> : '—';
      },
    },
    {
      header: 'Actions',
      cell: (d) => (
        <Button
          aria-label={`Retry delivery ${d.id}`}
          busy={busy === d.id}
          onClick={() =>
            act(d.id, async () => {
              await api.webhooks.retryDelivery(id, d.id);
              return `Delivery ${d.id} is being sent again.`;
            })
          }
        >
          Retry
        </Button>
      ),
    },
  ];

  const w = hook.data;
  return (
    <section aria-labelledby="page-title">
      <p>
        <Link to="/portal/webhooks">← All webhooks</Link>
      </p>
      <h1 id="page-title" tabIndex={-1}>
        Webhook
      </h1>
      <ErrorMessage error={hook.error} />
      {w ? (
        <div className="block">
          <dl className="summary">
            <dt>URL</dt>
            <dd>
              <code>{w.url}</code>
            </dd>
            <dt>Description</dt>
            <dd>{w.description ?? '—'}</dd>
            <dt>Events</dt>
            <dd>{w.events.join(', ')}</dd>
            <dt>State</dt>
            <dd>{webhookState(w)}</dd>
            <dt>Created</dt>
            <dd>{dateTime(w.createdAt)}</dd>
          </dl>
          <div className="actions">
            <Button
              variant="primary"
              busy={busy === 'test'}
              onClick={() =>
                act('test', async () => {
                  const d = await api.webhooks.test(id);
                  return `Test event sent: delivery ${d.id}.`;
                })
              }
            >
              Send a test event
            </Button>
            {w.enabled ? (
              <ConfirmButton
                label="Disable"
                title="Disable this webhook?"
                confirmLabel="Disable"
                onConfirm={async () => {
                  hook.setData(await api.webhooks.update(id, { enabled: false }));
                }}
              >
                <p>No events are sent while it is disabled, and its pending deliveries fail.</p>
              </ConfirmButton>
            ) : (
              <Button
                busy={busy === 'enable'}
                onClick={() =>
                  act('enable', async () => {
                    hook.setData(await api.webhooks.update(id, { enabled: true }));
                    return 'The webhook is enabled.';
                  })
                }
              >
                Enable
              </Button>
            )}
            <ConfirmButton
              label="Delete"
              variant="danger"
              title="Delete this webhook?"
              confirmLabel="Delete the webhook"
              onConfirm={async () => {
                await api.webhooks.delete(id);
                navigate('/portal/webhooks');
              }}
            >
              <p>
                Events stop going to <code>{w.url}</code> and its delivery log is deleted. This cannot be
                undone.
              </p>
            </ConfirmButton>
          </div>
        </div>
      ) : hook.loading ? (
        <p className="muted">Loading the webhook…</p>
      ) : null}

      <p role="status">{notice}</p>
      <ErrorMessage error={actionError} />

      <div className="page-head">
        <h2>Delivery log</h2>
        <Button variant="quiet" onClick={() => refresh(shown)}>
          Refresh
        </Button>
      </div>
      <ErrorMessage error={logError} />
      {deliveries ? (
        <>
          <Table
            caption="Deliveries of this webhook, newest first"
            columns={columns}
            rows={deliveries}
            rowKey={(d) => d.id}
            empty="No deliveries yet: send a test event."
          />
          {nextCursor ? (
            <Button
              className="load-more"
              busy={busy === 'more'}
              onClick={async () => {
                setBusy('more');
                try {
                  const page = await api.webhooks.deliveries(id, { limit: PAGE, cursor: nextCursor }).page();
                  setDeliveries((list) => [...(list ?? []), ...page.data]);
                  setNextCursor(page.nextCursor);
                } catch (err) {
                  setLogError(shownError(err));
                } finally {
                  setBusy(null);
                }
              }}
            >
              Load more
            </Button>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
