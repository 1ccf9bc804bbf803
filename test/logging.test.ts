// Logs are JSON lines with a request id per request, and never hold a key or token.
import { describe, expect, it } from 'vitest';
import { call, tenant } from './helpers/client.ts';
import { BOOTSTRAP_TOKEN } from './helpers/harness.ts';
import { useTestApp } from './helpers/setup.ts';

const lines: string[] = [];

const env = useTestApp({
  config: { logLevel: 'trace' },
  logStream: { write: (line) => lines.push(line) },
});

describe('logs', () => {
  it('are JSON with the request id, and hold no key, token or key text', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const ok = await call(env.app, 'GET', '/account', { key: t.apiKey });
    await call(env.app, 'GET', '/account', { key: `${t.apiKey.slice(0, -1)}x` });
    await call(env.app, 'POST', '/partner/bootstrap', {
      headers: { authorization: `Bearer ${BOOTSTRAP_TOKEN}` },
    });
    const parsed = lines.map((l) => JSON.parse(l));
    expect(parsed.some((l) => l.reqId === ok.headers['x-request-id'])).toBe(true);
    const all = lines.join('\n');
    expect(all).not.toContain(t.apiKey);
    expect(all).not.toContain(t.apiKey.slice(9, 30));
    expect(all).not.toContain(env.partner.partnerKey.slice(12, 40));
    expect(all).not.toContain(BOOTSTRAP_TOKEN);
  });
});
