// Factories for messaging tests: tenants on the sandbox or on a fake WhatsApp Cloud API number,
// wallet credits, approved templates, and waiting for a message to reach a status.
import { afterAll, beforeAll, expect } from 'vitest';
import type { App } from '../../src/app.ts';
import type { Config } from '../../src/config.ts';
import type { Database } from '../../src/kernel/database/db.ts';
import { type FakeBusiness, FakeWhatsAppCloud } from '../fakes/whatsapp-cloud.ts';
import { call, createAccountKey, tenant } from './client.ts';
import type { TestAppOptions } from './harness.ts';
import { Receiver } from './receiver.ts';
import { type TestEnv, useTestApp } from './setup.ts';
import { eventually } from './wait.ts';

export { eventually, sleep } from './wait.ts';

export interface MessagingTenant {
  accountId: string;
  apiKey: string;
  keyId: string;
}

/** The sandbox with no delays: handed over, delivered and read at once; templates reviewed at once. */
export interface SandboxDelays {
  deliveredAfterMs: number;
  readAfterMs: number | null;
  reviewAfterMs: number;
}

export const INSTANT_SANDBOX: SandboxDelays = { deliveredAfterMs: 0, readAfterMs: 0, reviewAfterMs: 0 };

export async function sandboxTenant(
  app: App,
  partnerKey: string,
  sandbox: Partial<SandboxDelays> = INSTANT_SANDBOX,
  account: Record<string, unknown> = {},
): Promise<MessagingTenant> {
  const t = await tenant(app, partnerKey, account);
  const res = await call(app, 'PUT', '/account/channel', {
    key: t.apiKey,
    body: { provider: 'sandbox', sandbox },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return t;
}

export type SandboxTenant = MessagingTenant & { sandboxKey: string };

/** A sandbox tenant with a sandbox key too, which may play the customer (/sandbox/inbound-messages). */
export async function sandboxTenantWithKey(app: App, partnerKey: string): Promise<SandboxTenant> {
  const t = await sandboxTenant(app, partnerKey);
  const k = await createAccountKey(app, partnerKey, t.accountId, { scope: 'sandbox' });
  return { ...t, sandboxKey: k.apiKey };
}

/**
 * A tenant whose channel is a number of the fake WhatsApp Cloud API. Meta's `sent` status follows
 * each message it takes, posted to the account's callback URL, unless `metaReportsSent` is false
 * (a test that plays Meta's callbacks itself).
 */
export async function whatsappTenant(
  app: App,
  partnerKey: string,
  fake: FakeWhatsAppCloud,
  account: Record<string, unknown> = {},
  options: { metaReportsSent?: boolean; business?: Partial<FakeBusiness> } = {},
): Promise<MessagingTenant & { business: FakeBusiness }> {
  const t = await tenant(app, partnerKey, account);
  const business = fake.createBusiness(options.business);
  const res = await call(app, 'PUT', '/account/channel', {
    key: t.apiKey,
    body: {
      provider: 'whatsapp_cloud',
      whatsapp: FakeWhatsAppCloud.channelSettings(business),
      sandbox: INSTANT_SANDBOX,
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  if (options.metaReportsSent !== false) {
    fake.reportStatuses(business, (payload, headers) =>
      app.inject({ method: 'POST', url: `/api/v1/callbacks/whatsapp/${t.accountId}`, headers, payload }),
    );
  }
  return { ...t, business };
}

export async function credit(app: App, partnerKey: string, accountId: string, amount: string): Promise<void> {
  const res = await call(app, 'POST', `/partner/accounts/${accountId}/wallet/credits`, {
    key: partnerKey,
    body: { amount },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
}

export async function balanceOf(app: App, key: string): Promise<string> {
  const res = await call(app, 'GET', '/account/wallet', { key });
  expect(res.status).toBe(200);
  return res.body.balance.amount;
}

export interface TemplateSpec {
  name: string;
  language?: string;
  category?: 'MARKETING' | 'UTILITY' | 'AUTHENTICATION';
  body?: string;
  examples?: string[];
  components?: unknown[];
}

/** The body component of a template with `n` placeholders and fixed text around them. */
export function bodyWith(n: number): { text: string; examples: string[] } {
  const parts = Array.from({ length: n }, (_, i) => `value ${i + 1} is {{${i + 1}}}`);
  return { text: `Hello, ${parts.join(', ')}. Thank you.`, examples: parts.map((_, i) => `example${i + 1}`) };
}

/** Creates a template, submits it and waits until its review is decided (APPROVED expected). */
export async function approvedTemplate(app: App, key: string, spec: TemplateSpec) {
  const body = spec.body ?? 'Hi {{1}}, your appointment is on {{2}}. Reply to confirm.';
  const examples = spec.examples ?? ['Ann', 'Monday 10:00'];
  const created = await call(app, 'POST', '/templates', {
    key,
    body: {
      name: spec.name,
      language: spec.language ?? 'en_US',
      category: spec.category ?? 'UTILITY',
      components: spec.components ?? [
        { type: 'BODY', text: body, ...(examples.length ? { example: { body_text: [examples] } } : {}) },
      ],
    },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const submitted = await call(app, 'POST', `/templates/${created.body.id}/submit`, { key });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  const decided = await eventually(
    () => call(app, 'GET', `/templates/${created.body.id}`, { key }),
    (r) => r.body.status !== 'PENDING',
  );
  expect(decided.body.status, JSON.stringify(decided.body)).toBe('APPROVED');
  return decided.body as { id: string; name: string; language: string; parameterCount: number };
}

/** Waits until the message reaches `status` (or the time is up) and answers it. */
export async function messageWhen(app: App, key: string, id: string, status: string, timeoutMs = 10_000) {
  const res = await eventually(
    () => call(app, 'GET', `/messages/${id}`, { key }),
    (r) => r.body.status === status,
    timeoutMs,
  );
  expect(res.body.status, JSON.stringify(res.body)).toBe(status);
  return res.body;
}

/**
 * Opens the customer service window of `phone` as an inbound message would, `ago` ms in the past.
 * Written directly, as inbound processing (conversations/inbound.ts) sets last_inbound_at when a
 * customer writes in.
 */
export async function customerWrote(db: Database, accountId: string, phone: string, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO contacts (id, account_id, phone, created_at, updated_at, last_inbound_at)
     VALUES ('ctc_' || substr(md5(random()::text), 1, 26), $1, $2, $3, $3, $3)
     ON CONFLICT (account_id, phone) DO UPDATE SET last_inbound_at = EXCLUDED.last_inbound_at`,
    [accountId, phone, at],
  );
}

export interface MessagingEnv extends TestEnv {
  /** The fake WhatsApp Cloud API the app's whatsapp_cloud channels call (started before the app). */
  fake: FakeWhatsAppCloud;
  /** A webhook receiver, closed when the file ends. */
  receiver: () => Promise<Receiver>;
  /** A receiver subscribed to `events` with the account's key; `secret` signs its deliveries. */
  subscribe: (key: string, events: string[]) => Promise<{ receiver: Receiver; secret: string }>;
}

/**
 * The usual start of a messaging test file: a fake WhatsApp Cloud API, then an app with its job
 * workers and webhook dispatcher running, on the file's own database.
 */
export function useMessagingApp(
  options: {
    autoApprove?: boolean;
    config?: Partial<Config>;
    logStream?: TestAppOptions['logStream'];
    now?: TestAppOptions['now'];
  } = {},
): MessagingEnv {
  const receivers: Receiver[] = [];
  const m = {} as MessagingEnv;
  // Registered first, so the fake listens before the app is built with its address.
  beforeAll(async () => {
    m.fake = await FakeWhatsAppCloud.start({ autoApprove: options.autoApprove ?? false });
  });
  const env = useTestApp({
    workers: true,
    config: () => ({
      whatsappGraphUrl: m.fake.graphUrl,
      webhookAllowedHosts: ['127.0.0.1'],
      webhookPollMs: 50,
      ...options.config,
    }),
    logStream: options.logStream,
    now: options.now,
  });
  beforeAll(async () => {
    Object.assign(m, env);
    await env.app.ctx.dispatcher.start();
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await m.fake.close();
  });
  m.receiver = async () => {
    const r = await Receiver.start();
    receivers.push(r);
    return r;
  };
  m.subscribe = async (key, events) => {
    const receiver = await m.receiver();
    const res = await call(m.app, 'POST', '/webhooks', { key, body: { url: receiver.url(), events } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return { receiver, secret: res.body.secret as string };
  };
  return m;
}
