// The Graph API calls that connect a client's number through a partner's Meta app (Embedded
// Signup), as Meta documents them for Tech Providers (docs/history/issue-46-meta.md):
//   GET  /oauth/access_token?client_id&client_secret&code → {access_token}: the client's business
//        token (a business integration system user's), for the code the signup popup gave;
//   POST /{waba-id}/subscribed_apps                       → {success}: the app gets the WABA's webhooks;
//   DELETE /{waba-id}/subscribed_apps                     → {success};
//   GET  /{phone-number-id}?fields=status,platform_type,… → whether the number is on the Cloud API;
//   POST /{phone-number-id}/register {messaging_product, pin} → {success}: on the Cloud API, with
//        that two-step verification PIN;
//   POST /{phone-number-id}/deregister                    → {success};
//   POST /{phone-number-id}/smb_app_data {sync_type}      → {request_id}: a coexistence number's syncs.
// Like client.ts, every call ends in an answer, never a throw; the app secret travels only in the
// exchange's query and the token only in the Authorization header, and neither reaches an error.
import type { Dispatcher } from 'undici';
import { type GraphResult, graphCall, unreadable } from './graph-call.ts';
import { isRecord } from './json.ts';

export type { GraphFailure, GraphResult } from './graph-call.ts';

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

  /** The WABA's numbers (GET /{waba-id}/phone_numbers): which is on the Business app too. */
  async listNumbers(
    accessToken: string,
    wabaId: string,
  ): Promise<GraphResult<{ numbers: { id: string; onBusinessApp: boolean }[] }>> {
    const path = `/${encodeURIComponent(wabaId)}/phone_numbers?fields=id,display_phone_number,is_on_biz_app`;
    const result = await this.#call('GET', path, accessToken, [accessToken]);
    if (!result.ok) return result;
    const data = isRecord(result.body) && Array.isArray(result.body.data) ? result.body.data : null;
    if (!data) return unreadable(result.status, 'without a list of numbers');
    const numbers = data.flatMap((n) =>
      isRecord(n) && typeof n.id === 'string' ? [{ id: n.id, onBusinessApp: n.is_on_biz_app === true }] : [],
    );
    return { ok: true, numbers };
  }

  async register(accessToken: string, phoneNumberId: string, pin: string): Promise<GraphResult<object>> {
    return this.#success('POST', `/${encodeURIComponent(phoneNumberId)}/register`, accessToken, {
      messaging_product: 'whatsapp',
      pin,
    });
  }

  /**
   * Starts one of a coexistence number's syncs (POST /{phone-number-id}/smb_app_data): the Business
   * app's contacts (`smb_app_state_sync`) or its chat history (`history`). Meta takes each once,
   * within 24 hours of the signup; what it syncs arrives by webhook.
   */
  async requestSync(
    accessToken: string,
    phoneNumberId: string,
    syncType: 'smb_app_state_sync' | 'history',
  ): Promise<GraphResult<{ requestId: string | null }>> {
    const result = await this.#call(
      'POST',
      `/${encodeURIComponent(phoneNumberId)}/smb_app_data`,
      accessToken,
      [accessToken],
      {
        messaging_product: 'whatsapp',
        sync_type: syncType,
      },
    );
    if (!result.ok) return result;
    const id = isRecord(result.body) ? result.body.request_id : undefined;
    return { ok: true, requestId: typeof id === 'string' && id ? id : null };
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

  #call(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    accessToken: string | null,
    secrets: string[],
    json?: unknown,
  ) {
    const endpoint = { graphUrl: this.#graphUrl, timeoutMs: this.#timeoutMs, dispatcher: this.#dispatcher };
    return graphCall(endpoint, { method, path, accessToken, secrets, json });
  }
}
