// Property: whatever mix of concurrent debits (live sends charged to the wallet), credits (partner
// top-ups) and refunds (charged messages that fail), the wallet never goes negative, and its balance
// is exactly the sum of its ledger. Every operation goes through HTTP as a client or Meta would make
// it: sends and credits are API calls; a refund happens because the fake WhatsApp Cloud API refuses
// the message (131026, refunded by the dispatch worker) or reports it failed after taking it (a
// signed status callback, refunded by the callback handler). Operations run in waves; the
// operations of a wave run at once, while the dispatch workers refund the failures of earlier ones.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphError } from '../fakes/whatsapp-cloud.ts';
import { call, listAll, type Reply } from '../helpers/client.ts';
import {
  approvedTemplate,
  credit,
  eventually,
  useMessagingApp,
  whatsappTenant,
} from '../helpers/messaging.ts';
import { decimal, micros } from '../helpers/money.ts';
import { expectError } from '../helpers/setup.ts';

const env = useMessagingApp({ autoApprove: true });
let base: string;
beforeAll(async () => {
  // Meta's status callbacks come over real HTTP.
  await env.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(env.app.server.address() as { port: number }).port}`;
});

type Tenant = Awaited<ReturnType<typeof whatsappTenant>>;

// A send's fate travels in its second template parameter ("refused-17"), which the fake reads; its
// recipient is one of a few numbers, so that most sends go to known contacts and are decided from
// what the process remembers of the wallet (accept-cache.ts) while refunds and credits change it.
let nextSend = 0;
const RECIPIENTS = ['+14155553001', '+14155553002', '+14155553003'];
const tokenOf = (body: any): string => String(body?.template?.components?.[0]?.parameters?.[1]?.text ?? '');

/** What Meta does with a message: takes it; refuses it at once; takes it, then reports it failed. */
type Fate = 'sent' | 'refused' | 'failed_later';

type Op =
  | { kind: 'send'; template: 'marketing' | 'utility'; to: number; fate: Fate }
  | { kind: 'credit'; micros: number }
  | { kind: 'observe' };

// Prices in the US (pricing tests pin them): 0.0250 marketing, 0.0034 utility. Balances start and
// are topped up around a few sends' worth, so sends are refused for lack of funds now and then.
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('send' as const),
      template: fc.constantFrom('marketing' as const, 'utility' as const),
      to: fc.integer({ min: 0, max: RECIPIENTS.length - 1 }),
      fate: fc.constantFrom<Fate>('sent', 'sent', 'refused', 'failed_later'),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('credit' as const),
      micros: fc.integer({ min: 1, max: 60_000 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'observe' as const }) },
);

const scenarioArb = fc.record({
  initialMicros: fc.integer({ min: 0, max: 80_000 }),
  waves: fc.array(fc.array(opArb, { minLength: 1, maxLength: 10 }), { minLength: 1, maxLength: 4 }),
});

const TEMPLATES = {
  marketing: { name: 'weekly_offer', category: 'MARKETING' },
  utility: { name: 'order_update', category: 'UTILITY' },
} as const;

async function liveTenant(): Promise<Tenant> {
  const t = await whatsappTenant(env.app, env.partner.partnerKey, env.fake);
  for (const { name, category } of Object.values(TEMPLATES)) {
    await approvedTemplate(env.app, t.apiKey, {
      name,
      category,
      body: 'Hello {{1}}, news about {{2}} for you. Reply STOP to opt out.',
      examples: ['Ann', 'x'],
    });
  }
  return t;
}

interface Accepted {
  id: string;
  token: string;
  fate: Fate;
  charged: bigint;
}

/** What the client saw: the sends accepted, the balances observed, the credits that landed. */
interface Seen {
  accepted: Accepted[];
  balances: bigint[];
  credited: bigint;
}

async function observe(t: Tenant, seen: Seen): Promise<void> {
  const res = await call(env.app, 'GET', '/account/wallet', { key: t.apiKey });
  expect(res.status).toBe(200);
  seen.balances.push(micros(res.body.balance.amount));
}

async function send(t: Tenant, op: Extract<Op, { kind: 'send' }>, seen: Seen): Promise<void> {
  const token = `${op.fate}-${nextSend++}`;
  const res: Reply = await call(env.app, 'POST', '/messages', {
    key: t.apiKey,
    body: {
      to: RECIPIENTS[op.to],
      templateName: TEMPLATES[op.template].name,
      templateLanguage: 'en_US',
      parameters: ['Ann', token],
    },
  });
  if (res.status === 402) {
    expectError(res, 402, 'INSUFFICIENT_BALANCE');
    // Refused because the wallet, as the send found it, could not pay.
    const [detail] = res.body.error.details;
    expect(detail.requiredMicros).toBeGreaterThan(detail.balanceMicros);
    expect(detail.balanceMicros).toBeGreaterThanOrEqual(0);
    return;
  }
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  seen.accepted.push({
    id: res.body.id,
    token,
    fate: op.fate,
    charged: micros(res.body.pricing.charged.amount),
  });
}

/** Meta reports an accepted message failed after all (once it is `sent`): a refund by callback. */
async function failLater(t: Tenant, m: Accepted): Promise<void> {
  const sent = await eventually(
    () => call(env.app, 'GET', `/messages/${m.id}`, { key: t.apiKey }),
    (r) => r.body.status === 'sent',
  );
  expect(sent.body.status).toBe('sent');
  const taken = env.fake.sent.find((s) => tokenOf(s.body) === m.token)!;
  const res = await env.fake.postStatus(`${base}/api/v1/callbacks/whatsapp/${t.accountId}`, t.business, {
    wamid: taken.wamid,
    recipientId: taken.to,
    status: 'failed',
    errors: [{ code: 131049, title: 'Not delivered to maintain healthy ecosystem engagement' }],
  });
  expect(res.status).toBe(200);
}

/** Runs the waves; each wave's operations (and the late failures of earlier waves' sends) at once. */
async function play(t: Tenant, waves: Op[][], seen: Seen): Promise<void> {
  let reported = 0;
  for (const wave of waves) {
    const late = seen.accepted.slice(reported).filter((m) => m.fate === 'failed_later');
    reported = seen.accepted.length;
    await Promise.all([
      ...late.map((m) => failLater(t, m)),
      ...wave.map(async (op) => {
        if (op.kind === 'send') return send(t, op, seen);
        if (op.kind === 'observe') return observe(t, seen);
        await credit(env.app, env.partner.partnerKey, t.accountId, decimal(op.micros));
        seen.credited += BigInt(op.micros);
      }),
    ]);
  }
  for (const m of seen.accepted.slice(reported).filter((x) => x.fate === 'failed_later'))
    await failLater(t, m);
}

/** Waits until every accepted message is where its fate leads: sent, or failed. */
async function settled(t: Tenant, seen: Seen): Promise<Map<string, string>> {
  const expected = (m: Accepted) => (m.fate === 'sent' ? 'sent' : 'failed');
  const statuses = await eventually(
    async () =>
      new Map((await listAll(env.app, t.apiKey, '/messages')).map((m) => [m.id, m.status as string])),
    (s) => seen.accepted.every((m) => s.get(m.id) === expected(m)),
  );
  expect(Object.fromEntries(seen.accepted.map((m) => [m.id, statuses.get(m.id)]))).toEqual(
    Object.fromEntries(seen.accepted.map((m) => [m.id, expected(m)])),
  );
  return statuses;
}

interface LedgerEntry {
  id: string;
  type: 'credit' | 'debit' | 'refund' | 'adjustment';
  amount: { amount: string };
  balanceAfter: { amount: string };
  reference: string | null;
}

describe('the wallet under concurrent debits, credits and refunds', () => {
  beforeAll(() => {
    // Meta refuses the messages whose number says so; the others go through its own checks.
    env.fake.respond = (req) =>
      req.method === 'POST' && req.path.endsWith('/messages') && tokenOf(req.body).startsWith('refused-')
        ? graphError(131026)
        : undefined;
  });

  it('never goes negative, and its balance is exactly the sum of its ledger', {
    timeout: 120_000,
  }, async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ initialMicros, waves }) => {
        const t = await liveTenant();
        const seen: Seen = { accepted: [], balances: [], credited: BigInt(initialMicros) };
        if (initialMicros > 0)
          await credit(env.app, env.partner.partnerKey, t.accountId, decimal(initialMicros));
        await play(t, waves, seen);
        await settled(t, seen);
        await observe(t, seen);

        for (const b of seen.balances) expect(b).toBeGreaterThanOrEqual(0n);
        const balance = seen.balances.at(-1)!;

        // Oldest first, each entry leaves the balance the one before it left plus its own amount,
        // and the last one leaves the balance: no change was lost, applied twice, or out of order.
        const ledger = (
          await listAll<LedgerEntry>(env.app, t.apiKey, '/account/wallet/transactions')
        ).reverse();
        let running = 0n;
        for (const e of ledger) {
          running += micros(e.amount.amount);
          expect(micros(e.balanceAfter.amount), `${e.type} ${e.id}`).toBe(running);
        }
        expect(balance).toBe(running);

        // Only accepted sends were charged, once each, at the price they were answered with; a
        // refused send (402) left nothing. Only messages that failed were refunded, once, in full.
        const charged = seen.accepted.filter((m) => m.charged > 0n);
        const debits = ledger.filter((e) => e.type === 'debit');
        expect(new Map(debits.map((e) => [e.reference, -micros(e.amount.amount)]))).toEqual(
          new Map(charged.map((m) => [m.id, m.charged])),
        );
        expect(debits).toHaveLength(charged.length);
        const refunds = ledger.filter((e) => e.type === 'refund');
        const failed = charged.filter((m) => m.fate !== 'sent');
        expect(new Map(refunds.map((e) => [e.reference, micros(e.amount.amount)]))).toEqual(
          new Map(failed.map((m) => [m.id, m.charged])),
        );
        expect(refunds).toHaveLength(failed.length);
        expect(
          ledger.filter((e) => e.type === 'credit').reduce((sum, e) => sum + micros(e.amount.amount), 0n),
        ).toBe(seen.credited);
      }),
      { numRuns: 20 },
    );
  });
});
