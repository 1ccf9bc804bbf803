// Crash safety of the outbox: events committed just before the server is killed (SIGKILL, no
// shutdown of any kind) are all delivered, exactly as committed, by the next process to start.
// Runs the real server as a child process: on PostgreSQL when TEST_DATABASE_URL is set, else on
// the embedded database in a temporary DATA_DIR.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountOnProcess,
  processApi as api,
  bootstrapOnProcess,
  exited,
  startServerProcess,
  useDurableStore,
} from '../helpers/processes.ts';
import { Receiver, verifySignature } from '../helpers/receiver.ts';

const CREDITS = 40;

describe('events committed right before a crash', () => {
  const store = useDurableStore('crash', {
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    // A short timeout makes the lease of an attempt cut off by the crash run out sooner.
    TIDINGS_WEBHOOK_TIMEOUT_MS: '1000',
    TIDINGS_WEBHOOK_POLL_MS: '100',
  });
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await Receiver.start();
  });

  afterAll(async () => {
    await receiver?.close();
  });

  it('are all delivered after a restart, none missing, each as committed', async () => {
    const first = await startServerProcess(store.settings);
    store.servers.push(first);
    const partnerKey = await bootstrapOnProcess(first);
    const { accountId, apiKey } = await accountOnProcess(first, partnerKey, 'crash-1');
    const webhook = await api(first, 'POST', '/webhooks', apiKey, {
      url: receiver.url(),
      events: ['wallet.credited'],
    });
    expect(webhook.status).toBe(201);

    // Until the crash the receiver never answers: whatever the first process sends is never
    // confirmed, and every delivery must still be pending when it dies.
    receiver.respond = () => ({ status: 200, delayMs: 60_000 });
    const credits = await Promise.all(
      Array.from({ length: CREDITS }, (_, i) =>
        api(first, 'POST', `/partner/accounts/${accountId}/wallet/credits`, partnerKey, {
          amount: `${i + 1}.00`,
          reference: `credit-${i}`,
        }),
      ),
    );
    first.child.kill('SIGKILL');
    expect((await exited(first.child, 10_000)).signal).toBe('SIGKILL');
    expect(credits.map((c) => c.status)).toEqual(Array(CREDITS).fill(201));
    const sentBeforeCrash = receiver.received.length;
    expect(sentBeforeCrash).toBeLessThan(CREDITS);

    receiver.respond = () => ({ status: 200 });
    const second = await startServerProcess(store.settings);
    store.servers.push(second);
    const eventIds = new Set<string>();
    const deadline = Date.now() + 40_000;
    while (eventIds.size < CREDITS && Date.now() < deadline) {
      for (const r of receiver.received.slice(sentBeforeCrash)) eventIds.add(String(r.headers['webhook-id']));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(eventIds.size).toBe(CREDITS);

    // Every committed credit arrived once per process attempt, signed, with the data committed.
    const byReference = new Map<string, Record<string, unknown>>();
    for (const r of receiver.received.slice(sentBeforeCrash)) {
      const event = verifySignature(webhook.body.secret, r) as { type: string; accountId: string; data: any };
      expect(event.type).toBe('wallet.credited');
      expect(event.accountId).toBe(accountId);
      byReference.set(event.data.reference, event.data);
    }
    expect(byReference.size).toBe(CREDITS);
    for (const credit of credits) expect(byReference.get(credit.body.reference)).toEqual(credit.body);

    // The restarted process records them all as delivered.
    let succeeded = 0;
    while (Date.now() < deadline) {
      const list = await api(
        second,
        'GET',
        `/webhooks/${webhook.body.id}/deliveries?status=succeeded&limit=100`,
        apiKey,
      );
      succeeded = list.body.data.length;
      if (succeeded === CREDITS) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(succeeded).toBe(CREDITS);
    second.child.kill('SIGTERM');
    expect(await exited(second.child, 15_000)).toEqual({ code: 0, signal: null });
  }, 90_000);
});
