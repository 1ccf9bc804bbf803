// The account's wallet: its balance (GET /account/wallet) and its transactions, newest first
// (GET /account/wallet/transactions), a page at a time with "Load more".
import type { ItemOf } from '@tidings/sdk';
import { useEffect, useState } from 'react';
import { useAccount } from '../../account.tsx';
import { type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { dateTime, money } from '../../components/format.ts';
import { type Column, Table } from '../../components/Table.tsx';
import { useLoad } from '../../components/useLoad.ts';

type Transaction = ItemOf<'/api/v1/public/account/wallet/transactions'>;

const PAGE = 20;

const TYPES: Record<string, string> = {
  credit: 'Credit',
  debit: 'Charge',
  refund: 'Refund',
  adjustment: 'Adjustment',
};

export const TRANSACTION_COLUMNS: Column<Transaction>[] = [
  { header: 'Date', cell: (t) => dateTime(t.createdAt) },
  { header: 'Type', cell: (t) => TYPES[t.type] ?? t.type },
  { header: 'Amount', cell: (t) => money(t.amount), numeric: true },
  { header: 'Balance after', cell: (t) => money(t.balanceAfter), numeric: true },
  { header: 'Reference', cell: (t) => t.reference ?? '—' },
  { header: 'Description', cell: (t) => t.description ?? '—' },
];

export function WalletPage() {
  const { api } = useAccount();
  const wallet = useLoad(() => api.account.wallet(), [api]);
  const [rows, setRows] = useState<Transaction[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const [busy, setBusy] = useState(false);

  const load = async (from: string | null) => {
    setBusy(true);
    try {
      const page = await api.account.transactions({ limit: PAGE, ...(from ? { cursor: from } : {}) }).page();
      setRows((old) => (from ? [...(old ?? []), ...page.data] : page.data));
      setCursor(page.nextCursor);
      setError(null);
    } catch (err) {
      setError(shownError(err));
    } finally {
      setBusy(false);
    }
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: the first page again for another account
  useEffect(() => {
    setRows(null);
    void load(null);
  }, [api]);

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Wallet
      </h1>
      <ErrorMessage error={wallet.error} />
      {wallet.data ? (
        <div className="block">
          <dl className="summary">
            <dt>Balance</dt>
            <dd>
              <strong>{money(wallet.data.balance)}</strong>
            </dd>
            <dt>Low-balance alert below</dt>
            <dd>{wallet.data.lowBalanceThreshold ? money(wallet.data.lowBalanceThreshold) : 'Off'}</dd>
          </dl>
        </div>
      ) : null}
      <ErrorMessage error={error} />
      {rows ? (
        <>
          <Table
            caption="Wallet transactions, newest first"
            columns={TRANSACTION_COLUMNS}
            rows={rows}
            rowKey={(t) => t.id}
            empty="No transactions yet."
          />
          {cursor ? (
            <Button className="load-more" busy={busy} onClick={() => load(cursor)}>
              Load more
            </Button>
          ) : null}
        </>
      ) : busy ? (
        <p className="muted">Loading transactions…</p>
      ) : null}
    </section>
  );
}
