// Meta's side of Embedded Signup, for the fake Graph API (whatsapp-cloud.ts routes these paths
// here): the partner's Meta apps, signup sessions that end with a single-use code (what the popup
// gives the browser with the WABA and number ids), the code exchanged for the client's business
// token (GET /oauth/access_token), the app subscribed to the WABA (POST|GET|DELETE
// /{waba-id}/subscribed_apps), and the number registered for the Cloud API with a two-step
// verification PIN (POST /{phone-number-id}/register, /deregister). Written from Meta's pages
// (docs/history/issue-46-meta.md), errors as Meta writes them, independently of
// src/channels/whatsapp-cloud/onboarding.ts.
import { randomBytes } from 'node:crypto';
import { graphError } from './graph-errors.ts';
import type { FakeBusiness, GraphAnswer, RecordedRequest } from './whatsapp-cloud.ts';

export interface FakeApp {
  appId: string;
  appSecret: string;
  /** The Embedded Signup configuration (Meta's `config_id` of FB.login). */
  configurationId: string;
}

/** A finished signup popup: what Meta's message event and login response give the browser. */
export interface FakeSignup {
  code: string;
  wabaId: string;
  phoneNumberId: string;
  business: FakeBusiness;
}

interface CodeGrant {
  appId: string;
  business: FakeBusiness;
  expiresAt: number;
  used: boolean;
}

/** One registration Meta took: the number, the PIN, when. */
export interface Registration {
  phoneNumberId: string;
  pin: string;
  at: number;
}

