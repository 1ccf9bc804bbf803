// The signed-in console: the frame, the partner admin's account picker, sign out (this browser or
// everywhere), and the sections of the user's role.
import { type ComponentType, type LazyExoticComponent, lazy, Suspense, useId, useState } from 'react';
import { Navigate, Route, Routes } from 'react-router-dom';
import { AccountProvider, useAccount } from '../account.tsx';
import { type ConsoleUser, type ShownError, shownError } from '../api.ts';
import { Button } from '../components/Button.tsx';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { Layout } from '../components/Layout.tsx';
import { Loading } from '../components/Loading.tsx';
import { MentionWatcher } from '../components/MentionWatcher.tsx';
import { SECTIONS, type Section, sectionsFor } from '../nav.ts';
import { useSession } from '../session.tsx';
import { ComingPage } from './ComingPage.tsx';

// The built sections, each a chunk loaded on first visit (route-level splitting keeps the first
// load small). A section not listed here shows the "coming" page.
const PAGES: Record<string, LazyExoticComponent<ComponentType>> = {
  portal: lazy(() => import('./portal/PortalSection.tsx')),
  partner: lazy(() => import('./partner/PartnerSection.tsx')),
  inbox: lazy(() => import('./inbox/InboxPage.tsx')),
  contacts: lazy(() => import('./contacts/ContactsPage.tsx')),
  templates: lazy(() => import('./templates/TemplatesPage.tsx')),
  automation: lazy(() => import('./automation/AutomationPage.tsx')),
  voice: lazy(() => import('./voice/VoicePage.tsx')),
};

export function Shell({ user }: { user: ConsoleUser }) {
  return (
    <AccountProvider user={user}>
      <ShellFrame user={user} />
    </AccountProvider>
  );
}

function ShellFrame({ user }: { user: ConsoleUser }) {
  const sections = sectionsFor(user.role);
  return (
    <Layout
      user={user}
      sections={sections}
      accountPicker={user.role === 'partner_admin' ? <AccountPicker /> : null}
      actions={<SignOutButtons />}
    >
      <MentionWatcher memberId={user.memberId ?? null} />
      <Routes>
        <Route index element={<Navigate to={`/${sections[0]!.path}`} replace />} />
        {SECTIONS.map((s) => (
          <Route
            key={s.path}
            path={`${s.path}/*`}
            element={<SectionPage section={s} allowed={s.roles.includes(user.role)} />}
          />
        ))}
        <Route path="*" element={<NotFound />} />
      </Routes>
    </Layout>
  );
}

function SectionPage({ section, allowed }: { section: Section; allowed: boolean }) {
  const { accountId } = useAccount();
  const { state } = useSession();
  if (!allowed) {
    return (
      <section aria-labelledby="page-title">
        <h1 id="page-title">{section.label}</h1>
        <p>
          <strong>Not available to your role.</strong> Your role cannot use this section. An administrator of
          the account can use it.
        </p>
      </section>
    );
  }
  const partner = state.status === 'signed-in' && state.user.role === 'partner_admin';
  if (section.account && partner && !accountId) {
    return (
      <section aria-labelledby="page-title">
        <h1 id="page-title">{section.label}</h1>
        <p>Pick the account to act on (the “Account” list in the menu) to use this section.</p>
      </section>
    );
  }
  const Page = PAGES[section.path];
  if (!Page) return <ComingPage title={section.label} />;
  return (
    <Suspense fallback={<Loading />}>
      <Page />
    </Suspense>
  );
}

function NotFound() {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Not found</h1>
      <p>There is no console page at this address.</p>
    </section>
  );
}

function AccountPicker() {
  const { accounts, accountsError, accountId, pick } = useAccount();
  const id = useId();
  return (
    <div className="account-picker">
      <label htmlFor={id}>Account</label>
      <select
        id={id}
        value={accountId ?? ''}
        disabled={accounts === null}
        onChange={(e) => pick(e.target.value || null)}
      >
        <option value="">{accounts === null ? 'Loading…' : 'No account picked'}</option>
        {(accounts ?? []).map((a) => (
          <option key={a.id} value={a.id}>
            {a.name}
            {a.status === 'ACTIVE' ? '' : ` (${a.status.toLowerCase()})`}
          </option>
        ))}
      </select>
      {accounts !== null && accounts.length === 0 ? (
        <p className="muted">The partner has no accounts yet.</p>
      ) : null}
      <ErrorMessage error={accountsError} />
    </div>
  );
}

function SignOutButtons() {
  const { signOut } = useSession();
  const [busy, setBusy] = useState<'here' | 'everywhere' | null>(null);
  const [error, setError] = useState<ShownError | null>(null);
  const run = async (everywhere: boolean) => {
    setBusy(everywhere ? 'everywhere' : 'here');
    setError(null);
    try {
      await signOut(everywhere);
    } catch (err) {
      setError(shownError(err));
      setBusy(null);
    }
  };
  return (
    <>
      <Button onClick={() => run(false)} busy={busy === 'here'}>
        Sign out
      </Button>
      <Button variant="quiet" onClick={() => run(true)} busy={busy === 'everywhere'}>
        Sign out everywhere
      </Button>
      <ErrorMessage error={error} />
    </>
  );
}
