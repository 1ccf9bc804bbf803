// Sign in with an email and a password; one message for a wrong email or password (the API's).
import { useState } from 'react';
import { consoleApi, type ShownError, shownError } from '../api.ts';
import { Button } from '../components/Button.tsx';
import { AuthCard } from '../components/Card.tsx';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { Field } from '../components/Field.tsx';
import { useSession } from '../session.tsx';
import { formValues } from './forms.ts';

export function SignInPage() {
  const { signedIn, state } = useSession();
  const expired = state.status === 'signed-out' && state.expired;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);

  return (
    <AuthCard title="Sign in">
      {expired ? (
        <p className="notice" role="status">
          Your session has ended. Sign in again to go on.
        </p>
      ) : null}
      <form
        onSubmit={async (event) => {
          const v = formValues(event);
          setBusy(true);
          setError(null);
          try {
            // Signed in, the app's routes lead on from /sign-in to the page that asked for it.
            signedIn(await consoleApi.signIn({ email: v.email!, password: v.password! }));
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
