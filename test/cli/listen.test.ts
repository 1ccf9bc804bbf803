// `tidings webhooks listen`, run as a real process against this file's app on a real port: a
// sandbox message's events reach a local receiver, signed with the secret the command printed
// (checked with the `standardwebhooks` package); one line per event with the receiver's answer;
// --since forwards what happened while it was stopped; --events filters; after the server went away
// it reconnects with Last-Event-ID and misses nothing; a bad key stops it.
import type { ChildProcess } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, tenant } from '../helpers/client.ts';
import { createTestApp } from '../helpers/harness.ts';
import { customerWrote, sandboxTenant, useMessagingApp } from '../helpers/messaging.ts';
import { projectPath, ROOT, useWatchedProcesses } from '../helpers/processes.ts';
import { verifySignature } from '../helpers/receiver.ts';
import { until } from '../helpers/wait.ts';

const env = useMessagingApp({ config: { eventStreamPollMs: 50 } });
let base: string;

beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  const address = env.app.server.address();
  if (!address || typeof address === 'string') throw new Error('not listening');
  base = `http://127.0.0.1:${address.port}`;
});
const processes = useWatchedProcesses();

interface Listener {
  child: ChildProcess;
  output: () => string;
  secret: () => string;
  exited: Promise<number | null>;
}

function listen(args: string[], envVars: Record<string, string> = {}): Listener {
  const { child, output, done } = processes.watch('node', ['src/cli.ts', 'webhooks', 'listen', ...args], {
    cwd: ROOT,
    env: { PATH: projectPath(), HOME: process.env.HOME, ...envVars },
  });
  return {
    child,
    output,
    secret: () => /signing secret is (whsec_\S+)/.exec(output())?.[1] ?? '',
    exited: done.then((run) => run.code),
  };
}

async function stop(l: Listener): Promise<void> {
  l.child.kill('SIGINT');
  expect(await l.exited).toBe(0);
}

let phones = 5000;
async function contact(key: string): Promise<string> {
  const res = await call(env.app, 'POST', '/contacts', { key, body: { phone: `+1415555${phones++}` } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

describe('tidings webhooks listen', () => {
  it('forwards a sandbox message’s events to a local URL, signed with the secret it printed', async () => {
    const t = await sandboxTenant(env.app, env.partner.partnerKey);
    const receiver = await env.receiver();
    const l = listen(['--url', base, '--forward-to', receiver.url()], { TIDINGS_API_KEY: t.apiKey });
    await until(
      () => l.secret() !== '' && l.output().includes('Ready: forwarding'),
      15_000,
      () => `output: ${l.output()}`,
    );
    // "Ready" is printed once the stream is open: what happens from then on is forwarded.
    const phone = '+14155552100';
    await customerWrote(env.tdb.db, t.accountId, phone, new Date());
    const sent = await call(env.app, 'POST', '/messages', {
      key: t.apiKey,
      body: { to: phone, type: 'text', text: 'hello' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    await until(
      () => receiver.received.some((r) => r.json?.type === 'message.delivered'),
      15_000,
      () => `received ${receiver.received.map((r) => r.json?.type)}; output: ${l.output()}`,
    );
    const events = await call(env.app, 'GET', '/events', { key: t.apiKey, query: { type: 'message.*' } });
    for (const r of receiver.received) {
      expect(verifySignature(l.secret(), r)).toEqual(r.json);
      expect(r.headers['webhook-id']).toBe(r.json.id);
      expect(r.json.data.id).toBe(sent.body.id);
      // The body is the envelope GET /events shows.
      expect(events.body.data).toContainEqual(r.json);
    }
    expect(l.output()).toMatch(/message\.sent {2}evt_\w+ {2}→ 204/);
    await stop(l);
  });

  it('forwards what happened while it was stopped when asked (--since), and only the --events asked for', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const receiver = await env.receiver();
    const first = listen(['--url', base, '--key', t.apiKey, '--forward-to', receiver.url()]);
    await until(
      () => first.output().includes('Ready: forwarding'),
      15_000,
      () => first.output(),
    );
    const seen = await contact(t.apiKey);
    await receiver.waitFor(1);
    await stop(first);
    const lastId = receiver.received[0]!.json.id;

    const missed = [await contact(t.apiKey), await contact(t.apiKey)];
    const deleted = await call(env.app, 'DELETE', `/contacts/${seen}`, { key: t.apiKey });
    expect(deleted.status).toBe(204);
    const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
    const second = listen(
      [
        '--url',
        `${base}/api/v1/public/`,
        '--forward-to',
        receiver.url(),
        '--since',
        lastId,
        '--secret',
        secret,
      ],
      { TIDINGS_API_KEY: t.apiKey },
    );
    await receiver.waitFor(4, 15_000);
    expect(receiver.received.slice(1).map((r) => `${r.json.type} ${r.json.data.id}`)).toEqual([
      `contact.created ${missed[0]}`,
      `contact.created ${missed[1]}`,
      `contact.deleted ${seen}`,
    ]);
    for (const r of receiver.received.slice(1)) verifySignature(secret, r);
    await stop(second);

    const onlyDeleted = listen([
      '--url',
      base,
      '--key',
      t.apiKey,
      '--forward-to',
      receiver.url(),
      '--since',
      lastId,
      '--events',
      'contact.deleted',
    ]);
    await receiver.waitFor(5, 15_000);
    expect(receiver.received[4]!.json.type).toBe('contact.deleted');
    await stop(onlyDeleted);
    expect(receiver.received).toHaveLength(5);
  });

  it('reconnects after the server went away, with Last-Event-ID: nothing missed, nothing twice', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const receiver = await env.receiver();
    const start = async (port = 0) => {
      const app = await createTestApp(env.tdb.db, { config: { eventStreamPollMs: 50 } });
      await app.listen({ port, host: '127.0.0.1' });
      return app;
    };
    let other = await start();
    const address = other.server.address();
    if (!address || typeof address === 'string') throw new Error('not listening');
    const l = listen([
      '--url',
      `http://127.0.0.1:${address.port}`,
      '--key',
      t.apiKey,
      '--forward-to',
      receiver.url(),
    ]);
    try {
      await until(
        () => l.output().includes('Ready: forwarding'),
        15_000,
        () => l.output(),
      );
      const before = await contact(t.apiKey);
      await receiver.waitFor(1);
      await other.close();
      const whileDown = [await contact(t.apiKey), await contact(t.apiKey)];
      await until(
        () => l.output().includes('cannot reach'),
        15_000,
        () => l.output(),
      );
      other = await start(address.port);
      await receiver.waitFor(3, 20_000);
      const after = await contact(t.apiKey);
      await receiver.waitFor(4);
      expect(receiver.received.map((r) => r.json.data.id)).toEqual([before, ...whileDown, after]);
      expect(l.output()).toContain('reconnected');
      await stop(l);
    } finally {
      await other.close();
    }
  });

  it('stops with a readable message when the key is refused', async () => {
    const l = listen(['--url', base, '--key', 'tdg_live_nope', '--forward-to', 'http://127.0.0.1:9/hook']);
    expect(await l.exited).toBe(1);
    expect(l.output()).toContain('The server refused the stream: 401 INVALID_API_KEY');
  });
});
