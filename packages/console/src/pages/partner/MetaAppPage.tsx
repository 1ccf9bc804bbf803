// The partner's Meta app (GET|PUT /partner/whatsapp-app): its id, secret and verify token, so that
// one callback URL takes every client number's webhooks, and its Embedded Signup configuration, so
// that each client connects its own number from the console's WhatsApp page.
import { useState } from 'react';
import { client, type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Field } from '../../components/Field.tsx';
import { KeyValues } from '../../components/KeyValues.tsx';
import { useLoad } from '../../components/useLoad.ts';

export function MetaAppPage() {
  const metaApp = useLoad(() => client.partner.getWhatsAppApp(), []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const [saved, setSaved] = useState(false);
  const a = metaApp.data;
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        Partner admin: Meta app
      </h1>
      <p className="muted">
        Your Meta app serves every client number. With its Embedded Signup configuration, your clients connect
        their own numbers from the console, without ids or tokens.
      </p>
      <ErrorMessage error={metaApp.error} />
      {a ? (
        <>
          <div className="block">
            <KeyValues
              rows={[
                ['App', a.configured ? a.appId : 'Not set'],
                ['Embedded Signup configuration', a.configurationId ?? 'Not set'],
                ['Callback URL for the app', <code key="url">{a.callbackUrl}</code>],
              ]}
            />
          </div>
          <form
            className="block"
            onSubmit={async (event) => {
              event.preventDefault();
              const data = new FormData(event.currentTarget);
              const value = (k: string) => String(data.get(k) ?? '').trim();
              setBusy(true);
              setError(null);
              setSaved(false);
              try {
                const answer = await client.partner.setWhatsAppApp({
                  appId: value('appId'),
                  ...(value('appSecret') ? { appSecret: value('appSecret') } : {}),
                  ...(value('verifyToken') ? { verifyToken: value('verifyToken') } : {}),
                  configurationId: value('configurationId') || null,
                });
                metaApp.setData(answer);
                setSaved(true);
              } catch (err) {
                setError(shownError(err));
              } finally {
                setBusy(false);
              }
            }}
          >
            <h2>Set the app</h2>
            <Field label="App ID" name="appId" required pattern="[0-9]{1,32}" defaultValue={a.appId ?? ''} />
            <Field
              label="App secret"
              name="appSecret"
              type="password"
              autoComplete="off"
              hint="Write-only. Leave empty to keep the one stored for this app."
            />
            <Field
              label="Verify token"
              name="verifyToken"
              minLength={8}
              autoComplete="off"
              hint="Write-only: the one entered with the callback URL in the app. Leave empty to keep it."
            />
            <Field
              label="Embedded Signup configuration ID"
              name="configurationId"
              pattern="[0-9]{1,32}"
              defaultValue={a.configurationId ?? ''}
              hint="Facebook Login for Business → Configurations, the WhatsApp Embedded Signup one. Empty: no Embedded Signup."
            />
            <ErrorMessage error={error} />
            <Button type="submit" disabled={busy}>
              Save the app
            </Button>
            {saved ? <p role="status">Saved.</p> : null}
          </form>
        </>
      ) : null}
    </section>
  );
}
