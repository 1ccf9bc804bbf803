// Crash safety of sending: the server is killed (SIGKILL, no shutdown of any kind) in the middle of
// a 1,000-recipient bulk send, and its successor is killed again while a backlog of webhook events
// drains. After the restarts the provider has taken every message exactly once (the fake Graph API
// counts the sends by our message id, which each carries as biz_opaque_callback_data), every
// message is `sent`, and the receiver has every event. Between the kills the test plays Meta's
// part: a `sent` status callback, echoing our id, for each message Meta took, retried until a
// server answers (as Meta retries its webhooks), which is how a message whose hand-over the crash
// cut off learns that it went out (src/modules/messages/dispatch.ts). Real server processes: on
// PostgreSQL when TEST_DATABASE_URL is set, else on the embedded database in a temporary DATA_DIR.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeBusiness, FakeWhatsAppCloud, type SentMessage } from '../fakes/whatsapp-cloud.ts';
import {
  accountOnProcess,
  processApi as api,
  bootstrapOnProcess,
  exited,
  type ServerProcess,
  startServerProcess,
  useDurableStore,
} from '../helpers/processes.ts';
import { type Received, Receiver } from '../helpers/receiver.ts';
import { sleep, until } from '../helpers/wait.ts';

const TOTAL = 1000;
const PER_JOB = 100;
// Long enough for Meta's callback to reach the restarted server on a slow, busy machine: a message
// cut off at the kill must be settled by that callback, not sent again when the wait runs out.
const IN_DOUBT_SECONDS = 40;

const phone = (i: number) => `+1415555${String(i).padStart(4, '0')}`;

/**
 * Meta's side of the status webhooks: one `sent` callback for every message the fake took, posted
 * to whichever server is up and retried until one answers 200.
 */
class MetaCallbacks {
  #played = 0;
  #pending: SentMessage[] = [];
  #stopped = false;
  readonly #loop: Promise<void>;
  readonly #fake: FakeWhatsAppCloud;
  readonly #business: FakeBusiness;
  readonly #target: () => string;

  constructor(fake: FakeWhatsAppCloud, business: FakeBusiness, target: () => string) {
    this.#fake = fake;
    this.#business = business;
    this.#target = target;
    this.#loop = this.#run();
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      this.#pending.push(...this.#fake.sent.slice(this.#played));
      this.#played = this.#fake.sent.length;
      // Meta posts its webhooks concurrently; so does this, 16 at a time.
      const retry: SentMessage[] = [];
      const queue = [...this.#pending];
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let sent = queue.shift(); sent; sent = queue.shift()) {
            try {
              const res = await this.#fake.postStatus(this.#target(), this.#business, {
                wamid: sent.wamid,
                status: 'sent',
                recipientId: sent.to,
                bizOpaqueCallbackData: sent.body.biz_opaque_callback_data,
              });
              if (res.status !== 200) retry.push(sent);
            } catch {
              retry.push(sent); // no server listening right now
            }
          }
        }),
      );
      this.#pending = retry;
      await sleep(50);
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop;
  }
}

