// First run: the installation has no partner yet. The bootstrap token is the one `npm start`
// printed (or TIDINGS_BOOTSTRAP_TOKEN); it makes the partner and its first admin, signed in.
import { useState } from 'react';
import { consoleApi, type ShownError, shownError } from '../api.ts';
import { Button } from '../components/Button.tsx';
import { AuthCard } from '../components/Card.tsx';
import { ErrorMessage } from '../components/ErrorMessage.tsx';
import { Field } from '../components/Field.tsx';
import { useSession } from '../session.tsx';
import { formValues, PASSWORD_RULE } from './forms.ts';

export function SetupPage() {
  const { signedIn } = useSession();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);

  return (
    <AuthCard title="Set up Tidings">
      <p>
        This installation has no administrator yet. Enter the bootstrap token that <code>npm start</code>{' '}
        printed, and the first partner admin's login.
      </p>
      <form
        onSubmit={async (event) => {
          const v = formValues(event);
          setBusy(true);
          setError(null);
          try {
            signedIn(
              await consoleApi.bootstrap({
                token: v.token!.trim(),
                email: v.email!,
                password: v.password!,
                name: v.name!,
              }),
            );
            // Signed in, the app's routes lead on from /setup into the console.
          } catch (err) {
            setError(shownError(err));
            setBusy(false);
          }
        }}
      >
        <Field label="Bootstrap token" name="token" required autoComplete="off" spellCheck={false} />
        <Field label="Your name" name="name" required autoComplete="name" maxLength={200} />
        <Field label="Email" name="email" type="email" required autoComplete="email" />
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
        <ErrorMessage error={error} />
        <Button type="submit" variant="primary" busy={busy}>
          Create the administrator
        </Button>
      </form>
    </AuthCard>
  );
}