const unsupported = (method: string, id: string) =>
  graphError(100, {
    type: 'GraphMethodException',
    subcode: 33,
    message: `Unsupported ${method.toLowerCase()} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
  });

export class FakeMetaOnboarding {
  readonly apps: FakeApp[] = [];
  /** Every registration the fake took, in order (a test asserts a number is registered once). */
  readonly registrations: Registration[] = [];
  /** Every deregistration, by phone number id. */
  readonly deregistrations: string[] = [];
  /** Every sync a coexistence number asked for (POST /{phone-number-id}/smb_app_data), in order. */
  readonly syncRequests: { phoneNumberId: string; syncType: string; requestId: string }[] = [];
  readonly #codes = new Map<string, CodeGrant>();
  /** The apps subscribed to each WABA's webhooks. */
  readonly #subscribed = new Map<string, Set<string>>();
  readonly #newBusiness: (overrides: Partial<FakeBusiness>) => FakeBusiness;

  constructor(newBusiness: (overrides: Partial<FakeBusiness>) => FakeBusiness) {
    this.#newBusiness = newBusiness;
  }

  createApp(overrides: Partial<FakeApp> = {}): FakeApp {
    const app: FakeApp = {
      appId: String(1e15 + Math.floor(Math.random() * 9e15)),
      appSecret: randomBytes(16).toString('hex'),
      configurationId: String(1e15 + Math.floor(Math.random() * 9e15)),
      ...overrides,
    };
    this.apps.push(app);
    return app;
  }

  /**
   * A client goes through the app's Embedded Signup: by default a new WABA with a number not yet
   * registered for the Cloud API; `business` reuses one (a number registered elsewhere, say).
   * `coexistence`: the number stays on the WhatsApp Business app. The code lives 30 seconds, as
   * Meta's (its Embedded Signup page: "the code has a time-to-live of 30 seconds"), unless `ttlMs`
   * says otherwise (0: already expired).
   */
  signup(
    app: FakeApp,
    options: { business?: FakeBusiness; coexistence?: boolean; ttlMs?: number } = {},
  ): FakeSignup {
    const business =
      options.business ??
      this.#newBusiness({
        platformType: options.coexistence ? 'CLOUD_API' : 'NOT_APPLICABLE',
        onBusinessApp: options.coexistence ?? false,
        appSecret: app.appSecret,
      });
    const code = `AQ${randomBytes(96).toString('base64url')}`;
    this.#codes.set(code, {
      appId: app.appId,
      business,
      expiresAt: Date.now() + (options.ttlMs ?? 30_000),
      used: false,
    });
    return { code, wabaId: business.businessAccountId, phoneNumberId: business.phoneNumberId, business };
  }

  /** The apps subscribed to the WABA's webhooks. */
  subscribedApps(wabaId: string): string[] {
    return [...(this.#subscribed.get(wabaId) ?? [])];
  }

  /**
   * GET /oauth/access_token?client_id&client_secret&code: the business integration system user's
   * token for the business that finished the signup. A code is good once, for its own app, for
   * thirty seconds.
   */
  exchange(url: URL): GraphAnswer {
    const clientId = url.searchParams.get('client_id');
    const secret = url.searchParams.get('client_secret');
    const code = url.searchParams.get('code');
    if (!clientId) return graphError(101, { status: 400, message: 'Missing client_id parameter.' });
    const app = this.apps.find((a) => a.appId === clientId);
    if (!app)
      return graphError(101, {
        status: 400,
        message: 'Error validating application. Invalid application ID.',
      });
    if (secret !== app.appSecret)
      return graphError(1, { status: 400, message: 'Error validating client secret.' });
    if (!code) return graphError(100, { status: 400, message: 'Missing authorization code' });
    const grant = this.#codes.get(code);
    if (!grant || grant.appId !== app.appId)
      return graphError(100, {
        status: 400,
        subcode: 36008,
        message:
          'Error validating verification code. Please make sure your redirect_uri is identical to the one you used in the OAuth dialog request',
      });
    if (grant.used)
      return graphError(100, {
        status: 400,
        subcode: 36009,
        message: 'This authorization code has been used.',
      });
    if (Date.now() >= grant.expiresAt)
      return graphError(100, {
        status: 400,
        subcode: 36007,
        message: 'This authorization code has expired.',
      });
    grant.used = true;
    return { status: 200, body: { access_token: grant.business.accessToken, token_type: 'bearer' } };
  }

  /**
   * The onboarding edges of a WABA or a number, for the caller's token; undefined when the edge is
   * not one of them.
   */
  edge(
    req: RecordedRequest,
    id: string,
    edge: string | undefined,
    caller: FakeBusiness,
    owner: FakeBusiness | undefined,
  ): GraphAnswer | undefined {
    if (edge === 'subscribed_apps') {
      // A token that cannot reach the WABA sees no such object (Meta does not say which).
      if (!owner || owner.businessAccountId !== id || owner !== caller) return unsupported(req.method, id);
      return this.#subscribedApps(req, owner);
    }
    if (edge === 'phone_numbers') {
      if (!owner || owner.businessAccountId !== id || owner !== caller || req.method !== 'GET')
        return unsupported(req.method, id);
      return {
        status: 200,
        body: {
          data: [
            {
              id: owner.phoneNumberId,
              display_phone_number: owner.displayPhoneNumber,
              verified_name: owner.verifiedName,
              is_on_biz_app: owner.onBusinessApp ?? false,
              platform_type: owner.platformType ?? 'CLOUD_API',
            },
          ],
        },
      };
    }
    if (edge === 'smb_app_data') {
      if (!owner || owner.phoneNumberId !== id || owner !== caller || req.method !== 'POST')
        return unsupported(req.method, id);
      return this.#sync(owner, req.body);
    }
    if (edge === 'register' || edge === 'deregister') {
      if (!owner || owner.phoneNumberId !== id || owner !== caller) return unsupported(req.method, id);
      if (req.method !== 'POST') return unsupported(req.method, id);
      return edge === 'register' ? this.#register(owner, req.body) : this.#deregister(owner, req.body);
    }
    return undefined;
  }

  #subscribedApps(req: RecordedRequest, business: FakeBusiness): GraphAnswer {
    // The app is the one whose business token this is: the partner's app that ran the signup.
    const appId = this.#appOf(business);
    const set = this.#subscribed.get(business.businessAccountId) ?? new Set<string>();
    this.#subscribed.set(business.businessAccountId, set);
    if (req.method === 'POST') {
      if (appId) set.add(appId);
      return { status: 200, body: { success: true } };
    }
    if (req.method === 'DELETE') {
      if (appId) set.delete(appId);
      return { status: 200, body: { success: true } };
    }
    if (req.method === 'GET') {
      return {
        status: 200,
        body: {
          data: [...set].map((id) => ({
            whatsapp_business_api_data: {
              id,
              link: `https://www.facebook.com/games/?app_id=${id}`,
              name: 'App',
            },
          })),
        },
      };
    }
    return unsupported(req.method, business.businessAccountId);
  }

  #appOf(business: FakeBusiness): string | null {
    for (const grant of this.#codes.values()) if (grant.business === business) return grant.appId;
    return this.apps.find((a) => a.appSecret === business.appSecret)?.appId ?? null;
  }

  /**
   * POST /{phone-number-id}/register {messaging_product, pin}: the number on the Cloud API, its
   * two-step verification PIN set to `pin` (or checked against the one already set).
   */
  #register(business: FakeBusiness, body: any): GraphAnswer {
    if (body?.messaging_product !== 'whatsapp')
      return graphError(100, { message: '(#100) The parameter messaging_product is required.' });
    const pin = body.pin;
    if (typeof pin !== 'string' || !/^\d{6}$/.test(pin))
      return graphError(100, { message: '(#100) Param pin must be a 6-digit number' });
    if (business.registeredElsewhere)
      return graphError(133005, {
        status: 400,
        message: '(#133005) Two step verification PIN Mismatch',
        details:
          'The phone number is registered with another provider; its two-step verification PIN does not match.',
      });
    if (business.pin && business.pin !== pin)
      return graphError(133005, { status: 400, message: '(#133005) Two step verification PIN Mismatch' });
    business.pin = pin;
    business.platformType = 'CLOUD_API';
    this.registrations.push({ phoneNumberId: business.phoneNumberId, pin, at: Date.now() });
    return { status: 200, body: { success: true } };
  }

  /**
   * POST /{phone-number-id}/smb_app_data {messaging_product, sync_type}: a coexistence number's
   * contacts or history sync, once each ({messaging_product, request_id}).
   */
  #sync(business: FakeBusiness, body: any): GraphAnswer {
    if (body?.messaging_product !== 'whatsapp')
      return graphError(100, { message: '(#100) The parameter messaging_product is required.' });
    if (body.sync_type !== 'smb_app_state_sync' && body.sync_type !== 'history')
      return graphError(100, {
        message: '(#100) Param sync_type must be one of {SMB_APP_STATE_SYNC, HISTORY}',
      });
    if (!business.onBusinessApp)
      return graphError(100, {
        message: '(#100) The phone number is not onboarded from the WhatsApp Business app',
      });
    if (
      this.syncRequests.some(
        (r) => r.phoneNumberId === business.phoneNumberId && r.syncType === body.sync_type,
      )
    )
      return graphError(100, {
        message: `(#100) The ${body.sync_type} sync was already performed for this number`,
      });
    const requestId = randomBytes(12).toString('hex');
    this.syncRequests.push({ phoneNumberId: business.phoneNumberId, syncType: body.sync_type, requestId });
    return { status: 200, body: { messaging_product: 'whatsapp', request_id: requestId } };
  }

  #deregister(business: FakeBusiness, _body: unknown): GraphAnswer {
    business.platformType = 'NOT_APPLICABLE';
    this.deregistrations.push(business.phoneNumberId);
    return { status: 200, body: { success: true } };
  }
}
