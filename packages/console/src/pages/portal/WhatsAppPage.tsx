// The account's WhatsApp number: where it stands and the next step (GET /account/channel), connecting
// one with Meta's Embedded Signup on the partner's app (meta-signup.ts, then POST
// /account/channel/embedded-signup) or, without a partner app, with a token (PUT), disconnecting it,
// and the business profile customers see (GET|PATCH /account/channel/profile).
import type { AnswerOf } from '@tidings/sdk';
import { useState } from 'react';
import { useAccount } from '../../account.tsx';
import { type ShownError, shownError } from '../../api.ts';
import { Button } from '../../components/Button.tsx';
import { ConfirmButton } from '../../components/ConfirmButton.tsx';
import { ErrorMessage } from '../../components/ErrorMessage.tsx';
import { Field } from '../../components/Field.tsx';
import { KeyValues } from '../../components/KeyValues.tsx';
import { useLoad } from '../../components/useLoad.ts';
import { loadMetaSdk, runEmbeddedSignup } from './meta-signup.ts';

const STATES: Record<string, string> = {
  sandbox: 'No number yet: messages go to the sandbox',
  connected: 'Connected',
  needs_reconnect: 'Needs reconnecting',
};

export function WhatsAppPage() {
  const { api } = useAccount();
  const channel = useLoad(() => api.account.getChannel(), [api]);
  const signup = useLoad(() => api.account.getEmbeddedSignup(), [api]);
  const reload = () => {
    channel.reload();
    signup.reload();
  };
  const w = channel.data?.whatsapp ?? null;
  const needsNumber = channel.data && channel.data.state !== 'connected';

  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title" tabIndex={-1}>
        WhatsApp
      </h1>
      <ErrorMessage error={channel.error} />
      {channel.data ? (
        <div className="block" data-testid="channel-state">
          <h2>{STATES[channel.data.state] ?? channel.data.state}</h2>
          {channel.data.nextStep ? <p>{channel.data.nextStep}</p> : null}
          {w ? (
            <>
              <KeyValues
                rows={[
                  ['Number', w.displayPhoneNumber],
                  ['Name', w.verifiedName],
                  ['Quality', w.qualityRating],
                  ['Messaging limit', w.messagingLimitTier],
                  ['Messages a second', String(w.throughputPerSecond)],
                  [
                    'Connected',
                    w.onboarding
                      ? w.onboarding.mode === 'coexistence'
                        ? 'Embedded Signup, with the WhatsApp Business app'
                        : 'Embedded Signup'
                      : 'With an access token',
                  ],
                  ...(w.syncs
                    ? ([
                        ['Contacts from the app', w.syncs.contacts?.status ?? 'not asked yet'],
                        [
                          'History from the app',
                          w.syncs.history
                            ? `${w.syncs.history.status}${w.syncs.history.messages ? `, ${w.syncs.history.messages} messages` : ''}`
                            : 'not asked yet',
                        ],
                      ] as [string, string][])
                    : []),
                ]}
              />
              <ConfirmButton
                label="Disconnect the number"
                title="Disconnect this number?"
                confirmLabel="Disconnect"
                variant="danger"
                onConfirm={async () => {
                  await api.account.disconnectChannel();
                  reload();
                }}
              >
                Messages go to the sandbox from now on; the history stays. A number Tidings registered is
                deregistered at Meta, so that it can be used elsewhere.
              </ConfirmButton>
            </>
          ) : null}
        </div>
      ) : null}
      {needsNumber && signup.data?.available ? <Connect settings={signup.data} onConnected={reload} /> : null}
      {signup.data?.onboarding?.status === 'failed' && signup.data.onboarding.error ? (
        <div className="block" role="status">
          <h2>The last Embedded Signup stopped</h2>
          <p>
            Meta refused step <code>{signup.data.onboarding.error.step}</code>:{' '}
            {signup.data.onboarding.error.message}
          </p>
        </div>
      ) : null}
      {needsNumber && signup.data && !signup.data.available ? <TokenForm onSaved={reload} /> : null}
      <Profile key={channel.data?.updatedAt ?? 'none'} />
    </section>
  );
}

