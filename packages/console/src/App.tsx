// Routes by session state: the first run until the installation is bootstrapped, then sign in (or
// an invitation), then the signed-in shell.
import { Navigate, Route, Routes, useLocation } from 'react-router-dom';
import { Button } from './components/Button.tsx';
import { AuthCard } from './components/Card.tsx';
import { ErrorMessage } from './components/ErrorMessage.tsx';
import { InvitePage } from './pages/InvitePage.tsx';
import { SetupPage } from './pages/SetupPage.tsx';
import { Shell } from './pages/Shell.tsx';
import { SignInPage } from './pages/SignInPage.tsx';
import { useSession } from './session.tsx';

/** Where a signed-out visitor was going when sent to sign in (a console path, never another site). */
function cameFrom(state: unknown): string {
  const from = (state as { from?: unknown } | null)?.from;
  return typeof from === 'string' && from.startsWith('/') && !from.startsWith('//') ? from : '/';
}

export function App() {
  const { state, reload } = useSession();
  const location = useLocation();

  if (state.status === 'loading') {
    return (
      <main id="main" className="auth-page" aria-busy="true">
        <p className="muted">Loading…</p>
      </main>
    );
  }
  if (state.status === 'failed') {
    return (
      <AuthCard title="The console could not start">
        <ErrorMessage error={state.error} />
        <Button variant="primary" onClick={reload}>
          Try again
        </Button>
      </AuthCard>
    );
  }
  if (state.status === 'signed-out') {
    const landing = state.bootstrapped ? '/sign-in' : '/setup';
    return (
      <Routes>
        <Route path="/invite" element={<InvitePage />} />
        <Route
          path="/setup"
          element={state.bootstrapped ? <Navigate to="/sign-in" replace /> : <SetupPage />}
        />
        <Route
          path="/sign-in"
          element={state.bootstrapped ? <SignInPage /> : <Navigate to="/setup" replace />}
        />
        <Route path="*" element={<Navigate to={landing} replace state={{ from: location.pathname }} />} />
      </Routes>
    );
  }
  return (
    <Routes>
      {/* Signed in already: the pages before signing in lead into the console. */}
      <Route path="/setup" element={<Navigate to="/" replace />} />
      <Route path="/sign-in" element={<Navigate to={cameFrom(location.state)} replace />} />
      <Route path="/invite" element={<InvitePage />} />
      <Route path="/*" element={<Shell user={state.user} />} />
    </Routes>
  );
}
