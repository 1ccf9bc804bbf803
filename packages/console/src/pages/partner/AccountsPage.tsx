// The partner's accounts (GET /partner/accounts) and provisioning a new one (POST
// /partner/accounts: name, country, plan, your reference, the API access add-on).
import type { ItemOf } from '@tidings/sdk';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { useAccount } from '../../account.tsx';
import { client, type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Field } from '../../components/Field.tsx';
import { dateTime, money } from '../../components/format.ts';
import { SelectField } from '../../components/SelectField.tsx';
import { type Column, Table } from '../../components/Table.tsx';
import { useLoad } from '../../components/useLoad.ts';
import '../../components/pieces.css';
import { formValues } from '../forms.ts';
import { PLAN_OPTIONS, planName, STATUS_NAMES } from './plans.ts';

type PartnerAccount = ItemOf<'/api/v1/public/partner/accounts'>;

export function AccountsPage() {
  const accounts = useLoad(() => client.partner.accounts.list({ limit: 100 }).toArray(5000), []);
  const columns: Column<PartnerAccount>[] = [
    { header: 'Name', cell: (a) => <Link to={`/partner/accounts/${a.accountId}`}>{a.accountName}</Link> },
    { header: 'Plan', cell: (a) => planName(a.planCode) },
    { header: 'Country', cell: (a) => a.countryCode },
    { header: 'Status', cell: (a) => STATUS_NAMES[a.status] ?? a.status },
    { header: 'Wallet', cell: (a) => money(a.walletBalance), numeric: true },
    { header: 'Your reference', cell: (a) => a.externalRef ?? '—' },
    { header: 'Created', cell: (a) => dateTime(a.createdAt) },
  ];

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Partner admin: accounts
      </h1>
      <p className="muted">
        The accounts of your partner: your clients. Open one to change its plan, credit its wallet, suspend or
        close it. Your <Link to="/partner/meta-app">Meta app</Link> lets them connect their own WhatsApp
        numbers.
      </p>
      <ErrorMessage error={accounts.error} />
      {accounts.data ? (
        <Table
          caption="The partner's accounts, newest first"
          columns={columns}
          rows={accounts.data}
          rowKey={(a) => a.accountId}
          empty="No accounts yet: provision the first one below."
        />
      ) : accounts.loading ? (
        <p className="muted">Loading accounts…</p>
      ) : null}
      <Provision />
    </section>
  );
}

function Provision() {
  const { reloadAccounts } = useAccount();
  const navigate = useNavigate();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);

  return (
    <div className="block">
      <h2>Provision an account</h2>
      <form
        onSubmit={async (event) => {
          const v = formValues(event);
          setBusy(true);
          setError(null);
          try {
            const made = await client.partner.accounts.create({
              accountName: v.accountName!.trim(),
              countryCode: v.countryCode!.trim().toUpperCase(),
              planCode: v.planCode as (typeof PLAN_OPTIONS)[number]['value'],
              ...(v.externalRef?.trim() ? { externalRef: v.externalRef.trim() } : {}),
              ...(v.apiAccess ? { addons: ['api_access'] } : {}),
            });
            reloadAccounts();
            navigate(`/partner/accounts/${made.accountId}`, {
              state: { notice: `${made.accountName} is provisioned.` },
            });
          } catch (err) {
            setError(shownError(err));
            setBusy(false);
          }
        }}
      >
        <Field label="Account name" name="accountName" required maxLength={200} autoComplete="organization" />
        <Field
          label="Country"
          name="countryCode"
          required
          minLength={2}
          maxLength={2}
          pattern="[A-Za-z]{2}"
          autoComplete="country"
          hint="Two letters (ISO 3166-1), e.g. US, GB, BR."
        />
        <SelectField label="Plan" name="planCode" options={PLAN_OPTIONS} defaultValue="business" />
        <Field
          label="Your reference"
          name="externalRef"
          maxLength={200}
          hint="Optional: your own id for this client, unique among your accounts."
        />
        <label className="choice">
          <input type="checkbox" name="apiAccess" value="yes" /> API access add-on (for the Pro plan)
        </label>
        <ErrorMessage error={error} />
        <Button type="submit" variant="primary" busy={busy} className="load-more">
          Provision
        </Button>
      </form>
    </div>
  );
}
