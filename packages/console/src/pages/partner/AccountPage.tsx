// One of the partner's accounts: its details, its plan (PATCH), crediting its wallet (POST
// …/wallet/credits), suspend, reactivate and close (each confirmed), and its usage (GET …/usage).
// The usage report brings uPlot, so it is loaded when this page shows it.
import { lazy, Suspense, useState } from 'react';
import { Link, useLocation, useParams } from 'react-router-dom';
import { useAccount } from '../../account.tsx';
import { client, type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmButton } from '../../components/ConfirmButton.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Field } from '../../components/Field.tsx';
import { dateTime, money } from '../../components/format.ts';
import { Loading } from '../../components/Loading.tsx';
import { SelectField } from '../../components/SelectField.tsx';
import { useLoad } from '../../components/useLoad.ts';
import '../../components/pieces.css';
import { formValues } from '../forms.ts';
import { PLAN_OPTIONS, planName, STATUS_NAMES } from './plans.ts';

const UsageExplorer = lazy(() =>
  import('../../components/UsageReport.tsx').then((m) => ({ default: m.UsageExplorer })),
);

type PlanCode = (typeof PLAN_OPTIONS)[number]['value'];

export function AccountPage() {
  const { id = '' } = useParams();
  const location = useLocation();
  const { reloadAccounts } = useAccount();
  const account = useLoad(() => client.partner.accounts.get(id), [id]);
  const [notice, setNotice] = useState<string | null>(
    (location.state as { notice?: string } | null)?.notice ?? null,
  );
  const [planBusy, setPlanBusy] = useState(false);
  const [planError, setPlanError] = useState<ShownError | null>(null);
  const [creditBusy, setCreditBusy] = useState(false);
  const [creditError, setCreditError] = useState<ShownError | null>(null);

  const a = account.data;
  const open = a !== null && a.status !== 'CLOSED';
  /** After a status change: this page's copy and the account picker. */
  const changed = (next: NonNullable<typeof a>, message: string) => {
    account.setData(next);
    setNotice(message);
    reloadAccounts();
  };

  return (
    <section aria-labelledby="page-title">
      <p>
        <Link to="/partner">← All accounts</Link>
      </p>
      <h1 id="page-title" tabIndex={-1}>
        {a ? a.accountName : 'Account'}
      </h1>
      <p role="status">{notice}</p>
      <ErrorMessage error={account.error} />
      {a ? (
        <>
          <div className="block">
            <dl className="summary">
              <dt>Account id</dt>
              <dd>
                <code>{a.accountId}</code>
              </dd>
              <dt>Status</dt>
              <dd>{STATUS_NAMES[a.status] ?? a.status}</dd>
              <dt>Plan</dt>
              <dd>
                {planName(a.planCode)}
                {a.addons.length > 0 ? ` (add-ons: ${a.addons.join(', ')})` : ''}
              </dd>
              <dt>Country</dt>
              <dd>{a.countryCode}</dd>
              <dt>Wallet balance</dt>
              <dd data-testid="wallet-balance">{money(a.walletBalance)}</dd>
              <dt>Your reference</dt>
              <dd>{a.externalRef ?? '—'}</dd>
              <dt>Created</dt>
              <dd>{dateTime(a.createdAt)}</dd>
              {a.closedAt ? (
                <>
                  <dt>Closed</dt>
                  <dd>{dateTime(a.closedAt)}</dd>
                </>
              ) : null}
            </dl>
            {open ? (
              <div className="actions">
                {a.status === 'ACTIVE' ? (
                  <ConfirmButton
                    label="Suspend"
                    title={`Suspend ${a.accountName}?`}
                    confirmLabel="Suspend the account"
                    onConfirm={async () =>
                      changed(await client.partner.accounts.suspend(id), `${a.accountName} is suspended.`)
                    }
                  >
                    <p>Its keys and logins are refused (403) until you reactivate it. Nothing is deleted.</p>
                  </ConfirmButton>
                ) : (
                  <ConfirmButton
                    label="Reactivate"
                    title={`Reactivate ${a.accountName}?`}
                    confirmLabel="Reactivate the account"
                    onConfirm={async () =>
                      changed(
                        await client.partner.accounts.reactivate(id),
                        `${a.accountName} is active again.`,
                      )
                    }
                  >
                    <p>Its keys and logins work again.</p>
                  </ConfirmButton>
                )}
                <ConfirmButton
                  label="Close account"
                  variant="danger"
                  title={`Close ${a.accountName} for good?`}
                  confirmLabel="Close the account"
                  onConfirm={async () => {
                    await client.partner.accounts.close(id);
                    changed(await client.partner.accounts.get(id), `${a.accountName} is closed.`);
                  }}
                >
                  <p>
                    A closed account cannot be reopened: its keys and logins stop working for good. Its data
                    is kept.
                  </p>
                </ConfirmButton>
              </div>
            ) : null}
          </div>

          {open ? (
            <div className="block">
              <h2>Plan</h2>
              <form
                className="row-form"
                onSubmit={async (event) => {
                  const v = formValues(event);
                  setPlanBusy(true);
                  setPlanError(null);
                  try {
                    const next = await client.partner.accounts.update(id, {
                      planCode: v.planCode as PlanCode,
                    });
                    changed(next, `The plan is now ${planName(next.planCode)}.`);
                  } catch (err) {
                    setPlanError(shownError(err));
                  } finally {
                    setPlanBusy(false);
                  }
                }}
              >
                <SelectField
                  key={a.planCode}
                  label="Plan"
                  name="planCode"
                  options={PLAN_OPTIONS}
                  defaultValue={a.planCode}
                />
                <Button type="submit" busy={planBusy}>
                  Change plan
                </Button>
              </form>
              <ErrorMessage error={planError} />
            </div>
          ) : null}

          {open ? (
            <div className="block">
              <h2>Credit the wallet</h2>
              <form
                onSubmit={async (event) => {
                  const form = event.currentTarget;
                  const v = formValues(event);
                  setCreditBusy(true);
                  setCreditError(null);
                  try {
                    const txn = await client.partner.accounts.credit(id, {
                      amount: v.amount!.trim(),
                      ...(v.reference?.trim() ? { reference: v.reference.trim() } : {}),
                      ...(v.description?.trim() ? { description: v.description.trim() } : {}),
                    });
                    form.reset();
                    account.setData({ ...a, walletBalance: txn.balanceAfter });
                    setNotice(
                      `Credited ${money(txn.amount)}. The balance is now ${money(txn.balanceAfter)}.`,
                    );
                  } catch (err) {
                    setCreditError(shownError(err));
                  } finally {
                    setCreditBusy(false);
                  }
                }}
              >
                <div className="row-form">
                  <Field
                    label="Amount"
                    name="amount"
                    required
                    inputMode="decimal"
                    pattern="\d+(\.\d{1,6})?"
                    hint={`In ${a.walletBalance.currency}, e.g. 25.00.`}
                  />
                  <Field
                    label="Reference"
                    name="reference"
                    maxLength={200}
                    hint="Optional, e.g. an invoice."
                  />
                  <Field label="Description" name="description" maxLength={500} hint="Optional." />
                </div>
                <ErrorMessage error={creditError} />
                <Button type="submit" variant="primary" busy={creditBusy}>
                  Credit the wallet
                </Button>
              </form>
            </div>
          ) : null}

          <div className="block">
            <h2>Usage</h2>
            <Suspense fallback={<Loading what="Loading the usage report…" />}>
              <UsageExplorer
                loadKey={id}
                load={(range) =>
                  client.request('get', '/api/v1/public/partner/accounts/{accountId}/usage', {
                    params: { accountId: id },
                    query: range,
                  })
                }
                caption={`API calls per day of ${a.accountName} (UTC)`}
              />
            </Suspense>
          </div>
        </>
      ) : account.loading ? (
        <p className="muted">Loading the account…</p>
      ) : null}
    </section>
  );
}
