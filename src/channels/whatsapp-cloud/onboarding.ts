// The Graph API calls that connect a client's number through a partner's Meta app (Embedded
// Signup), as Meta documents them for Tech Providers (docs/history/issue-46-meta.md):
//   GET  /oauth/access_token?client_id&client_secret&code → {access_token}: the client's business
//        token (a business integration system user's), for the code the signup popup gave;
//   POST /{waba-id}/subscribed_apps                       → {success}: the app gets the WABA's webhooks;
//   DELETE /{waba-id}/subscribed_apps                     → {success};
//   GET  /{phone-number-id}?fields=status,platform_type,… → whether the number is on the Cloud API;
//   POST /{phone-number-id}/register {messaging_product, pin} → {success}: on the Cloud API, with
//        that two-step verification PIN;
//   POST /{phone-number-id}/deregister                    → {success}.
// Like client.ts, every call ends in an answer, never a throw; the app secret travels only in the
// exchange's query and the token only in the Authorization header, and neither reaches an error.
import type { Dispatcher } from 'undici';
import { exchangeJson } from '../../kernel/outbound/http-answers.ts';
import { classify, describeMetaError, graphErrorOf, trimMessage } from './errors.ts';
import { isRecord } from './json.ts';

/** Meta refused or could not be asked: what it said, and whether asking again may help. */
export interface GraphFailure {
  ok: false;
  /** Meta's `error.code` and `error_subcode`; null when no Graph error came back. */
  metaCode: number | null;
  metaSubcode: number | null;
  /** HTTP status; null when no answer came. */
  status: number | null;
  message: string;
  retry: boolean;
  retryAfterSeconds: number | null;
}

export type GraphResult<T> = ({ ok: true } & T) | GraphFailure;

/** What the onboarding reads of a number: whether it is on the Cloud API yet. */
export interface NumberRegistration {
  /** CLOUD_API, ON_PREMISE or NOT_APPLICABLE (not registered). */
  platformType: string | null;
  /** CONNECTED, PENDING, DISCONNECTED, … */
  status: string | null;
  /** On the WhatsApp Business app as well (coexistence). */
  onBusinessApp: boolean;
}

export class WhatsAppOnboarding {
  readonly #graphUrl: string;
  readonly #timeoutMs: number;
  readonly #dispatcher: Dispatcher;

  constructor(graphUrl: string, timeoutMs: number, dispatcher: Dispatcher) {
    this.#graphUrl = graphUrl;
    this.#timeoutMs = timeoutMs;
    this.#dispatcher = dispatcher;
  }

  /** The code of a finished signup, exchanged with the app's id and secret for the business token. */
  async exchangeCode(
    app: { appId: string; appSecret: string },
    code: string,
  ): Promise<GraphResult<{ accessToken: string }>> {
    const query = new URLSearchParams({ client_id: app.appId, client_secret: app.appSecret, code });
    const result = await this.#call('GET', `/oauth/access_token?${query}`, null, [app.appSecret, code]);
    if (!result.ok) return result;
    const token = isRecord(result.body) ? result.body.access_token : undefined;
    if (typeof token !== 'string' || !token) return unreadable(result.status, 'without an access_token');
    return { ok: true, accessToken: token };
  }

  async subscribeApp(accessToken: string, wabaId: string): Promise<GraphResult<object>> {
    return this.#success('POST', `/${encodeURIComponent(wabaId)}/subscribed_apps`, accessToken);
  }

  async unsubscribeApp(accessToken: string, wabaId: string): Promise<GraphResult<object>> {
    return this.#success('DELETE', `/${encodeURIComponent(wabaId)}/subscribed_apps`, accessToken);
  }

  async readRegistration(
    accessToken: string,
    phoneNumberId: string,
  ): Promise<GraphResult<NumberRegistration>> {
    const path = `/${encodeURIComponent(phoneNumberId)}?fields=platform_type,status,is_on_biz_app`;
    const result = await this.#call('GET', path, accessToken, [accessToken]);
    if (!result.ok) return result;
    const body = isRecord(result.body) ? result.body : {};
    const text = (v: unknown) => (typeof v === 'string' && v ? v : null);
    return {
      ok: true,
      platformType: text(body.platform_type),
      status: text(body.status),
      onBusinessApp: body.is_on_biz_app === true,
    };
  }

  async register(accessToken: string, phoneNumberId: string, pin: string): Promise<GraphResult<object>> {
    return this.#success('POST', `/${encodeURIComponent(phoneNumberId)}/register`, accessToken, {
      messaging_product: 'whatsapp',
      pin,
    });
  }

  async deregister(accessToken: string, phoneNumberId: string): Promise<GraphResult<object>> {
    return this.#success('POST', `/${encodeURIComponent(phoneNumberId)}/deregister`, accessToken, {});
  }

  /** A call Meta answers with {success: true}. */
  async #success(
    method: 'POST' | 'DELETE',
    path: string,
    accessToken: string,
    json?: unknown,
  ): Promise<GraphResult<object>> {
    const result = await this.#call(method, path, accessToken, [accessToken], json);
    if (!result.ok) return result;
    if (!isRecord(result.body) || result.body.success !== true)
      return unreadable(result.status, 'without success');
    return { ok: true };
  }

  async #call(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    accessToken: string | null,
    secrets: string[],
    json?: unknown,
  ): Promise<{ ok: true; status: number; body: unknown } | GraphFailure> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (accessToken) headers.authorization = `Bearer ${accessToken}`;
    if (json !== undefined) headers['content-type'] = 'application/json';
    const exchange = await exchangeJson(`${this.#graphUrl}${path}`, {
      method,
      headers,
      body: json === undefined ? undefined : JSON.stringify(json),
      dispatcher: this.#dispatcher,
      timeoutMs: this.#timeoutMs,
    });
    if (!exchange.answered) {
      return redacted(
        {
          ok: false,
          metaCode: null,
          metaSubcode: null,
          status: null,
          message: `the WhatsApp Cloud API could not be reached: ${exchange.reason}`,
          retry: true,
          retryAfterSeconds: null,
        },
        secrets,
      );
    }
    const { answer } = exchange;
    if (answer.status >= 200 && answer.status <= 299)
      return { ok: true, status: answer.status, body: answer.body };
    const error = graphErrorOf(answer.body);
    const metaCode = error && typeof error.code === 'number' ? error.code : null;
    const metaSubcode = error && typeof error.error_subcode === 'number' ? error.error_subcode : null;
    const described = error ? describeMetaError(error) : '';
    return redacted(
      {
        ok: false,
        metaCode,
        metaSubcode,
        status: answer.status,
        message: described || `the WhatsApp Cloud API answered HTTP ${answer.status}`,
        retry: classify({ status: answer.status, metaCode, metaSubcode }).retry,
        retryAfterSeconds: answer.retryAfterSeconds,
      },
      secrets,
    );
  }
}

/** A 2xx we cannot use: Meta may have done it, so it is asked again (each step is safe to repeat). */
function unreadable(status: number, what: string): GraphFailure {
  return {
    ok: false,
    metaCode: null,
    metaSubcode: null,
    status,
    message: `the WhatsApp Cloud API answered HTTP ${status} ${what}`,
    retry: true,
    retryAfterSeconds: null,
  };
}

// Meta does not echo secrets, but nothing it or the network says may carry ours into storage.
function redacted(failure: GraphFailure, secrets: string[]): GraphFailure {
  let message = failure.message;
  for (const secret of secrets) if (secret) message = message.split(secret).join('[redacted]');
  return { ...failure, message: trimMessage(message) };
}