describe('a bulk send and a webhook backlog, each cut short by SIGKILL', () => {
  const store = useDurableStore('send-crash', {
    WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
    TIDINGS_WEBHOOK_TIMEOUT_MS: '2000',
    TIDINGS_WEBHOOK_POLL_MS: '100',
    // Few hand-overs at a time against a provider taking 40 ms each: the send lasts seconds, long
    // enough to be cut in the middle.
    TIDINGS_DISPATCH_CONCURRENCY: '8',
    // A dead worker's dispatch job runs again after 5 s; its messages in doubt wait IN_DOUBT_SECONDS
    // from their hand-over for Meta's callback before they go again.
    TIDINGS_DISPATCH_JOB_EXPIRE_SECONDS: '5',
    TIDINGS_DISPATCH_IN_DOUBT_SECONDS: String(IN_DOUBT_SECONDS),
    TIDINGS_JOB_SUPERVISE_SECONDS: '1',
  });
  let fake: FakeWhatsAppCloud;
  let receiver: Receiver;

  beforeAll(async () => {
    fake = await FakeWhatsAppCloud.start({ autoApprove: true });
    fake.latencyMs = 40;
    // A receiver that takes its time, so the events pile up into a backlog.
    receiver = await Receiver.start(() => ({ status: 204, delayMs: 15 }));
  });

  afterAll(async () => {
    await receiver?.close();
    await fake?.close();
  });

  async function start(): Promise<ServerProcess> {
    const server = await startServerProcess({ ...store.settings, TIDINGS_WHATSAPP_GRAPH_URL: fake.graphUrl });
    store.servers.push(server);
    return server;
  }

  async function kill(server: ServerProcess): Promise<void> {
    server.child.kill('SIGKILL');
    expect((await exited(server.child, 10_000)).signal).toBe('SIGKILL');
  }

  it('hands every message to the provider exactly once and delivers every event', async () => {
    let server = await start();
    const partnerKey = await bootstrapOnProcess(server);
    const { accountId, apiKey } = await accountOnProcess(server, partnerKey, 'send-crash');
    const credit = await api(server, 'POST', `/partner/accounts/${accountId}/wallet/credits`, partnerKey, {
      amount: '100.00',
    });
    expect(credit.status, JSON.stringify(credit.body)).toBe(201);
    const business = fake.createBusiness();
    const channel = await api(server, 'PUT', '/account/channel', apiKey, {
      provider: 'whatsapp_cloud',
      whatsapp: FakeWhatsAppCloud.channelSettings(business),
    });
    expect(channel.status, JSON.stringify(channel.body)).toBe(200);
    const template = await api(server, 'POST', '/templates', apiKey, {
      name: 'order_update',
      language: 'en_US',
      category: 'UTILITY',
      components: [
        { type: 'BODY', text: 'Hi {{1}}, your order is on its way.', example: { body_text: [['Ann']] } },
      ],
    });
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    expect((await api(server, 'POST', `/templates/${template.body.id}/submit`, apiKey)).status).toBe(200);
    await until(
      async () =>
        (await api(server, 'GET', `/templates/${template.body.id}`, apiKey)).body.status === 'APPROVED',
      10_000,
      () => 'the template was not approved',
    );
    const hook = await api(server, 'POST', '/webhooks', apiKey, {
      url: receiver.url(),
      events: ['message.sent', 'bulk_job.completed'],
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);

    const t0 = Date.now();
    const phases: string[] = [];
    const phase = (name: string) => phases.push(`${name} at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    let current = server;
    const meta = new MetaCallbacks(
      fake,
      business,
      () => `${current.base}/api/v1/callbacks/whatsapp/${accountId}`,
    );
    try {
      // 1,000 recipients in ten bulk jobs of 100.
      const jobIds: string[] = [];
      const messageIds: string[] = [];
      for (let j = 0; j < TOTAL / PER_JOB; j++) {
        const recipients = Array.from({ length: PER_JOB }, (_, i) => ({
          to: phone(j * PER_JOB + i),
          parameters: [`Guest ${j * PER_JOB + i}`],
        }));
        const res = await api(server, 'POST', '/bulk/messages', apiKey, {
          templateName: 'order_update',
          templateLanguage: 'en_US',
          recipients,
        });
        expect(res.status, JSON.stringify(res.body)).toBe(202);
        jobIds.push(res.body.jobId);
        messageIds.push(...res.body.results.map((r: { messageId: string }) => r.messageId));
      }
      expect(new Set(messageIds).size).toBe(TOTAL);
      phase('accepted');

      // Kill 1: in the middle of the send.
      await until(
        () => fake.sent.length >= TOTAL * 0.3,
        60_000,
        () => `${fake.sent.length} sent`,
      );
      await kill(server);
      phase('kill 1');
      const takenBeforeKill = fake.sent.length;
      expect(takenBeforeKill, 'the first kill came after the whole send').toBeLessThan(TOTAL);

      server = await start();
      current = server;

      // Kill 2: while the webhook events of the send pile up at the slow receiver.
      const eventIds = () => new Set(receiver.received.map((r) => String(r.headers['webhook-id'])));
      await until(
        () => eventIds().size >= TOTAL * 0.5,
        60_000,
        () => `${eventIds().size} events received`,
      );
      await kill(server);
      phase('kill 2');
      const eventsBeforeKill = eventIds().size;
      expect(eventsBeforeKill, 'the second kill came after every event').toBeLessThan(TOTAL + jobIds.length);

      server = await start();
      current = server;

      // Every job completes, every message is sent, and every event arrives.
      await until(
        async () => {
          for (const jobId of jobIds) {
            const job = await api(server, 'GET', `/bulk/messages/${jobId}`, apiKey);
            if (job.body.status !== 'completed') return false;
          }
          return true;
        },
        180_000,
        () => `${fake.sent.length} sent to the provider`,
      );
      phase('jobs completed');
      const sentEvents = (all: Received[]) =>
        new Set(all.filter((r) => r.json?.type === 'message.sent').map((r) => r.json.data.id as string));
      await until(
        () => sentEvents(receiver.received).size === TOTAL,
        60_000,
        () => `${sentEvents(receiver.received).size} message.sent events of ${TOTAL}`,
      );
      const completed = () =>
        new Set(
          receiver.received
            .filter((r) => r.json?.type === 'bulk_job.completed')
            .map((r) => r.json.data.jobId),
        );
      await until(
        () => completed().size === jobIds.length,
        30_000,
        () => `${completed().size} bulk_job.completed events`,
      );

      phase('events received');
      // Exactly once at the provider: each of our messages, by the id it carried, and nothing else.
      const takes = new Map<string, number>();
      for (const s of fake.sent) {
        const id = s.body.biz_opaque_callback_data as string;
        takes.set(id, (takes.get(id) ?? 0) + 1);
      }
      const twice = [...takes].filter(([, n]) => n > 1);
      expect(twice, `${twice.length} messages sent more than once`).toEqual([]);
      expect([...takes.keys()].sort()).toEqual([...messageIds].sort());

      for (const jobId of jobIds) {
        const job = await api(server, 'GET', `/bulk/messages/${jobId}`, apiKey);
        expect(job.body).toMatchObject({ total: PER_JOB, processed: PER_JOB, succeeded: PER_JOB, failed: 0 });
      }
      // Each message is sent with the provider id Meta gave the one send it took.
      const wamidOf = new Map(fake.sent.map((s) => [s.body.biz_opaque_callback_data as string, s.wamid]));
      for (const id of [messageIds[0]!, messageIds[TOTAL / 2]!, messageIds[TOTAL - 1]!]) {
        const m = await api(server, 'GET', `/messages/${id}`, apiKey);
        expect(m.body).toMatchObject({ status: 'sent', providerMessageId: wamidOf.get(id) });
      }
      console.log(
        `send crash: killed at ${takenBeforeKill}/${TOTAL} taken by the provider, ` +
          `then at ${eventsBeforeKill} events received; all ${TOTAL} taken once, ${receiver.received.length} deliveries for ${TOTAL + jobIds.length} events; ${phases.join(', ')}`,
      );
    } finally {
      await meta.stop();
    }
  }, 420_000);
});
