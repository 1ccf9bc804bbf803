// For tests of numbers connected through a partner's Meta app (Embedded Signup, coexistence): the
// partner's app set to one of the fake Graph API's apps, the app on a real port (Meta posts its
// webhooks to the partner app's one URL), and tenants whose number came through a signup.
import { beforeAll, expect } from 'vitest';
import type { FakeApp, FakeSignup } from '../fakes/meta-onboarding.ts';
import { call, tenant } from './client.ts';
import type { MessagingEnv, MessagingTenant } from './messaging.ts';

export type SignedUp = MessagingTenant & { signup: FakeSignup };

export interface PartnerMetaApp {
  /** The fake's app the partner set, with its Embedded Signup configuration. */
  app: FakeApp;
  /** The app's base URL on its port. */
  base: string;
  /** A fresh tenant whose number came through Embedded Signup (a new one, or `signup`'s). */
  signedUp: (options?: { coexistence?: boolean; signup?: FakeSignup }) => Promise<SignedUp>;
  /** Posts Meta's payload for the tenant's number to the partner app's URL, signed; its JSON answer. */
  post: (t: SignedUp, payload: unknown) => Promise<any>;
}

/** Sets the partner's Meta app and listens, before the file's tests. */
export function usePartnerMetaApp(env: MessagingEnv): PartnerMetaApp {
  const m = {} as PartnerMetaApp;
  beforeAll(async () => {
    m.app = env.fake.onboarding.createApp();
    const put = await call(env.app, 'PUT', '/partner/whatsapp-app', {
      key: env.partner.partnerKey,
      body: {
        appId: m.app.appId,
        appSecret: m.app.appSecret,
        verifyToken: 'a-verify-token-of-the-app',
        configurationId: m.app.configurationId,
      },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    await env.app.listen({ port: 0, host: '127.0.0.1' });
    m.base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
  });
  m.signedUp = async (options = {}) => {
    const coexistence = options.coexistence ?? false;
    const t = await tenant(env.app, env.partner.partnerKey);
    const signup = options.signup ?? env.fake.onboarding.signup(m.app, { coexistence });
    const res = await call(env.app, 'POST', '/account/channel/embedded-signup', {
      key: t.apiKey,
      body: {
        code: signup.code,
        wabaId: signup.wabaId,
        phoneNumberId: signup.phoneNumberId,
        ...(coexistence ? { mode: 'coexistence' } : {}),
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { ...t, signup };
  };
  m.post = async (t, payload) =>
    JSON.parse(
      (await env.fake.postCallback(`${m.base}/api/v1/callbacks/whatsapp`, t.signup.business, payload)).body,
    );
  return m;
}
