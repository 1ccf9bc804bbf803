// What the fuzzer's passes (fuzz-openapi, fuzz-largest) call with: a real tenant and its keys, a
// partner admin's console session (signed in again when a pass ended it), real resources for path
// parameters.
import { expect } from 'vitest';
import { call, createAccountKey, provision } from './client.ts';
import { PASSWORD, sessionOf } from './console.ts';
import type { FuzzContext } from './fuzz-requests.ts';
import { BOOTSTRAP_TOKEN } from './harness.ts';
import { sandboxTenant } from './messaging.ts';
import type { TestEnv } from './setup.ts';

async function created(
  env: TestEnv,
  method: 'POST' | 'PUT',
  path: string,
  key: string,
  body?: unknown,
): Promise<any> {
  const res = await call(env.app, method, path, { key, body });
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  return res.body;
}

/**
 * The fuzzing tenant (scale plan: 500 requests a second, no monthly quota), its live and sandbox
 * keys, and real resources for path parameters: one of each kind in that tenant, and a second
 * account (with a key) for the partner routes, so that a plausible DELETE or suspend lands on it
 * rather than on the tenant the fuzzer calls with.
 */
export async function fuzzContext(env: TestEnv): Promise<FuzzContext> {
  const { partnerKey } = env.partner;
  const t = await sandboxTenant(env.app, partnerKey);
  const sandbox = await createAccountKey(env.app, partnerKey, t.accountId, { scope: 'sandbox' });
  const victim = await provision(env.app, partnerKey);
  const victimKey = await createAccountKey(env.app, partnerKey, victim.accountId);
  const key = t.apiKey;
  const contact = await created(env, 'POST', '/contacts', key, { phone: '+14155550100', tags: ['vip'] });
  const member = await created(env, 'POST', '/team/members', key, {
    name: 'Ann',
    email: 'ann@example.com',
    role: 'agent',
  });
  const webhook = await created(env, 'POST', '/webhooks', key, {
    url: 'https://example.com/hook',
    events: ['*'],
  });
  const partnerWebhook = await created(env, 'POST', '/partner/webhooks', partnerKey, {
    url: 'https://example.com/partner-hook',
  });
  const template = await created(env, 'POST', '/templates', key, {
    name: 'fuzz_template',
    language: 'en_US',
    category: 'UTILITY',
    components: [{ type: 'BODY', text: 'Hi {{1}}, thank you.', example: { body_text: [['Ann']] } }],
  });
  const inbound = await created(env, 'POST', '/sandbox/inbound-messages', sandbox.apiKey, {
    from: '+14155550111',
    text: 'hello',
  });
  const bulk = await created(env, 'POST', '/bulk/contacts', key, { contacts: [{ phone: '+14155550122' }] });
  const conversations = await call(env.app, 'GET', '/conversations', { key });
  const canned = await created(env, 'POST', '/canned-responses', key, {
    shortcut: 'fuzz',
    title: 'Fuzz',
    text: 'Hi {{ contact.name | default: "there" }}',
  });
  const team = await created(env, 'POST', '/teams', key, { name: 'Fuzz', members: [member.id] });
  const sla = await created(env, 'POST', '/sla-policies', key, { name: 'Fuzz', firstResponseMinutes: 30 });
  await created(env, 'POST', `/webhooks/${webhook.id}/test`, key);
  const deliveries = await call(env.app, 'GET', `/webhooks/${webhook.id}/deliveries`, { key });
  const ids = [
    victim.accountId,
    victimKey.id,
    contact.id,
    member.id,
    webhook.id,
    partnerWebhook.id,
    template.id,
    canned.id,
    team.id,
    sla.id,
    bulk.id ?? bulk.jobId,
    ...Object.values(inbound as Record<string, unknown>).filter(
      (v) => typeof v === 'string' && /^[a-z]+_/.test(v),
    ),
    ...conversations.body.data.map((c: { id: string }) => c.id),
    ...deliveries.body.data.map((d: { id: string }) => d.id),
    'vip',
  ];
  return {
    partnerKey,
    session: await consoleSession(env, partnerKey),
    liveKey: key,
    sandboxKey: sandbox.apiKey,
    accountId: t.accountId,
    bootstrapToken: BOOTSTRAP_TOKEN,
    realIds: [...new Set(ids.filter((id): id is string => typeof id === 'string'))],
    bodyLimit: env.app.ctx.config.bodyLimitBytes,
  };
}

const ADMIN_EMAIL = 'fuzz-admin@example.com';

/** A partner admin's session: invited and accepted the first time, signed in again afterwards. */
async function consoleSession(env: TestEnv, partnerKey: string): Promise<FuzzContext['session']> {
  const invitation = await call(env.app, 'POST', '/partner/console-invitations', {
    key: partnerKey,
    body: { email: ADMIN_EMAIL, name: 'Fuzz' },
  });
  expect(invitation.status, JSON.stringify(invitation.body)).toBe(201);
  const s = sessionOf(
    await call(env.app, 'POST', '/console/invitations/accept', {
      body: { token: invitation.body.token, password: PASSWORD },
    }),
  );
  return { cookie: s.cookie, csrf: s.csrf };
}

// Signs in again from an address of its own (the fuzzer's failed sign-ins count against 127.0.0.1).
export async function signInAgain(env: TestEnv, ctx: FuzzContext): Promise<void> {
  const res = await env.app.inject({
    method: 'POST',
    url: '/api/v1/public/console/sessions',
    remoteAddress: '192.0.2.10',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ email: ADMIN_EMAIL, password: PASSWORD }),
  });
  expect(res.statusCode, res.body).toBe(201);
  const cookie = res.cookies.find((c) => c.name === 'tidings_session')!;
  ctx.session = { cookie: cookie.value, csrf: res.json().csrfToken };
}
