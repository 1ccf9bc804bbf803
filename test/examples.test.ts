// The examples/ scripts (the spec's five typical flows, on the SDK) run as a user runs them: each a
// separate Node process against this live server, with an account of its own whose channel is the
// sandbox. Each must exit 0, and what it says it did is checked through the API.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { call } from './helpers/client.ts';
import { type SandboxTenant, sandboxTenantWithKey, useMessagingApp } from './helpers/messaging.ts';

const env = useMessagingApp();
let baseUrl: string;
beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

/** Runs examples/<name>.ts for a fresh sandbox account; answers its last line (JSON) and the account. */
async function runExample(
  name: string,
  ...args: string[]
): Promise<{ result: any; t: SandboxTenant; stdout: string }> {
  const t = await sandboxTenantWithKey(env.app, env.partner.partnerKey);
  // Asynchronously: the server it calls runs in this process.
  const { stdout } = await promisify(execFile)(process.execPath, [`examples/${name}.ts`, ...args], {
    env: {
      ...process.env,
      TIDINGS_URL: baseUrl,
      TIDINGS_API_KEY: t.apiKey,
      SANDBOX_KEY: t.sandboxKey,
    },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const lines = stdout.trim().split('\n');
  return { result: JSON.parse(lines.at(-1)!), t, stdout };
}

describe('examples/', () => {
  it('appointment reminder: contact, template send, webhook sees it delivered', async () => {
    const { result, t } = await runExample('appointment-reminder', '+14155552401');
    expect(result.event).toBe('message.delivered');
    const message = await call(env.app, 'GET', `/messages/${result.messageId}`, { key: t.apiKey });
    expect(message.body).toMatchObject({ to: '+14155552401', contactId: result.contactId });
    expect(message.body.template.name).toBe('appointment_reminder');
    // The example removes its webhook when done.
    expect((await call(env.app, 'GET', '/webhooks', { key: t.apiKey })).body.data).toEqual([]);
  });

  it('lead capture: contact, approved template chosen from the list, sent', async () => {
    const { result, t } = await runExample('lead-capture', '+14155552402');
    const message = await call(env.app, 'GET', `/messages/${result.messageId}`, { key: t.apiKey });
    expect(message.body).toMatchObject({ to: '+14155552402', contactId: result.contactId });
    expect(message.body.template.body).toBe(
      'Hi Bo, thanks for your interest in Tidings. Reply STOP to opt out.',
    );
  });

  it('bulk import: a job polled to completion, 25 in and the broken row failed', async () => {
    const { result, t } = await runExample('bulk-import', '2410');
    expect(result).toMatchObject({ status: 'completed', succeeded: 25, failed: 1 });
    const imported = await call(env.app, 'GET', '/contacts', {
      key: t.apiKey,
      query: { tag: 'imported', limit: '100' },
    });
    expect(imported.body.data).toHaveLength(25);
  });

  it('campaign: estimated, then bulk sent to every recipient', async () => {
    const { result, t } = await runExample('campaign', '2440');
    expect(result).toMatchObject({ status: 'completed', sent: 3 });
    const sent = await call(env.app, 'GET', '/messages', { key: t.apiKey, query: { direction: 'outbound' } });
    expect(sent.body.data.map((m: { to: string }) => m.to).sort()).toEqual([
      '+14155552440',
      '+14155552441',
      '+14155552442',
    ]);
  });

  it('real-time sync: the webhook brings the customer message and the reply’s statuses', async () => {
    const { result } = await runExample('realtime-sync', '+14155552450');
    expect(result.inbound).toBe('message.received');
    expect(result.synced[result.reply]).toMatch(/^(delivered|read)$/);
  });
});
