// A coexistence number's six months of chats (Meta's `history` webhooks): 10,000 messages in ten
// chunks, out of order and one repeated, stored as they come and imported once, each customer's in a
// closed conversation of its own in the past, the business's messages `business_app`, no window
// opened, no event per message; the progress on the channel until `complete`. A declined history
// says so.
import { describe, expect, it } from 'vitest';
import { call, listAll } from '../helpers/client.ts';
import { type MessagingTenant, useMessagingApp } from '../helpers/messaging.ts';
import { usePartnerMetaApp } from '../helpers/meta-app.ts';
import { eventually } from '../helpers/wait.ts';

const env = useMessagingApp({ config: { providerTimeoutMs: 1000 } });

const meta = usePartnerMetaApp(env);
const coexisting = () => meta.signedUp({ coexistence: true });
const post = meta.post;
const historyOf = async (t: MessagingTenant) =>
  (await call(env.app, 'GET', '/account/channel', { key: t.apiKey })).body.whatsapp.syncs.history;

const CUSTOMERS = 40;
const CHUNKS = 10;
const PER_CHUNK = 1000;
const customer = (i: number) => `+1415556${String(i).padStart(4, '0')}`;
const DAY = 86_400;

describe('the history of a coexistence number', () => {
  it('imports 10,000 messages once, each customer in a closed conversation of the past', async () => {
    const t = await coexisting();
    const start = Math.floor(Date.now() / 1000) - 170 * DAY;
    // Chunk c holds 25 messages of each customer, alternately theirs and the business's, a minute apart.
    const chunks = Array.from({ length: CHUNKS }, (_, c) =>
      env.fake.historyPayload(t.signup.business, {
        phase: c < 2 ? 0 : c < 6 ? 1 : 2,
        chunkOrder: c + 1,
        progress: (c + 1) * 10,
        threads: Array.from({ length: CUSTOMERS }, (_, k) => ({
          customer: customer(k),
          messages: Array.from({ length: PER_CHUNK / CUSTOMERS }, (_, j) => ({
            fromBusiness: j % 2 === 1,
            text: `chunk ${c} message ${j}`,
            timestamp: start + c * 10 * DAY + k * 3600 + j * 60,
          })),
        })),
      }),
    );
    // Out of order, and one of them twice (Meta retries a webhook).
    for (const c of [3, 0, 9, 1, 2, 8, 4, 7, 5, 6, 3]) {
      const answer = await post(t, chunks[c]);
      expect(answer.dropped).toBe(0);
    }
    const history = await eventually(
      () => historyOf(t),
      (h) => h?.status === 'complete',
      120_000,
    );
    expect(history).toMatchObject({
      status: 'complete',
      progress: 100,
      phase: 2,
      messages: CHUNKS * PER_CHUNK,
    });

    const messages = await listAll(env.app, t.apiKey, '/messages');
    expect(messages).toHaveLength(CHUNKS * PER_CHUNK);
    const outbound = messages.filter((m) => m.direction === 'outbound');
    // 25 a customer a chunk, the odd ones the business's: 12 of each 25.
    expect(outbound).toHaveLength(CHUNKS * CUSTOMERS * Math.floor(PER_CHUNK / CUSTOMERS / 2));
    expect(new Set(outbound.map((m) => `${m.source}/${m.status}`))).toEqual(new Set(['business_app/read']));
    expect(
      new Set(messages.filter((m) => m.direction === 'inbound').map((m) => `${m.source}/${m.status}`)),
    ).toEqual(new Set(['null/received']));
    // Each customer: one contact, no window opened, one closed conversation holding their 250.
    const contacts = await listAll(env.app, t.apiKey, '/contacts');
    expect(contacts).toHaveLength(CUSTOMERS);
    expect(contacts.every((c) => c.lastInboundAt === null)).toBe(true);
    const first = contacts.find((c) => c.phone === customer(0))!;
    const conversations = await call(env.app, 'GET', `/conversations?contactId=${first.id}&status=closed`, {
      key: t.apiKey,
    });
    expect(conversations.body.data).toHaveLength(1);
    const conversation = conversations.body.data[0];
    expect(new Date(conversation.lastMessageAt).getTime()).toBeLessThan(Date.now() - 60 * DAY * 1000);
    const theirs = await listAll(env.app, t.apiKey, `/conversations/${conversation.id}/messages`);
    expect(theirs).toHaveLength((CHUNKS * PER_CHUNK) / CUSTOMERS);
    // Newest first, as a conversation's messages always come: the imported ones sort by when sent.
    const times = theirs.map((m) => new Date(m.createdAt).getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(new Date(Math.min(...times)).toISOString()).toBe(new Date(start * 1000).toISOString());
    // No event for six months of messages.
    const received = await call(env.app, 'GET', '/events?type=message.received', { key: t.apiKey });
    expect(received.body.data).toEqual([]);

    // A chunk again, after its import: nothing new.
    expect(await post(t, chunks[5])).toMatchObject({ applied: 0 });
    expect((await historyOf(t)).messages).toBe(CHUNKS * PER_CHUNK);
  }, 180_000);

  it('a message the webhooks brought already is not imported twice', async () => {
    const t = await coexisting();
    const echo = env.fake.echoPayload(t.signup.business, [
      { to: customer(99), text: 'sent from the app', id: 'wamid.ECHOED1' },
    ]);
    expect(await post(t, echo)).toMatchObject({ applied: 1 });
    const chunk = env.fake.historyPayload(t.signup.business, {
      phase: 0,
      chunkOrder: 1,
      progress: 100,
      threads: [
        {
          customer: customer(99),
          messages: [
            {
              id: 'wamid.ECHOED1',
              fromBusiness: true,
              text: 'sent from the app',
              timestamp: Math.floor(Date.now() / 1000),
            },
            { fromBusiness: false, type: 'media_placeholder', timestamp: Math.floor(Date.now() / 1000) - 60 },
          ],
        },
      ],
    });
    await post(t, chunk);
    const history = await eventually(
      () => historyOf(t),
      (h) => h?.status === 'complete',
    );
    expect(history, JSON.stringify(history)).toMatchObject({ messages: 1 });
    const messages = await listAll(env.app, t.apiKey, '/messages');
    expect(messages.map((m) => m.type).sort()).toEqual(['text', 'unsupported']);
  });

  it('a history the business declined to share says so', async () => {
    const t = await coexisting();
    await eventually(
      () => historyOf(t),
      (h) => h?.status === 'requested',
    );
    expect(await post(t, env.fake.historyDeclinedPayload(t.signup.business))).toMatchObject({ applied: 1 });
    expect(await historyOf(t)).toMatchObject({
      status: 'declined',
      providerCode: 2593109,
      message: expect.stringContaining('History sync is turned off'),
    });
  });
});
