// The WhatsApp provider answering with 500s, with 429 and Retry-After, or not at all: sends are
// retried with growing waits (or at least the provider's Retry-After) and end sent exactly once,
// and while one account's send hangs at the provider, that account's other work (its API calls,
// its webhook deliveries) and other accounts' sends go on undelayed.
// Already covered in test/messages/whatsapp.test.ts, not repeated here: one outage retried then sent,
// and a message whose retries run out failing with PROVIDER_UNAVAILABLE and refunded ("fails and
// refunds a message whose retries run out").
import { beforeAll, describe, expect, it } from 'vitest';
import { graphError, type RecordedRequest } from '../fakes/whatsapp-cloud.ts';
import { call } from '../helpers/client.ts';
import {
  credit,
  customerWrote,
  type MessagingTenant,
  messageWhen,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';
import { eventually } from '../helpers/wait.ts';

const RETRY_DELAY_SECONDS = 1;
const PROVIDER_TIMEOUT_MS = 4000;
/** A hand-over that timed out waits this long (from its start) for Meta's callback before it goes again. */
const IN_DOUBT_SECONDS = 6;
/** What "undelayed" means on a shared 2-core machine, far below the provider's timeout. */
const OTHER_WORK_BOUND_MS = 1000;
/** Below the second a message given back for later waits: what a queued burst must stay under. */
const DEFER_BOUND_MS = 2000;
/** Slack on the far side of a wait: the job is fetched on the workers' next poll (0.5 s). */
const LATE_BY_MS = 2500;

let base: string;
const env = useMessagingApp({
  config: {
    providerTimeoutMs: PROVIDER_TIMEOUT_MS,
    dispatchRetryLimit: 3,
    dispatchRetryDelaySeconds: RETRY_DELAY_SECONDS,
    dispatchInDoubtSeconds: IN_DOUBT_SECONDS,
    logLevel: 'silent',
  },
});

/** When each send reached the fake, by recipient: the gaps between a message's attempts. */
const arrivals = new Map<string, number[]>();
/** Recipients whose next send the fake never answers. */
const hangNext = new Set<string>();
/** Business numbers (phone number ids) whose every send the fake never answers. */
const hangingNumbers = new Set<string>();
/** Recipients whose next send the fake answers 200 without saying what it took. */
const noIdNext = new Set<string>();
/** The body of each send the fake did not answer properly, by recipient (what Meta would echo). */
const unanswered = new Map<string, any>();
beforeAll(() => {
  env.fake.respond = (req: RecordedRequest) => {
    const to = req.method === 'POST' && req.path.endsWith('/messages') ? req.body?.to : undefined;
    if (!to) return undefined;
    arrivals.set(to, [...(arrivals.get(to) ?? []), performance.now()]);
    if ([...hangingNumbers].some((id) => req.path.includes(`/${id}/messages`)))
      return { status: 200, hang: true };
    if (noIdNext.delete(to)) {
      unanswered.set(to, req.body);
      return {
        status: 200,
        body: { messaging_product: 'whatsapp', contacts: [{ input: to, wa_id: to.slice(1) }] },
      };
    }
    if (!hangNext.delete(to)) return undefined;
    unanswered.set(to, req.body);
    return { status: 200, hang: true };
  };
});

beforeAll(async () => {
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

const gapsOf = (to: string) => (arrivals.get(to) ?? []).slice(1).map((t, i) => t - arrivals.get(to)![i]!);

let numbers = 0;
/** A number that wrote in a minute ago: free-form text to it is inside the service window. */
async function customerOf(t: MessagingTenant): Promise<string> {
  const phone = `+1415555${String(2000 + numbers++)}`;
  await customerWrote(env.tdb.db, t.accountId, phone, new Date(Date.now() - 60_000));
  return phone;
}

async function liveTenant() {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
  await credit(env.app, env.partner.partnerKey, t.accountId, '10.00');
  return t;
}

async function sendText(t: MessagingTenant, to: string): Promise<string> {
  const res = await call(env.app, 'POST', '/messages', {
    key: t.apiKey,
    body: { to, type: 'text', text: 'hi' },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.id;
}

/** The fake's answers to a recipient's sends: how many it took, how many it failed. */
function handOvers(to: string) {
  const accepted = env.fake.sent.filter((s) => s.to === to);
  return {
    attempts: arrivals.get(to)?.length ?? 0,
    accepted: accepted.length,
    wamids: accepted.map((s) => s.wamid),
  };
}

async function timedMs<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await work();
  return [value, performance.now() - started];
}

describe('a provider failing, then answering', () => {
  it('retries 500s with growing waits and sends the message exactly once', async () => {
    const t = await liveTenant();
    const to = await customerOf(t);
    env.fake.failNext(graphError(131000, { status: 500 }), 2);
    const id = await sendText(t, to);
    const sent = await messageWhen(env.app, t.apiKey, id, 'sent', 15_000);

    expect(handOvers(to)).toEqual({ attempts: 3, accepted: 1, wamids: [sent.providerMessageId] });
    const [first, second] = gapsOf(to) as [number, number];
    // The retry delay, then twice it.
    expect(first).toBeGreaterThanOrEqual(RETRY_DELAY_SECONDS * 1000);
    expect(second).toBeGreaterThanOrEqual(2 * RETRY_DELAY_SECONDS * 1000);
    expect(second).toBeGreaterThan(first);
    expect(first).toBeLessThan(RETRY_DELAY_SECONDS * 1000 + LATE_BY_MS);
    expect(second).toBeLessThan(2 * RETRY_DELAY_SECONDS * 1000 + LATE_BY_MS);
  });

  it('keeps a later message to the number behind one waiting to be retried', async () => {
    const t = await liveTenant();
    const to = await customerOf(t);
    env.fake.failNext(graphError(131000, { status: 500 }));
    const first = await sendText(t, to);
    await eventually(
      async () => arrivals.get(to)?.length ?? 0,
      (n) => n >= 1,
    );
    // The first is waiting out its retry delay, not claimed by any batch: the second, though
    // ready at once, goes after it.
    const second = await sendText(t, to);
    await messageWhen(env.app, t.apiKey, second, 'sent', 15_000);
    expect(env.fake.sent.filter((s) => s.to === to).map((s) => s.body.biz_opaque_callback_data)).toEqual([
      first,
      second,
    ]);
  });

  it('waits at least the Retry-After of a 429 before trying again', async () => {
    const t = await liveTenant();
    const to = await customerOf(t);
    const retryAfter = 3;
    env.fake.failNext(graphError(130429, { status: 429, headers: { 'retry-after': String(retryAfter) } }));
    const id = await sendText(t, to);
    const sent = await messageWhen(env.app, t.apiKey, id, 'sent', 15_000);

    expect(handOvers(to)).toEqual({ attempts: 2, accepted: 1, wamids: [sent.providerMessageId] });
    const [gap] = gapsOf(to) as [number];
    expect(gap).toBeGreaterThanOrEqual(retryAfter * 1000);
    expect(gap).toBeLessThan(retryAfter * 1000 + LATE_BY_MS);
  });
});

describe('a provider that does not answer', () => {
  it('times the send out and holds it in doubt, while the account’s other work and other accounts’ sends go on', async () => {
    const stuck = await liveTenant();
    const other = await liveTenant();
    const { receiver } = await env.subscribe(stuck.apiKey, ['contact.created']);
    const to = await customerOf(stuck);
    const elsewhere = await customerOf(other);

    hangNext.add(to);
    const hungAt = performance.now();
    const id = await sendText(stuck, to);
    await eventually(
      async () => handOvers(to).attempts,
      (n) => n === 1,
    );

    // While the hand-over hangs: the stuck account's reads and contact writes, its webhook
    // deliveries, and another account's send all finish well inside the provider's timeout.
    const [account, accountMs] = await timedMs(() => call(env.app, 'GET', '/account', { key: stuck.apiKey }));
    expect(account.status).toBe(200);
    const [created, createMs] = await timedMs(() =>
      call(env.app, 'POST', '/contacts', { key: stuck.apiKey, body: { phone: '+14045550123' } }),
    );
    expect(created.status).toBe(201);
    const [updated, updateMs] = await timedMs(() =>
      call(env.app, 'PATCH', `/contacts/${created.body.id}`, { key: stuck.apiKey, body: { name: 'Ann' } }),
    );
    expect(updated.status).toBe(200);
    const [, deliveredMs] = await timedMs(() => receiver.waitFor(1, OTHER_WORK_BOUND_MS * 5));
    const [otherSent, otherMs] = await timedMs(async () =>
      messageWhen(env.app, other.apiKey, await sendText(other, elsewhere), 'sent', PROVIDER_TIMEOUT_MS * 3),
    );
    expect(otherSent.status).toBe('sent');
    // Still hanging: everything above happened during the one stuck attempt.
    expect(handOvers(to).attempts).toBe(1);
    const took = { accountMs, createMs, updateMs, deliveredMs, otherMs };
    expect(Object.entries(took).filter(([, ms]) => ms >= OTHER_WORK_BOUND_MS)).toEqual([]);

    // The hung attempt times out: Meta may have the message, so it is in doubt, not sent again at
    // once. No callback came (Meta never took it): it goes again when the in-doubt wait is over.
    const sent = await messageWhen(env.app, stuck.apiKey, id, 'sent', IN_DOUBT_SECONDS * 1000 + 10_000);
    expect(handOvers(to)).toEqual({ attempts: 2, accepted: 1, wamids: [sent.providerMessageId] });
    const [gap] = gapsOf(to) as [number];
    expect(gap).toBeGreaterThanOrEqual(IN_DOUBT_SECONDS * 1000);
    expect(gap).toBeLessThan((IN_DOUBT_SECONDS + 1) * 1000 + LATE_BY_MS);
    expect(arrivals.get(to)![0]! - hungAt).toBeLessThan(OTHER_WORK_BOUND_MS);
  }, 30_000);

  /** Meta's `sent` callback for a send it took but whose answer was lost, naming our id as Meta does. */
  async function metaReportsSent(t: MessagingTenant & { business: any }, to: string) {
    const body = unanswered.get(to);
    const res = await env.fake.postCallback(
      `${base}/api/v1/callbacks/whatsapp/${t.accountId}`,
      t.business,
      env.fake.statusPayload(t.business, {
        wamid: 'wamid.taken-but-unanswered',
        status: 'sent',
        recipientId: to.slice(1),
        bizOpaqueCallbackData: body.biz_opaque_callback_data,
      }),
    );
    expect(JSON.parse(res.body)).toEqual({ applied: 1, dropped: 0 });
  }

  for (const [what, mark] of [
    ['a hand-over that timed out', hangNext],
    ['a 200 without messages[]', noIdNext],
  ] as const) {
    it(`${what} is settled by Meta's sent callback, and never sent again`, async () => {
      const t = await liveTenant();
      const to = await customerOf(t);
      mark.add(to);
      const id = await sendText(t, to);
      await eventually(
        async () => unanswered.has(to),
        (seen) => seen,
      );
      // In doubt: queued, claimed, not accepted, not sent again meanwhile.
      const queued = (await call(env.app, 'GET', `/messages/${id}`, { key: t.apiKey })).body;
      expect(queued).toMatchObject({ status: 'queued', acceptedAt: null, providerMessageId: null });
      await metaReportsSent(t, to);
      const sent = await messageWhen(env.app, t.apiKey, id, 'sent');
      expect(sent.providerMessageId).toBe('wamid.taken-but-unanswered');
      // Past the moment the in-doubt wait would have sent it again: still the one attempt.
      const resendDue = arrivals.get(to)![0]! + (IN_DOUBT_SECONDS + 1) * 1000 + LATE_BY_MS;
      await new Promise((r) => setTimeout(r, resendDue - performance.now()));
      expect(handOvers(to).attempts).toBe(1);
      expect((await call(env.app, 'GET', `/messages/${id}`, { key: t.apiKey })).body.status).toBe('sent');
    }, 30_000);
  }
});

describe('a hung hand-over in a batch', () => {
  it('does not keep the batch’s other messages queued until it times out', async () => {
    const stuck = await liveTenant();
    const other = await liveTenant();
    const hanging = await customerOf(stuck);
    const sameAccount = await customerOf(stuck);
    const otherAccount = await customerOf(other);
    hangNext.add(hanging);
    // With the workers stopped the three sends wait as jobs, and the first fetch takes them all
    // as one batch.
    await env.app.ctx.jobs.stop(5000);
    const ids: string[] = [];
    try {
      ids.push(await sendText(stuck, hanging), await sendText(stuck, sameAccount));
      ids.push(await sendText(other, otherAccount));
    } finally {
      await env.app.ctx.jobs.start();
      await env.app.ctx.jobs.runWorkers();
    }
    const [hung, ...others] = ids as [string, string, string];
    const [, ms] = await timedMs(async () => {
      await messageWhen(env.app, stuck.apiKey, others[0]!, 'sent', PROVIDER_TIMEOUT_MS * 3);
      await messageWhen(env.app, other.apiKey, others[1]!, 'sent', PROVIDER_TIMEOUT_MS * 3);
    });
    expect(handOvers(hanging).attempts).toBe(1);
    expect(ms).toBeLessThan(OTHER_WORK_BOUND_MS);
    await messageWhen(env.app, stuck.apiKey, hung, 'sent', IN_DOUBT_SECONDS * 1000 + 10_000);
    expect(handOvers(hanging)).toMatchObject({ attempts: 2, accepted: 1 });
  }, 30_000);
});

describe('an account over its budget', () => {
  it('with a healthy provider, a burst queues for its places instead of being sent back for later', async () => {
    const busy = await liveTenant();
    const numbers = await Promise.all(Array.from({ length: 30 }, () => customerOf(busy)));
    env.fake.latencyMs = 50;
    try {
      await Promise.all(numbers.map((to) => sendText(busy, to)));
      const [, ms] = await timedMs(async () => {
        await eventually(
          async () => numbers.filter((to) => env.fake.sent.some((s) => s.to === to)).length,
          (n) => n === numbers.length,
        );
      });
      // 30 hand-overs of 50 ms, 8 at a time: a few hundred ms; a second's wait would show.
      expect(ms).toBeLessThan(DEFER_BOUND_MS);
      expect(numbers.map((to) => handOvers(to).attempts)).toEqual(numbers.map(() => 1));
    } finally {
      env.fake.latencyMs = 0;
    }
  }, 30_000);
});

describe('one account whose provider hangs on every call', () => {
  it("holds at most its budget of the process's hand-overs: another account's send goes within a second", async () => {
    const stuck = await liveTenant();
    const other = await liveTenant();
    hangingNumbers.add(stuck.business.phoneNumberId);
    try {
      // More messages than the process has slots (32), all hanging until the provider timeout.
      const numbers = await Promise.all(Array.from({ length: 40 }, () => customerOf(stuck)));
      await Promise.all(numbers.map((to) => sendText(stuck, to)));
      await eventually(
        async () => numbers.filter((to) => arrivals.has(to)).length,
        (n) => n >= 8,
      );
      const elsewhere = await customerOf(other);
      const [sent, ms] = await timedMs(async () =>
        messageWhen(env.app, other.apiKey, await sendText(other, elsewhere), 'sent', PROVIDER_TIMEOUT_MS * 3),
      );
      expect(sent.status).toBe('sent');
      expect(ms).toBeLessThan(OTHER_WORK_BOUND_MS);
      // Only the account's budget of hand-overs reached the provider; the rest wait their turn.
      expect(numbers.filter((to) => arrivals.has(to)).length).toBe(8);
    } finally {
      hangingNumbers.delete(stuck.business.phoneNumberId);
    }
  }, 30_000);
});