type Settings = AnswerOf<'get', '/api/v1/public/account/channel/embedded-signup'>;

function Connect({ settings, onConnected }: { settings: Settings; onConnected: () => void }) {
  const { api } = useAccount();
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<ShownError | null>(null);

  const start = async (coexistence: boolean) => {
    setBusy(true);
    setError(null);
    setStatus('Waiting for Meta’s window…');
    try {
      const fb = await loadMetaSdk(settings.appId!, settings.graphApiVersion);
      const outcome = await runEmbeddedSignup(fb, settings.configurationId!, coexistence);
      if (outcome.kind === 'cancelled') {
        setStatus(
          `Embedded Signup was closed${outcome.step ? ` at ${outcome.step}` : ''}. Nothing was connected.`,
        );
        return;
      }
      if (outcome.kind === 'error') {
        setStatus(null);
        setError({ message: `Meta: ${outcome.message}${outcome.code ? ` (${outcome.code})` : ''}` });
        return;
      }
      setStatus('Connecting the number…');
      await api.account.completeEmbeddedSignup({
        code: outcome.code,
        wabaId: outcome.wabaId,
        ...(outcome.phoneNumberId ? { phoneNumberId: outcome.phoneNumberId } : {}),
        ...(outcome.coexistence || coexistence ? { mode: 'coexistence' as const } : {}),
      });
      setStatus('Connected.');
      onConnected();
    } catch (err) {
      setStatus(null);
      setError(shownError(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <div className="block">
      <h2>Connect WhatsApp</h2>
      <p className="muted">
        Sign in with Facebook, choose or create your WhatsApp Business Account and number: Tidings does the
        rest.
      </p>
      <div className="actions">
        <Button disabled={busy} onClick={() => void start(false)}>
          Connect WhatsApp
        </Button>
        <Button variant="secondary" disabled={busy} onClick={() => void start(true)}>
          Connect my WhatsApp Business app
        </Button>
      </div>
      {status ? <p role="status">{status}</p> : null}
      <ErrorMessage error={error} />
    </div>
  );
}

function TokenForm({ onSaved }: { onSaved: () => void }) {
  const { api } = useAccount();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  return (
    <div className="block">
      <h2>Connect with an access token</h2>
      <p className="muted">
        The ids and the token come from your Meta app (docs/messaging.md § Connecting a number from Meta’s
        dashboard).
      </p>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const data = new FormData(event.currentTarget);
          const value = (k: string) => String(data.get(k) ?? '').trim();
          setBusy(true);
          setError(null);
          try {
            await api.account.setChannel({
              provider: 'whatsapp_cloud',
              whatsapp: {
                phoneNumberId: value('phoneNumberId'),
                businessAccountId: value('businessAccountId'),
                accessToken: value('accessToken'),
                ...(value('appSecret') ? { appSecret: value('appSecret') } : {}),
                ...(value('verifyToken') ? { verifyToken: value('verifyToken') } : {}),
                ...(value('appId') ? { appId: value('appId') } : {}),
              },
            });
            onSaved();
          } catch (err) {
            setError(shownError(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <Field label="Phone number ID" name="phoneNumberId" required pattern="[0-9]{1,32}" />
        <Field label="WhatsApp Business Account ID" name="businessAccountId" required pattern="[0-9]{1,32}" />
        <Field label="Access token" name="accessToken" type="password" required autoComplete="off" />
        <Field label="App secret" name="appSecret" type="password" autoComplete="off" />
        <Field label="Verify token" name="verifyToken" minLength={8} autoComplete="off" />
        <Field
          label="App ID"
          name="appId"
          pattern="[0-9]{1,32}"
          hint="Optional: needed for a profile photo."
        />
        <ErrorMessage error={error} />
        <Button type="submit" disabled={busy}>
          Connect
        </Button>
      </form>
    </div>
  );
}

const VERTICALS = [
  'OTHER',
  'AUTO',
  'BEAUTY',
  'APPAREL',
  'EDU',
  'ENTERTAIN',
  'EVENT_PLAN',
  'FINANCE',
  'GROCERY',
  'GOVT',
  'HOTEL',
  'HEALTH',
  'NONPROFIT',
  'PROF_SERVICES',
  'RETAIL',
  'TRAVEL',
  'RESTAURANT',
];

function Profile() {
  const { api } = useAccount();
  const profile = useLoad(() => api.account.getChannelProfile(), [api]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ShownError | null>(null);
  const [saved, setSaved] = useState(false);
  const p = profile.data;
  return (
    <div className="block">
      <h2>Business profile</h2>
      <ErrorMessage error={profile.error} />
      {p ? (
        <form
          onSubmit={async (event) => {
            event.preventDefault();
            const data = new FormData(event.currentTarget);
            const value = (k: string) => String(data.get(k) ?? '').trim();
            const websites = [value('website1'), value('website2')].filter(Boolean);
            setBusy(true);
            setError(null);
            setSaved(false);
            try {
              // A photo chosen: uploaded first (POST /media), then named by the change.
              const photo = data.get('photo');
              const photoId =
                photo instanceof File && photo.size > 0
                  ? (await api.media.upload(photo, { kind: 'image' })).id
                  : null;
              const answer = await api.account.updateChannelProfile({
                ...(photoId ? { profilePhotoMediaId: photoId } : {}),
                ...(value('about') ? { about: value('about') } : {}),
                address: value('address'),
                description: value('description'),
                ...(value('email') ? { email: value('email') } : {}),
                websites,
                ...(value('vertical') ? { vertical: value('vertical') as never } : {}),
              });
              profile.setData(answer);
              setSaved(true);
            } catch (err) {
              setError(shownError(err));
            } finally {
              setBusy(false);
            }
          }}
        >
          {p.profilePhotoUrl ? (
            <img src={p.profilePhotoUrl} alt="The business, as customers see it" width={96} height={96} />
          ) : null}
          <Field label="About" name="about" maxLength={139} defaultValue={p.about ?? ''} />
          <Field label="Address" name="address" maxLength={256} defaultValue={p.address ?? ''} />
          <Field label="Description" name="description" maxLength={512} defaultValue={p.description ?? ''} />
          <Field label="Email" name="email" type="email" maxLength={128} defaultValue={p.email ?? ''} />
          <Field
            label="Website"
            name="website1"
            type="url"
            maxLength={256}
            defaultValue={p.websites[0] ?? ''}
          />
          <Field
            label="Second website"
            name="website2"
            type="url"
            maxLength={256}
            defaultValue={p.websites[1] ?? ''}
          />
          <div className="field">
            <label htmlFor="photo">Photo</label>
            <p className="field-hint" id="photo-hint">
              JPEG or PNG, at most 5 MB; 640×640 shows best.
            </p>
            <input
              id="photo"
              name="photo"
              type="file"
              accept="image/jpeg,image/png"
              aria-describedby="photo-hint"
            />
          </div>
          <div className="field">
            <label htmlFor="vertical">Industry</label>
            <select
              id="vertical"
              name="vertical"
              defaultValue={p.vertical && VERTICALS.includes(p.vertical) ? p.vertical : ''}
            >
              <option value="">Not set</option>
              {VERTICALS.map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </select>
          </div>
          <ErrorMessage error={error} />
          <Button type="submit" disabled={busy}>
            Save the profile
          </Button>
          {saved ? <p role="status">Saved.</p> : null}
        </form>
      ) : null}
    </div>
  );
}
