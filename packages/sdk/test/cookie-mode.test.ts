// Cookie mode (the console): no key, the session cookie sent same-origin, X-CSRF-Token on unsafe
// calls only (read at call time), relative URLs on the page's own origin.
import { Tidings } from '@tidings/sdk';
import { describe, expect, it } from 'vitest';

interface Seen {
  url: string;
  method: string;
  credentials: string | undefined;
  headers: Headers;
}

function recording(csrf: { token: string | null }) {
  const seen: Seen[] = [];
  const client = new Tidings({
    cookie: { csrfToken: () => csrf.token },
    fetch: async (input, init) => {
      seen.push({
        url: String(input),
        method: init?.method ?? 'GET',
        credentials: init?.credentials,
        headers: new Headers(init?.headers),
      });
      return new Response('{"ok":true}', { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });
  return { client, seen };
}

describe('cookie mode', () => {
  it('sends the cookie same-origin, no key, and the CSRF token on unsafe calls only', async () => {
    const csrf = { token: 'csrf-1' as string | null };
    const { client, seen } = recording(csrf);
    await client.request('get', '/api/v1/public/contacts');
    await client.request('post', '/api/v1/public/contacts', { body: { phone: '+14155550100' } });
    csrf.token = 'csrf-2';
    await client.request('delete', '/api/v1/public/contacts/{id}', { params: { id: 'con_1' } });
    expect(seen.map((s) => [s.method, s.url, s.credentials, s.headers.get('x-csrf-token')])).toEqual([
      ['GET', '/api/v1/public/contacts', 'same-origin', null],
      ['POST', '/api/v1/public/contacts', 'same-origin', 'csrf-1'],
      ['DELETE', '/api/v1/public/contacts/con_1', 'same-origin', 'csrf-2'],
    ]);
    for (const s of seen) expect(s.headers.get('x-api-key')).toBeNull();
  });

  it('acts on an account when a partner admin picks one', async () => {
    const { client, seen } = recording({ token: 't' });
    await client.forAccount('acc_1').request('get', '/api/v1/public/contacts');
    expect(seen[0]!.headers.get('x-account-id')).toBe('acc_1');
    expect(seen[0]!.credentials).toBe('same-origin');
  });

  it('refuses a key with the cookie, and needs a baseUrl with a key', () => {
    expect(() => new Tidings({ apiKey: 'k', cookie: { csrfToken: () => null } })).toThrow(/cookie mode/);
    expect(() => new Tidings({ apiKey: 'k' })).toThrow(/baseUrl is required/);
  });

  it('leaves key mode as it was: no credentials option, no CSRF header', async () => {
    let init: RequestInit | undefined;
    const client = new Tidings({
      apiKey: 'tdg_live_x',
      baseUrl: 'http://sdk.test/',
      fetch: async (_input, i) => {
        init = i;
        return new Response(null, { status: 204 });
      },
    });
    await client.request('post', '/api/v1/public/contacts', { body: { phone: '+14155550100' } });
    expect(init?.credentials).toBeUndefined();
    expect(new Headers(init?.headers).get('x-csrf-token')).toBeNull();
  });
});
