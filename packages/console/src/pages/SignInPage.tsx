// Sign in with an email and a password; one message for a wrong email or password (the API's).
import { useState } from 'react';
import { useLocation, useNavigate } from 'react-router-dom';
import { consoleApi, type ShownError, shownError } from '../api.ts';
import { Button } from '../components/Button.tsx';
import { AuthCard } from '../components/Card.tsx';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { Field } from '../components/Field.tsx';
import { useSession } from '../session.tsx';
import { formValues } from './forms.ts';

export function SignInPage() {
  const { signedIn } = useSession();
  const navigate = useNavigate();
  const location = useLocation();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const from = (location.state as { from?: string } | null)?.from ?? '/';

  return (
    <AuthCard title="Sign in">
      <form
        onSubmit={async (event) => {
          const v = formValues(event);
          setBusy(true);
          setError(null);
          try {
            signedIn(await consoleApi.signIn({ email: v.email!, password: v.password! }));
            navigate(from, { replace: true });
          } catch (err) {
            setError(shownError(err));
            setBusy(false);
          }
        }}
      >
        <Field label="Email" name="email" type="email" required autoComplete="username" />
        <Field label="Password" name="password" type="password" required autoComplete="current-password" />
        <ErrorMessage error={error} />
        <Button type="submit" variant="primary" busy={busy}>
          Sign in
        </Button>
      </form>
      <p className="muted">No login yet? Ask your administrator for an invitation link.</p>
    </AuthCard>
  );
}
