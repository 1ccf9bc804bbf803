// SSRF safety of webhook egress: with nothing allow-listed, a webhook URL may only reach public
// addresses over https, checked when the URL is saved and again at every connection (so DNS
// rebinding and URLs saved under an older allow-list cannot reach internal addresses).
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import { Egress, type Resolver } from '../../src/kernel/outbound/egress.ts';
import { call, type Reply, tenant } from '../helpers/client.ts';
import { createTestApp } from '../helpers/harness.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const PUBLIC_V4 = '93.184.216.34';

// The resolver the app uses: a fixed table, one name that rebinds, and lookups counted per name.
const lookups = new Map<string, number>();
const DNS: Record<string, string[]> = {
  'hooks.example.com': [PUBLIC_V4],
  'hooks6.example.com': ['2606:4700::1111'],
  'internal.example.com': ['10.1.2.3'],
  'mixed.example.com': [PUBLIC_V4, '127.0.0.1'],
  'mapped.example.com': ['::ffff:10.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
  'localhost6.example.com': ['::1'],
  'empty.example.com': [],
  localhost: ['127.0.0.1', '::1'],
};
const resolver: Resolver = async (host) => {
  const seen = (lookups.get(host) ?? 0) + 1;
  lookups.set(host, seen);
  if (host === 'rebind.example.com') return seen === 1 ? [PUBLIC_V4] : ['127.0.0.1'];
  const found = DNS[host];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};

/**
 * A loopback HTTP receiver that counts TCP connections (a refused delivery must not even connect)
 * and answers 204. Unlike helpers/receiver.ts it listens below the ephemeral port range: test files
 * running alongside this one leave webhooks pointing at ephemeral ports of receivers they closed,
 * and their dispatchers' retries must not land here and count as connections.
 */
class Target {
  connections = 0;
  paths: string[] = [];
  readonly server: Server;
  readonly port: number;

  private constructor(server: Server, port: number) {
    this.server = server;
    this.port = port;
  }

  static async start(): Promise<Target> {
    for (let attempt = 0; ; attempt++) {
      const port = 20_000 + Math.floor(Math.random() * 12_000);
      const server = createServer();
      const target = new Target(server, port);
      server.on('connection', () => {
        target.connections++;
      });
      server.on('request', (req, res) => {
        target.paths.push(req.url ?? '/');
        req.resume();
        req.on('end', () => res.writeHead(204).end());
      });
      server.listen(port, '127.0.0.1');
      try {
        await Promise.race([
          once(server, 'listening'),
          once(server, 'error').then(([err]) => Promise.reject(err)),
        ]);
        return target;
      } catch (err) {
        if (attempt >= 20) throw err;
      }
    }
  }

  url(path = '/hook'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.server.close();
  }
}

const env = useTestApp({ config: { webhookAllowedHosts: [], webhookPollMs: 50 }, resolver });
let receiver: Target;
const egresses: Egress[] = [];

/** An Egress of the test's own (closed after the file). */
function egress(allowed: string[], res?: Resolver): Egress {
  const e = new Egress(allowed, { resolver: res, timeoutMs: 1000 });
  egresses.push(e);
  return e;
}

beforeAll(async () => {
  receiver = await Target.start();
  await env.app.ctx.dispatcher.start();
});
afterAll(async () => {
  await receiver.close();
  await Promise.all(egresses.map((e) => e.close()));
});

function fieldsOf(res: Reply): string[] {
  return (res.body.error?.details ?? []).map((d: { field: string }) => d.field);
}

/** Polls the deliveries of a webhook until one has at least one attempt. */
async function firstAttempt(app: App, key: string, webhookId: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await call(app, 'GET', `/webhooks/${webhookId}/deliveries`, { key });
    expect(res.status).toBe(200);
    const delivery = res.body.data[0];
    if (delivery?.attempts.length > 0) return delivery;
    if (Date.now() > deadline) throw new Error(`no attempt in 10 s: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('saving a webhook URL', () => {
  let key: string;
  beforeAll(async () => {
    key = (await tenant(env.app, env.partner.partnerKey)).apiKey;
  });

  it.each([
    ['https://127.0.0.1/'],
    ['https://127.1.2.3:8443/hook'],
    ['https://10.0.0.1/'],
    ['https://169.254.169.254/latest/meta-data'],
    ['https://[::1]/'],
    ['https://[::ffff:127.0.0.1]/'],
    ['https://[::ffff:a9fe:a9fe]/'],
    ['https://0.0.0.0/'],
    ['https://[::]/'],
    ['https://100.64.0.1/'],
    ['https://[fe80::1]/'],
    ['https://[fc00::1]/'],
    ['https://[fd12:3456::1]/'],
    ['https://224.0.0.1/'],
    ['https://[ff02::1]/'],
    ['https://255.255.255.255/'],
    ['https://192.168.1.1/'],
    ['https://172.16.0.1/'],
    ['https://172.31.255.254/'],
    ['https://192.0.2.1/'],
    ['https://[64:ff9b::a00:1]/'],
    ['https://[2001:db8::1]/'],
    ['https://2130706433/'],
    ['https://0x7f.1/'],
    ['https://0177.0.0.1/'],
    ['https://localhost/'],
    ['https://internal.example.com/'],
    ['https://mixed.example.com/'],
    ['https://mapped.example.com/'],
    ['https://metadata.example.com/'],
    ['https://localhost6.example.com/'],
    ['https://nowhere.example.com/'],
    ['https://empty.example.com/'],
  ])('refuses %s with 400 on url', async (url) => {
    const res = await call(env.app, 'POST', '/webhooks', { key, body: { url } });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([{ field: 'url', issue: expect.any(String) }]);
  });

  it('says why: a private answer is refused, an unresolvable host does not resolve', async () => {
    const internal = await call(env.app, 'POST', '/webhooks', {
      key,
      body: { url: 'https://internal.example.com/' },
    });
    expect(internal.body.error.details[0].issue).toMatch(/refused.*10\.1\.2\.3/);
    const nowhere = await call(env.app, 'POST', '/webhooks', {
      key,
      body: { url: 'https://nowhere.example.com/' },
    });
    expect(nowhere.body.error.details[0].issue).toMatch(/does not resolve/);
  });

  it('refuses plain http to a public host: "must use https"', async () => {
    const res = await call(env.app, 'POST', '/webhooks', { key, body: { url: 'http://hooks.example.com/' } });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([
      { field: 'url', issue: expect.stringContaining('must use https') },
    ]);
  });

  it('created nothing for any refused URL', async () => {
    const list = await call(env.app, 'GET', '/webhooks', { key, query: { limit: '100' } });
    expect(list.body.data).toEqual([]);
  });

  it('accepts https to hosts that resolve to public addresses only', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    for (const url of [
      'https://hooks.example.com/',
      'https://hooks.example.com:8443/tidings',
      'https://hooks6.example.com/',
      `https://${PUBLIC_V4}/hook`,
      'https://[2606:4700::1111]/hook',
    ]) {
      const res = await call(env.app, 'POST', '/webhooks', { key: t.apiKey, body: { url } });
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).toBe(201);
      expect(res.body.url).toBe(url);
    }
  });

  it('checks a changed URL the same way, and keeps the old one when refused', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const created = await call(env.app, 'POST', '/webhooks', {
      key: t.apiKey,
      body: { url: 'https://hooks.example.com/a' },
    });
    expect(created.status).toBe(201);
    for (const url of [
      'https://169.254.169.254/latest/meta-data',
      'https://mixed.example.com/',
      'http://hooks.example.com/',
    ]) {
      const res = await call(env.app, 'PATCH', `/webhooks/${created.body.id}`, {
        key: t.apiKey,
        body: { url },
      });
      expectError(res, 400, 'INVALID_REQUEST');
      expect(fieldsOf(res)).toEqual(['url']);
    }
    const got = await call(env.app, 'GET', `/webhooks/${created.body.id}`, { key: t.apiKey });
    expect(got.body.url).toBe('https://hooks.example.com/a');
    const ok = await call(env.app, 'PATCH', `/webhooks/${created.body.id}`, {
      key: t.apiKey,
      body: { url: 'https://hooks6.example.com/b' },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.url).toBe('https://hooks6.example.com/b');
  });

  it('applies to partner webhooks too', async () => {
    const res = await call(env.app, 'POST', '/partner/webhooks', {
      key: env.partner.partnerKey,
      body: { url: 'https://169.254.169.254/latest/meta-data' },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(fieldsOf(res)).toEqual(['url']);
  });
});

