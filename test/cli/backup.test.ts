// Backups of the embedded database (tidings backup / restore). A real server on a DATA_DIR sends
// 1,000 template messages through the sandbox (each delivered a moment later) with a webhook
// endpoint that answers slowly, so deliveries queue; `tidings backup` runs in the middle, through
// the running server. The backup is restored into a new DATA_DIR and a server started on it: every
// message acknowledged before the backup began is there, every message there reaches `delivered`,
// and every pending webhook delivery is delivered, signed with the secret made before (the backup
// carried the server's secrets key). On PostgreSQL runs: the commands refuse and point to pg_dump.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { openPglite } from '../../src/kernel/database/db.ts';
import { onPostgres } from '../helpers/harness.ts';
import {
  accountOnProcess,
  processApi as api,
  bootstrapOnProcess,
  exited,
  ROOT,
  running,
  type ServerProcess,
  startServerProcess,
  watchProcess,
} from '../helpers/processes.ts';
import { Receiver } from '../helpers/receiver.ts';
import { eventually, sleep, until } from '../helpers/wait.ts';

const TOTAL = 1000;
const phone = (i: number) => `+1415556${String(i).padStart(4, '0')}`;

/** Runs a `tidings` command to its end: its exit code and what it printed. */
function cli(
  args: string[],
  env: Record<string, string>,
): { done: Promise<{ code: number; output: string }> } {
  const { done } = watchProcess('node', ['src/cli.ts', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { done: done.then((run) => ({ code: run.code ?? -1, output: run.output })) };
}

const dirs: string[] = [];
const servers: ServerProcess[] = [];
const tempDir = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), `tidings-${name}-`));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const s of servers) if (running(s.child)) s.child.kill('SIGKILL');
  await Promise.all(servers.map((s) => exited(s.child, 10_000)));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.runIf(!onPostgres)('tidings backup and restore (embedded database)', () => {
  it('restores everything acknowledged before the backup, and the restored server finishes what was pending', async () => {
    // Slow answers make webhook deliveries queue behind the sends.
    const receiver = await Receiver.start(() => ({ status: 204, delayMs: 5 }));
    const first = tempDir('backup-a');
    // No SECRETS_KEY: the server makes its own in the data directory, and the backup carries it.
    const settings = { SECRETS_KEY: '', WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' };
    const a = await startServerProcess({ ...settings, DATA_DIR: first });
    servers.push(a);
    const partnerKey = await bootstrapOnProcess(a);
    const { apiKey } = await accountOnProcess(a, partnerKey, 'acme');
    const channel = await api(a, 'PUT', '/account/channel', apiKey, {
      provider: 'sandbox',
      sandbox: { deliveredAfterMs: 1500, readAfterMs: null, reviewAfterMs: 0 },
    });
    expect(channel.status, JSON.stringify(channel.body)).toBe(200);
    const hook = await api(a, 'POST', '/webhooks', apiKey, { url: receiver.url(), events: ['message.*'] });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    const template = await api(a, 'POST', '/templates', apiKey, {
      name: 'order_ready',
      language: 'en_US',
      category: 'UTILITY',
      components: [
        { type: 'BODY', text: 'Hi {{1}}, your order is ready.', example: { body_text: [['Ann']] } },
      ],
    });
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    expect((await api(a, 'POST', `/templates/${template.body.id}/submit`, apiKey)).status).toBe(200);
    const approved = await eventually(
      () => api(a, 'GET', `/templates/${template.body.id}`, apiKey),
      (r) => r.body.status === 'APPROVED',
    );
    expect(approved.body.status).toBe('APPROVED');

    // 1,000 sends, 16 at a time; the backup starts once 300 are acknowledged.
    const acked: { id: string; at: number }[] = [];
    let next = 0;
    let backupStartedAt = Number.POSITIVE_INFINITY;
    let backup: ReturnType<typeof cli> | null = null;
    const file = join(tempDir('backup-file'), 'tidings.backup');
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let i = next++; i < TOTAL; i = next++) {
          for (;;) {
            const res = await api(a, 'POST', '/messages', apiKey, {
              to: phone(i),
              templateName: 'order_ready',
              templateLanguage: 'en_US',
              parameters: ['Ann'],
            });
            if (res.status === 429) {
              await sleep(100);
              continue;
            }
            expect(res.status, JSON.stringify(res.body)).toBe(202);
            acked.push({ id: res.body.id, at: performance.now() });
            break;
          }
          if (acked.length >= 300 && !backup) {
            backupStartedAt = performance.now();
            backup = cli(['backup', file], { DATA_DIR: first });
          }
        }
      }),
    );
    const taken = await backup!.done;
    expect(taken.code, taken.output).toBe(0);
    expect(taken.output).toMatch(
      /Backed up the running server's \(pid \d+\) database to .* rows in \d+ tables/s,
    );
    expect(taken.output).toContain('It holds the secrets key');
    // The first server goes; what it had not finished is the restored one's to finish.
    a.child.kill('SIGKILL');
    await exited(a.child, 10_000);

    const second = tempDir('backup-b');
    const restored = await cli(['restore', file], { DATA_DIR: second }).done;
    expect(restored.code, restored.output).toBe(0);
    expect(restored.output).toContain('each as many as the backup counted');
    expect(readFileSync(join(second, 'secrets.key'), 'utf8')).toBe(
      readFileSync(join(first, 'secrets.key'), 'utf8'),
    );
    // A second restore into the same directory is refused, leaving it as it was.
    const again = await cli(['restore', file], { DATA_DIR: second }).done;
    expect(again.code).toBe(2);
    expect(again.output).toContain('already holds a database');

    // What the restored server will have to finish, read from the restored files before it starts:
    // messages the sandbox had not yet delivered, and webhook deliveries not yet made.
    const restoredDb = await openPglite(join(second, 'db'));
    const pending = (
      await restoredDb.query<{ messages: number; deliveries: number }>(
        `SELECT (SELECT count(*) FROM messages WHERE status <> 'delivered')::int AS messages,
                (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')::int AS deliveries`,
      )
    ).rows[0]!;
    await restoredDb.close();
    expect(pending.messages).toBeGreaterThan(0);
    expect(pending.deliveries).toBeGreaterThan(0);

    const fromReceiver = receiver.received.length;
    const b = await startServerProcess({ ...settings, DATA_DIR: second });
    servers.push(b);
    const before = acked.filter((m) => m.at < backupStartedAt);
    expect(before.length).toBeGreaterThanOrEqual(300);
    const listed = new Map<string, string>();
    for (let cursor: string | null = null; ; ) {
      const page = await api(b, 'GET', `/messages?limit=100${cursor ? `&cursor=${cursor}` : ''}`, apiKey);
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      for (const m of page.body.data) listed.set(m.id, m.status);
      cursor = page.body.nextCursor;
      if (!cursor) break;
    }
    expect(before.filter((m) => !listed.has(m.id))).toEqual([]);

    // Every restored message reaches delivered on the restored server…
    const undelivered = async (): Promise<string | null> => {
      for (const [id, status] of listed) {
        if (status === 'delivered') continue;
        const m = await api(b, 'GET', `/messages/${id}`, apiKey);
        listed.set(id, m.body.status);
        if (m.body.status !== 'delivered') return id;
      }
      return null;
    };
    await until(
      async () => (await undelivered()) === null,
      60_000,
      () => `statuses: ${JSON.stringify(Object.groupBy([...listed.values()], (s) => s))}`,
    );
    // …and its delivered event reaches the receiver (from the first server or the restored one),
    // signed with the endpoint's secret made before the backup.
    const delivered = () =>
      new Set(
        receiver.received.filter((r) => r.json?.type === 'message.delivered').map((r) => r.json.data.id),
      );
    await until(
      () => [...listed.keys()].every((id) => delivered().has(id)),
      60_000,
      () => `${[...listed.keys()].filter((id) => !delivered().has(id)).length} delivered events missing`,
    );
    const signer = new Webhook(hook.body.secret);
    const late = receiver.received.slice(fromReceiver);
    expect(late.length).toBeGreaterThan(0);
    for (const r of late)
      expect(() => signer.verify(r.body, r.headers as Record<string, string>)).not.toThrow();
    await receiver.close();
  }, 240_000);
});

describe.runIf(onPostgres)('tidings backup and restore with DATABASE_URL', () => {
  it('refuse, and point to pg_dump and pg_restore', async () => {
    const env = {
      DATABASE_URL: process.env.TEST_DATABASE_URL!,
      SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
    };
    const backup = await cli(['backup', join(tempDir('pg-backup'), 'x.backup')], env).done;
    expect(backup.code).toBe(2);
    expect(backup.output).toContain('pg_dump');
    const restore = await cli(['restore', 'x.backup'], env).done;
    expect(restore.code).toBe(2);
    expect(restore.output).toContain('pg_restore');
  });
});
