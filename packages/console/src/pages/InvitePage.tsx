// An invitation link, /console/invite#<token>: the token stays in the fragment (never sent to a
// server or written to a log), and is spent with the password chosen here.
import { useState } from 'react';
import { useNavigate } from 'react-router-dom';
import { consoleApi, type ShownError, shownError } from '../api.ts';
import { Button } from '../components/Button.tsx';
import { AuthCard } from '../components/Card.tsx';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { Field } from '../components/Field.tsx';
import { useSession } from '../session.tsx';
import { formValues, PASSWORD_RULE } from './forms.ts';

export function InvitePage() {
  const { signedIn } = useSession();
  const navigate = useNavigate();
  const [token] = useState(() => decodeURIComponent(window.location.hash.slice(1)));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const [mismatch, setMismatch] = useState<string | null>(null);

  if (!token) {
    return (
      <AuthCard title="Invitation">
        <p role="alert">
          This link has no invitation token. Open the whole link you were given (it ends with #&lt;token&gt;).
        </p>
      </AuthCard>
    );
  }
  return (
    <AuthCard title="Accept your invitation">
      <p>Choose the password of your new login.</p>
      <form
        onSubmit={async (event) => {
          const v = formValues(event);
          if (v.password !== v.confirm) {
            setMismatch('The two passwords differ.');
            return;
          }
          setMismatch(null);
          setBusy(true);
          setError(null);
          try {
            signedIn(await consoleApi.acceptInvitation({ token, password: v.password! }));
            // The spent token leaves the address bar and the history.
            window.history.replaceState(null, '', window.location.pathname);
            navigate('/', { replace: true });
          } catch (err) {
            setError(shownError(err));
            setBusy(false);
          }
        }}
      >
        <Field
          label="Password"
          name="password"
          type="password"
          required
          minLength={12}
          maxLength={128}
          autoComplete="new-password"
          hint={PASSWORD_RULE}
        />
        <Field
          label="Password again"
          name="confirm"
          type="password"
          required
          autoComplete="new-password"
          error={mismatch}
        />
        <ErrorMessage error={error} />
        <Button type="submit" variant="primary" busy={busy}>
          Accept and sign in
        </Button>
      </form>
    </AuthCard>
  );
}