describe('connecting', () => {
  it('a control: an allow-listing Egress does reach the receiver (so 0 connections means refused)', async () => {
    const before = receiver.connections;
    const result = await egress(['127.0.0.1']).post(receiver.url('/control'), '{}', {
      'content-type': 'application/json',
    });
    expect(result).toMatchObject({ statusCode: 204, error: null });
    expect(receiver.connections).toBe(before + 1);
    expect(receiver.paths.at(-1)).toBe('/control');
  });

  it('DNS rebinding: a host that was public when saved and is loopback now is not connected to', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const url = `https://rebind.example.com:${receiver.port}/hook`;
    const created = await call(env.app, 'POST', '/webhooks', { key: t.apiKey, body: { url } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(lookups.get('rebind.example.com')).toBe(1);

    const connections = receiver.connections;
    const received = receiver.paths.length;
    const test = await call(env.app, 'POST', `/webhooks/${created.body.id}/test`, { key: t.apiKey });
    expect(test.status).toBe(202);

    const delivery = await firstAttempt(env.app, t.apiKey, created.body.id);
    expect(delivery.status).toBe('pending');
    expect(delivery.attempts[0]).toMatchObject({
      statusCode: null,
      error: expect.stringContaining('refused'),
    });
    expect(delivery.attempts[0].error).toContain('127.0.0.1');
    expect(delivery).toMatchObject({ lastStatusCode: null, lastError: expect.stringContaining('refused') });
    // The connection looked the name up again, got the loopback answer, and went nowhere.
    expect(lookups.get('rebind.example.com')).toBeGreaterThanOrEqual(2);
    expect(receiver.connections).toBe(connections);
    expect(receiver.paths.length).toBe(received);
  });

  it('a literal address saved under an older allow-list is refused at connection time', async () => {
    // The same installation, earlier configured with 127.0.0.1 allowed (its dispatcher not running).
    const older = await createTestApp(env.tdb.db, { config: { webhookAllowedHosts: ['127.0.0.1'] } });
    try {
      const t = await tenant(env.app, env.partner.partnerKey);
      const created = await call(older, 'POST', '/webhooks', {
        key: t.apiKey,
        body: { url: receiver.url('/old') },
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      // Today's configuration would not take the URL...
      expectError(
        await call(env.app, 'POST', '/webhooks', { key: t.apiKey, body: { url: receiver.url('/old') } }),
        400,
        'INVALID_REQUEST',
      );

      // ...nor does it deliver to it.
      const connections = receiver.connections;
      const received = receiver.paths.length;
      const test = await call(env.app, 'POST', `/webhooks/${created.body.id}/test`, { key: t.apiKey });
      expect(test.status).toBe(202);
      const delivery = await firstAttempt(env.app, t.apiKey, created.body.id);
      expect(delivery.attempts[0]).toMatchObject({
        statusCode: null,
        error: expect.stringContaining('refused'),
      });
      expect(receiver.connections).toBe(connections);
      expect(receiver.paths.length).toBe(received);
    } finally {
      await older.close();
    }
  });

  it.each([
    ['a literal loopback address', (port: number) => `http://127.0.0.1:${port}/`],
    ['a decimal loopback address', (port: number) => `http://2130706433:${port}/`],
    ['an IPv4-mapped loopback address', (port: number) => `http://[::ffff:127.0.0.1]:${port}/`],
    ['a name resolving to loopback', (port: number) => `http://loop.example.com:${port}/`],
    ['a name resolving to public and loopback', (port: number) => `http://both.example.com:${port}/`],
    ['a name resolving to mapped loopback', (port: number) => `http://mapped-loop.example.com:${port}/`],
  ])('Egress.post refuses %s without connecting', async (_name, urlOf) => {
    const table: Record<string, string[]> = {
      'loop.example.com': ['127.0.0.1'],
      'both.example.com': [PUBLIC_V4, '127.0.0.1'],
      'mapped-loop.example.com': ['::ffff:127.0.0.1'],
    };
    const e = egress([], async (host) => table[host] ?? []);
    const connections = receiver.connections;
    const result = await e.post(urlOf(receiver.port), '{}', { 'content-type': 'application/json' });
    expect(result).toMatchObject({
      statusCode: null,
      excerpt: null,
      error: expect.stringContaining('refused'),
    });
    expect(receiver.connections).toBe(connections);
  });

  it('Egress.post refuses a URL that is not http(s)', async () => {
    const result = await egress([]).post(`ftp://127.0.0.1:${receiver.port}/`, '{}', {});
    expect(result).toMatchObject({ statusCode: null, error: expect.stringContaining('refused') });
  });

  it('an allow-listed host name is reached whatever it resolves to', async () => {
    const e = egress(['Local.Example.com'], async () => ['127.0.0.1']);
    const before = receiver.connections;
    const result = await e.post(`http://local.example.com:${receiver.port}/named`, '{}', {});
    expect(result).toMatchObject({ statusCode: 204, error: null });
    expect(receiver.connections).toBe(before + 1);
    // Another name with the same answer is not.
    const other = await e.post(`http://other.example.com:${receiver.port}/named`, '{}', {});
    expect(other).toMatchObject({ statusCode: null, error: expect.stringContaining('refused') });
    expect(receiver.connections).toBe(before + 1);
  });
});

describe('Egress.addressProblem', () => {
  const strict = new Egress([], { timeoutMs: 1000 });
  afterAll(() => strict.close());

  it.each(['8.8.8.8', '1.1.1.1', PUBLIC_V4, '2606:4700::1111', '2a00:1450:4001:80b::200e'])(
    'lets the public address %s through',
    (address) => {
      expect(strict.addressProblem(address)).toBeNull();
    },
  );

  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'CGNAT'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
    ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
    ['2001:db8::1', 'documentation'],
    ['2002:7f00:1::', '6to4'],
    ['::7f00:1', 'IPv4-compatible loopback'],
    ['::a00:1', 'IPv4-compatible private'],
    ['2001::1', 'Teredo'],
    ['100::1', 'discard'],
    ['not-an-ip', 'not an address'],
    ['', 'empty'],
  ])('refuses %s (%s) with a reason', (address) => {
    expect(strict.addressProblem(address)).toEqual(expect.any(String));
    expect(strict.addressProblem(address)!.length).toBeGreaterThan(0);
  });

  it('names the kind of address in the reason', () => {
    expect(strict.addressProblem('127.0.0.1')).toContain('loopback');
    expect(strict.addressProblem('::ffff:10.0.0.1')).toContain('private');
    expect(strict.addressProblem('::7f00:1')).toContain('IPv4-compatible');
  });

  it('lets an allow-listed CIDR range through, and only that range', () => {
    const e = egress(['10.0.0.0/8', 'fd00::/8']);
    expect(e.addressProblem('10.1.2.3')).toBeNull();
    expect(e.addressProblem('10.255.255.255')).toBeNull();
    expect(e.addressProblem('::ffff:10.1.2.3')).toBeNull();
    expect(e.addressProblem('fd12::1')).toBeNull();
    expect(e.addressProblem('11.0.0.1')).toBeNull(); // public anyway
    expect(e.addressProblem('192.168.1.1')).not.toBeNull();
    expect(e.addressProblem('127.0.0.1')).not.toBeNull();
    expect(e.addressProblem('fc00::1')).not.toBeNull();
    expect(e.addressProblem('::1')).not.toBeNull();
  });

  it('lets a single allow-listed address through, not its neighbours', () => {
    const e = egress(['127.0.0.1']);
    expect(e.addressProblem('127.0.0.1')).toBeNull();
    expect(e.addressProblem('::ffff:127.0.0.1')).toBeNull();
    expect(e.addressProblem('127.0.0.2')).not.toBeNull();
    expect(e.addressProblem('::1')).not.toBeNull();
  });
});

describe('Egress.check with an allow-list', () => {
  const table: Record<string, string[]> = {
    'internal.example.com': ['10.1.2.3'],
    'other.example.com': ['10.1.2.4'],
    'lan.example.com': ['192.168.0.10'],
    'hooks.example.com': [PUBLIC_V4],
  };
  const res: Resolver = async (host) => table[host] ?? [];

  it('a CIDR lets its addresses through, over http as well as https', async () => {
    const e = egress(['10.0.0.0/8'], res);
    expect(await e.check('https://10.1.2.3/')).toBeNull();
    expect(await e.check('http://10.1.2.3:8080/hook')).toBeNull();
    expect(await e.check('https://internal.example.com/')).toBeNull();
    expect(await e.check('https://lan.example.com/')).toMatch(/refused/);
    expect(await e.check('https://192.168.1.1/')).toMatch(/refused/);
    // Outside the allow-list, plain http still needs https.
    expect(await e.check('http://hooks.example.com/')).toMatch(/must use https/);
  });

  it('a host name lets that name through whatever it resolves to', async () => {
    const e = egress(['internal.example.com'], res);
    expect(await e.check('https://internal.example.com/')).toBeNull();
    expect(await e.check('http://internal.example.com:8080/')).toBeNull();
    expect(await e.check('https://other.example.com/')).toMatch(/refused/);
    expect(await e.check('https://10.1.2.3/')).toMatch(/refused/);
  });

  it('an empty allow-list refuses credentials, other schemes and non-URLs', async () => {
    const e = egress([], res);
    expect(await e.check('https://hooks.example.com/')).toBeNull();
    expect(await e.check('https://u:p@hooks.example.com/')).toMatch(/credentials/);
    expect(await e.check('ftp://hooks.example.com/')).toMatch(/https/);
    expect(await e.check('hooks.example.com/path')).toEqual(expect.any(String));
  });
});
