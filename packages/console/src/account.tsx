// The account the console acts on. An account admin or agent has one (their own, no header); a
// partner admin picks one of the partner's accounts (GET /partner/accounts), sent as X-Account-Id.
import type { Tidings } from '@tidings/sdk';
import { createContext, type ReactNode, useContext, useEffect, useMemo, useState } from 'react';
import { accountClient, type ConsoleUser, client, type ShownError, shownError } from './api.ts';

export interface AccountChoice {
  id: string;
  name: string;
  status: string;
}

interface AccountApi {
  /** The partner's accounts (partner admins only; null while loading). */
  accounts: AccountChoice[] | null;
  accountsError: ShownError | null;
  /** The picked account (partner admin), or null: an account user acts on their own. */
  accountId: string | null;
  pick: (id: string | null) => void;
  /** Reads the partner's accounts again (after one is provisioned, renamed or closed). */
  reloadAccounts: () => void;
  /** The SDK client for account routes: with X-Account-Id for a partner admin. */
  api: Tidings;
}

const STORE = 'tidings.console.account';
const AccountContext = createContext<AccountApi | null>(null);

export function AccountProvider({ user, children }: { user: ConsoleUser; children: ReactNode }) {
  const partner = user.role === 'partner_admin';
  const [accounts, setAccounts] = useState<AccountChoice[] | null>(null);
  const [accountsError, setAccountsError] = useState<ShownError | null>(null);
  const [listed, setListed] = useState(0);
  const [accountId, setAccountId] = useState<string | null>(() =>
    partner ? sessionStorage.getItem(STORE) : null,
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: `listed` is the reload trigger
  useEffect(() => {
    if (!partner) return;
    let live = true;
    client.partner.accounts
      .list({ limit: 100 })
      .toArray(1000)
      .then((list) => {
        if (!live) return;
        const open = list.filter((a) => a.status !== 'CLOSED');
        setAccounts(open.map((a) => ({ id: a.accountId, name: a.accountName, status: a.status })));
        // A remembered account that is gone is forgotten.
        setAccountId((current) => (current && open.some((a) => a.accountId === current) ? current : null));
      })
      .catch((err) => live && setAccountsError(shownError(err)));
    return () => {
      live = false;
    };
  }, [partner, listed]);

  const api = useMemo<AccountApi>(
    () => ({
      accounts,
      accountsError,
      accountId,
      pick: (id) => {
        if (id) sessionStorage.setItem(STORE, id);
        else sessionStorage.removeItem(STORE);
        setAccountId(id);
      },
      reloadAccounts: () => setListed((n) => n + 1),
      api: accountClient(partner ? accountId : null),
    }),
    [accounts, accountsError, accountId, partner],
  );
  return <AccountContext.Provider value={api}>{children}</AccountContext.Provider>;
}

export function useAccount(): AccountApi {
  const api = useContext(AccountContext);
  if (!api) throw new Error('useAccount outside AccountProvider');
  return api;
}
