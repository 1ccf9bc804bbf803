// Meta's Embedded Signup in the browser, as Meta's Tech Provider pages show it: the JavaScript SDK
// (loaded only when the Connect WhatsApp page asks for it: the console's CSP names its origin),
// FB.login with the partner app's configuration, and the popup's two answers, which come apart and
// in no set order: the code (FB.login's callback; it lives 30 seconds) and the session's ids (a
// `WA_EMBEDDED_SIGNUP` message event from facebook.com). The page waits for both.
const SDK = 'https://connect.facebook.net/en_US/sdk.js';

interface FBLoginResponse {
  authResponse?: { code?: string } | null;
}

interface FBSdk {
  init(options: { appId: string; autoLogAppEvents: boolean; xfbml: boolean; version: string }): void;
  login(callback: (response: FBLoginResponse) => void, options: Record<string, unknown>): void;
}

declare global {
  interface Window {
    FB?: FBSdk;
    fbAsyncInit?: () => void;
  }
}

export type SignupOutcome =
  | { kind: 'finished'; code: string; wabaId: string; phoneNumberId: string | null; coexistence: boolean }
  | { kind: 'cancelled'; step: string | null }
  | { kind: 'error'; message: string; code: string | null; sessionId: string | null };

let loading: Promise<FBSdk> | null = null;

/** Loads Meta's SDK once and initialises it for the app. */
export function loadMetaSdk(appId: string, version: string): Promise<FBSdk> {
  loading ??= new Promise<FBSdk>((resolve, reject) => {
    window.fbAsyncInit = () => {
      const fb = window.FB!;
      fb.init({ appId, autoLogAppEvents: true, xfbml: false, version });
      resolve(fb);
    };
    const script = document.createElement('script');
    script.src = SDK;
    script.async = true;
    script.crossOrigin = 'anonymous';
    script.onerror = () => {
      loading = null;
      reject(new Error("Meta's JavaScript SDK could not be loaded."));
    };
    document.head.append(script);
  });
  return loading;
}

/** Only Meta's own windows: https and facebook.com or one of its subdomains (not evilfacebook.com). */
function fromMeta(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (
      url.protocol === 'https:' && (url.hostname === 'facebook.com' || url.hostname.endsWith('.facebook.com'))
    );
  } catch {
    return false;
  }
}

interface SessionEvent {
  type?: string;
  event?: string;
  data?: Record<string, unknown>;
}

function sessionEventOf(data: unknown): SessionEvent | null {
  let value = data;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return null; // the SDK's own messages are not JSON
    }
  }
  if (!value || typeof value !== 'object') return null;
  const event = value as SessionEvent;
  return event.type === 'WA_EMBEDDED_SIGNUP' ? event : null;
}

const text = (v: unknown) => (typeof v === 'string' && v ? v : typeof v === 'number' ? String(v) : null);

/**
 * Runs the popup (call it straight from a click: popup blockers stop it otherwise) and answers how
 * it ended. `coexistence`: the business connects the number of its WhatsApp Business app.
 */
export function runEmbeddedSignup(
  fb: FBSdk,
  configurationId: string,
  coexistence: boolean,
): Promise<SignupOutcome> {
  return new Promise((resolve) => {
    let code: string | null = null;
    let session: SessionEvent | null = null;
    let done = false;
    const finish = (outcome: SignupOutcome) => {
      if (done) return;
      done = true;
      window.removeEventListener('message', listen);
      resolve(outcome);
    };
    const settle = () => {
      if (!session) return;
      const data = session.data ?? {};
      if (session.event === 'CANCEL' || session.event === 'ERROR') {
        if (data.error_message)
          finish({
            kind: 'error',
            message: String(data.error_message),
            code: text(data.error_code),
            sessionId: text(data.session_id),
          });
        else finish({ kind: 'cancelled', step: text(data.current_step) });
        return;
      }
      if (!code) return;
      const wabaId = text(data.waba_id);
      if (!wabaId) {
        finish({
          kind: 'error',
          message: 'Meta did not say which WhatsApp Business Account was chosen.',
          code: null,
          sessionId: null,
        });
        return;
      }
      finish({
        kind: 'finished',
        code,
        wabaId,
        phoneNumberId: text(data.phone_number_id),
        coexistence: session.event === 'FINISH_WHATSAPP_BUSINESS_APP_ONBOARDING',
      });
    };
    const listen = (event: MessageEvent) => {
      if (!fromMeta(event.origin)) return;
      const parsed = sessionEventOf(event.data);
      if (!parsed) return;
      session = parsed;
      settle();
    };
    window.addEventListener('message', listen);
    fb.login(
      (response) => {
        const given = response.authResponse?.code;
        if (given) {
          code = given;
          settle();
          return;
        }
        // No code and no word from the popup: closed before the end.
        setTimeout(() => finish({ kind: 'cancelled', step: null }), 1000);
      },
      {
        config_id: configurationId,
        response_type: 'code',
        override_default_response_type: true,
        extras: coexistence
          ? { setup: {}, featureType: 'whatsapp_business_app_onboarding', sessionInfoVersion: '3' }
          : { setup: {}, sessionInfoVersion: '3' },
      },
    );
  });
}
