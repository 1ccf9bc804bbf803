// A template's life through the sandbox: submitted, reviewed by the sandbox's rules after the
// account's delay (a real job worker), approved or rejected with Meta's reason; edited and
// resubmitted; a review that arrives after the template moved on changing nothing; and the
// provider's later decisions (PAUSED, DISABLED, REINSTATED) as the WhatsApp callback applies them.
// Every status change reaches a subscribed webhook, signed, with previousStatus.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reviewTemplate } from '../../src/channels/sandbox/review.ts';
import type { TemplateDefinition } from '../../src/channels/types.ts';
import { reviewSubmission } from '../../src/modules/templates/review-job.ts';
import { applyTemplateStatus } from '../../src/modules/templates/service.ts';
import { call, tenant } from '../helpers/client.ts';
import { Receiver, verifySignature } from '../helpers/receiver.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp({ workers: true, config: { webhookAllowedHosts: ['127.0.0.1'], webhookPollMs: 50 } });

type Tenant = { accountId: string; apiKey: string };
type Body = Record<string, any>;

const receivers: Receiver[] = [];
beforeAll(async () => {
  await env.app.ctx.dispatcher.start();
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let seq = 0;
const uniqueName = () => `review_${process.pid}_${++seq}`;

function template(text: string, overrides: Body = {}): Body {
  return {
    name: uniqueName(),
    language: 'en_US',
    category: 'UTILITY',
    components: [{ type: 'BODY', text }],
    ...overrides,
  };
}

/** A tenant whose sandbox decides at once, with a webhook for template events. */
async function reviewedTenant(reviewAfterMs = 0) {
  const t = await tenant(env.app, env.partner.partnerKey);
  const channel = await call(env.app, 'PUT', '/account/channel', {
    key: t.apiKey,
    body: { provider: 'sandbox', sandbox: { reviewAfterMs } },
  });
  expect(channel.status, JSON.stringify(channel.body)).toBe(200);
  const receiver = await Receiver.start();
  receivers.push(receiver);
  const hook = await call(env.app, 'POST', '/webhooks', {
    key: t.apiKey,
    body: { url: receiver.url(), events: ['template.*'] },
  });
  expect(hook.status, JSON.stringify(hook.body)).toBe(201);
  return { ...t, receiver, secret: hook.body.secret as string };
}

async function create(t: Tenant, body: Body) {
  const res = await call(env.app, 'POST', '/templates', { key: t.apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function submit(t: Tenant, id: string) {
  const res = await call(env.app, 'POST', `/templates/${id}/submit`, { key: t.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function getOk(t: Tenant, id: string) {
  const res = await call(env.app, 'GET', `/templates/${id}`, { key: t.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

/** The template once its status is no longer `from` (the review job has run). */
async function settled(t: Tenant, id: string, from = 'PENDING', timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await getOk(t, id);
    if (row.status !== from || Date.now() > deadline) return row;
    await sleep(50);
  }
}

async function apply(
  accountId: string,
  row: Body,
  event: 'APPROVED' | 'REJECTED' | 'PAUSED' | 'DISABLED' | 'REINSTATED',
) {
  return env.tdb.db.transaction((tx) =>
    applyTemplateStatus(env.app.ctx, tx, accountId, {
      kind: 'template_status',
      providerTemplateId: row.providerTemplateId,
      name: row.name,
      language: row.language,
      event,
      reason: event === 'REJECTED' ? 'ABUSIVE_CONTENT' : null,
    }),
  );
}

/** The status changes the webhook received, checked with standardwebhooks, in the order they happened. */
async function deliveredChanges(t: Awaited<ReturnType<typeof reviewedTenant>>, count: number) {
  const received = await t.receiver.waitFor(count);
  const events = received.map((r) => {
    expect(verifySignature(t.secret, r)).toEqual(r.json);
    expect(r.json).toMatchObject({ type: 'template.status_changed', accountId: t.accountId });
    return r.json;
  });
  // Delivery order is not promised; event ids sort by creation.
  return events.sort((a, b) => (a.id < b.id ? -1 : 1));
}

describe('the sandbox review, end to end', () => {
  it('approves a sound template: DRAFT → PENDING → APPROVED, each change delivered with previousStatus', async () => {
    const t = await reviewedTenant();
    const created = await create(
      t,
      template('Hi {{1}}, your order {{2}} has shipped and will arrive soon.', {
        components: [
          {
            type: 'BODY',
            text: 'Hi {{1}}, your order {{2}} has shipped and will arrive soon.',
            example: { body_text: [['Ada', 'ORD-1042']] },
          },
        ],
      }),
    );
    const submitted = await submit(t, created.id);
    expect(submitted.status).toBe('PENDING');
    const approved = await settled(t, created.id);
    expect(approved).toMatchObject({
      status: 'APPROVED',
      rejectionReason: null,
      provider: 'sandbox',
      providerTemplateId: submitted.providerTemplateId,
    });

    const [pending, decided] = await deliveredChanges(t, 2);
    expect(pending.data).toEqual({ ...submitted, previousStatus: 'DRAFT' });
    expect(decided.data).toEqual({ ...approved, previousStatus: 'PENDING' });
    await sleep(300);
    expect(t.receiver.received).toHaveLength(2);
  });

  it('rejects a UTILITY template with promotional wording (TAG_CONTENT_MISMATCH), then approves it once edited', async () => {
    const t = await reviewedTenant();
    const created = await create(
      t,
      template('Your order has shipped. Use code SAVE10 for a 10% discount next time!'),
    );
    await submit(t, created.id);
    const rejected = await settled(t, created.id);
    expect(rejected.status).toBe('REJECTED');
    expect(rejected.rejectionReason).toMatch(/^TAG_CONTENT_MISMATCH: promotional wording \("discount"\)/);

    const edited = await call(env.app, 'PATCH', `/templates/${created.id}`, {
      key: t.apiKey,
      body: {
        components: [{ type: 'BODY', text: 'Your order has shipped. Thank you for shopping with us.' }],
      },
    });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body).toMatchObject({ status: 'DRAFT', rejectionReason: null });
    const resubmitted = await submit(t, created.id);
    expect(resubmitted.providerTemplateId).not.toBe(rejected.providerTemplateId);
    const approved = await settled(t, created.id);
    expect(approved).toMatchObject({ status: 'APPROVED', rejectionReason: null });

    const changes = await deliveredChanges(t, 5);
    expect(changes.map((e) => [e.data.previousStatus, e.data.status])).toEqual([
      ['DRAFT', 'PENDING'],
      ['PENDING', 'REJECTED'],
      ['REJECTED', 'DRAFT'],
      ['DRAFT', 'PENDING'],
      ['PENDING', 'APPROVED'],
    ]);
    expect(changes[1]!.data.rejectionReason).toBe(rejected.rejectionReason);
  });

  it('moves the same template as MARKETING through without objection', async () => {
    const t = await reviewedTenant();
    const created = await create(
      t,
      template('Our summer collection is here, with a 10% discount for you this week.', {
        category: 'MARKETING',
      }),
    );
    await submit(t, created.id);
    expect((await settled(t, created.id)).status).toBe('APPROVED');
  });

  it('rejects too many placeholders for the fixed text, and URL shorteners, as INVALID_FORMAT', async () => {
    const t = await reviewedTenant();
    const crowded = await create(t, {
      ...template(''),
      components: [
        {
          type: 'BODY',
          text: 'Order {{1}} for {{2}}: {{3}} at {{4}} ok.',
          example: { body_text: [['1', 'Ada', 'shoes', 'noon']] },
        },
      ],
    });
    const shortened = await create(t, {
      ...template(''),
      components: [
        { type: 'BODY', text: 'Your order has shipped. Follow it online.' },
        { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Track', url: 'https://bit.ly/3xYz' }] },
      ],
    });
    await submit(t, crowded.id);
    await submit(t, shortened.id);
    expect((await settled(t, crowded.id)).rejectionReason).toMatch(
      /^INVALID_FORMAT: the body has 4 placeholders but only 4 words of fixed text/,
    );
    expect((await settled(t, shortened.id)).rejectionReason).toMatch(
      /^INVALID_FORMAT: the link .*bit\.ly.* shortener/,
    );
  });

  it("waits the account's reviewAfterMs, rounded up to whole seconds", async () => {
    const t = await reviewedTenant(1200);
    const created = await create(t, template('Your appointment is confirmed for tomorrow.'));
    const submittedAt = Date.now();
    await submit(t, created.id);
    const { rows } = await env.tdb.db.query<{ start_after: Date; created_on: Date }>(
      `SELECT start_after, created_on FROM pgboss.job WHERE name = 'templates.sandbox-review' AND data->>'templateId' = $1`,
      [created.id],
    );
    expect(rows).toHaveLength(1);
    const delay = rows[0]!.start_after.getTime() - rows[0]!.created_on.getTime();
    expect(delay).toBeGreaterThanOrEqual(1900);
    expect(delay).toBeLessThan(3000);
    expect((await getOk(t, created.id)).status).toBe('PENDING');
    const approved = await settled(t, created.id);
    expect(approved.status).toBe('APPROVED');
    expect(Date.now() - submittedAt).toBeGreaterThanOrEqual(1500);
  });
});

describe('a review that comes too late', () => {
  it('changes nothing once the template was edited, or submitted again, after it was scheduled', async () => {
    // An hour: the scheduled reviews never run during the test; they are run here by hand.
    const t = await reviewedTenant(3_600_000);
    const created = await create(t, template('Your appointment is confirmed for tomorrow.'));
    const first = await submit(t, created.id);
    const firstReview = { templateId: created.id, providerTemplateId: first.providerTemplateId };

    // Rejected by other means meanwhile, then edited: a DRAFT.
    expect(await apply(t.accountId, first, 'REJECTED')).toBe(true);
    await call(env.app, 'PATCH', `/templates/${created.id}`, {
      key: t.apiKey,
      body: { category: 'UTILITY' },
    });
    expect(await reviewSubmission(env.app.ctx, firstReview)).toBe(false);
    expect((await getOk(t, created.id)).status).toBe('DRAFT');

    // Submitted again: PENDING under a new provider id; the first review is still moot.
    const second = await submit(t, created.id);
    expect(await reviewSubmission(env.app.ctx, firstReview)).toBe(false);
    expect(await getOk(t, created.id)).toEqual(second);

    // The review scheduled for this submission decides it, once.
    const secondReview = { templateId: created.id, providerTemplateId: second.providerTemplateId };
    expect(await reviewSubmission(env.app.ctx, secondReview)).toBe(true);
    expect((await getOk(t, created.id)).status).toBe('APPROVED');
    expect(await reviewSubmission(env.app.ctx, secondReview)).toBe(false);

    // A deleted template's review finds nothing.
    expect((await call(env.app, 'DELETE', `/templates/${created.id}`, { key: t.apiKey })).status).toBe(204);
    expect(await reviewSubmission(env.app.ctx, secondReview)).toBe(false);
  });
});

describe("the provider's later decisions (applyTemplateStatus)", () => {
  it('pauses, disables and reinstates an approved template, each once, each as an event', async () => {
    const t = await reviewedTenant();
    const created = await create(t, template('Your appointment is confirmed for tomorrow.'));
    await submit(t, created.id);
    const approved = await settled(t, created.id);
    expect(approved.status).toBe('APPROVED');

    const steps = [
      ['PAUSED', 'PAUSED'],
      ['REINSTATED', 'APPROVED'],
      ['DISABLED', 'DISABLED'],
      ['REINSTATED', 'APPROVED'],
    ] as const;
    for (const [event, status] of steps) {
      expect(await apply(t.accountId, approved, event)).toBe(true);
      expect((await getOk(t, created.id)).status).toBe(status);
      // The same news twice changes nothing the second time.
      expect(await apply(t.accountId, approved, event)).toBe(false);
    }
    expect(await apply(t.accountId, approved, 'APPROVED')).toBe(false);

    const changes = await deliveredChanges(t, 6);
    expect(changes.map((e) => [e.data.previousStatus, e.data.status])).toEqual([
      ['DRAFT', 'PENDING'],
      ['PENDING', 'APPROVED'],
      ['APPROVED', 'PAUSED'],
      ['PAUSED', 'APPROVED'],
      ['APPROVED', 'DISABLED'],
      ['DISABLED', 'APPROVED'],
    ]);
    await sleep(300);
    expect(t.receiver.received).toHaveLength(6);
  });

  it('finds a WhatsApp template by name and language when the id is new to it, and ignores what it does not know', async () => {
    const t = await reviewedTenant();
    const created = await create(t, template('Your appointment is confirmed for tomorrow.'));
    await env.tdb.db.query(
      `UPDATE templates SET status = 'PENDING', provider = 'whatsapp_cloud', provider_template_id = NULL WHERE id = $1`,
      [created.id],
    );
    const fromMeta = { ...created, providerTemplateId: '1234567890' };
    expect(await apply(t.accountId, fromMeta, 'APPROVED')).toBe(true);
    expect(await getOk(t, created.id)).toMatchObject({
      status: 'APPROVED',
      providerTemplateId: '1234567890',
    });

    expect(
      await apply(t.accountId, { ...fromMeta, providerTemplateId: '999', name: 'unknown_name' }, 'PAUSED'),
    ).toBe(false);
    // Another account's template is out of reach.
    const other = await tenant(env.app, env.partner.partnerKey);
    expect(await apply(other.accountId, fromMeta, 'PAUSED')).toBe(false);
    expect((await getOk(t, created.id)).status).toBe('APPROVED');
  });

  it('leaves a DRAFT alone: its content is newer than the decision', async () => {
    const t = await reviewedTenant(3_600_000);
    const created = await create(t, template('Your appointment is confirmed for tomorrow.'));
    const submitted = await submit(t, created.id);
    expect(await apply(t.accountId, submitted, 'REJECTED')).toBe(true);
    expect((await getOk(t, created.id)).rejectionReason).toBe('ABUSIVE_CONTENT');
    await call(env.app, 'PATCH', `/templates/${created.id}`, {
      key: t.apiKey,
      body: { category: 'UTILITY' },
    });
    expect(await apply(t.accountId, submitted, 'APPROVED')).toBe(false);
    expect((await getOk(t, created.id)).status).toBe('DRAFT');
  });

  it('still refuses edits of an APPROVED template, and submission of a PAUSED one', async () => {
    const t = await reviewedTenant();
    const created = await create(t, template('Your appointment is confirmed for tomorrow.'));
    await submit(t, created.id);
    const approved = await settled(t, created.id);
    expectError(
      await call(env.app, 'PATCH', `/templates/${created.id}`, {
        key: t.apiKey,
        body: { category: 'MARKETING' },
      }),
      409,
      'CONFLICT',
    );
    await apply(t.accountId, approved, 'PAUSED');
    expectError(
      await call(env.app, 'POST', `/templates/${created.id}/submit`, { key: t.apiKey }),
      409,
      'CONFLICT',
    );
  });
});

describe("the sandbox's review rules", () => {
  const def = (text: string, extra: Partial<TemplateDefinition> = {}): TemplateDefinition => ({
    name: 'x',
    language: 'en',
    category: 'UTILITY',
    components: [{ type: 'BODY', text }],
    ...extra,
  });
  const reasonOf = (d: TemplateDefinition) => {
    const decision = reviewTemplate(d);
    return decision.status === 'REJECTED' ? decision.reason : 'APPROVED';
  };

  it('approves ordinary utility, marketing and authentication templates', () => {
    expect(reasonOf(def('Hi {{1}}, your order {{2}} has shipped today.'))).toBe('APPROVED');
    expect(reasonOf(def('Feel free to reply if you have questions; we offer free returns.'))).toBe(
      'APPROVED',
    );
    expect(reasonOf(def('Flash sale: 20% off everything, shop now!', { category: 'MARKETING' }))).toBe(
      'APPROVED',
    );
    expect(reasonOf(def('{{1}} is your verification code.', { category: 'AUTHENTICATION' }))).toBe(
      'APPROVED',
    );
  });

  it('asks for two words of fixed text per placeholder', () => {
    expect(reasonOf(def('Hi {{1}}, your order {{2}} is ready.'))).toBe('APPROVED');
    expect(reasonOf(def('Hi {{1}}, order {{2}}.'))).toMatch(
      /^INVALID_FORMAT: the body has 2 placeholders but only 2 words/,
    );
  });

  it('refuses promotional wording outside MARKETING, whole words only', () => {
    for (const text of [
      'Get 20% off your next order.',
      'Use this coupon today.',
      'Buy now while stocks last.',
    ]) {
      expect(reasonOf(def(text))).toMatch(/^TAG_CONTENT_MISMATCH: /);
    }
    expect(
      reasonOf(def('{{1}} is your code. Discount codes never come by SMS.', { category: 'AUTHENTICATION' })),
    ).toMatch(/^TAG_CONTENT_MISMATCH: promotional wording \("discount"\) in an AUTHENTICATION template/);
    expect(reasonOf(def('Your discountless plan renews tomorrow.'))).toBe('APPROVED');
  });

  it('refuses URL shorteners anywhere, and links or emojis in AUTHENTICATION templates', () => {
    expect(reasonOf(def('Track it at https://tinyurl.com/abc today.'))).toMatch(
      /^INVALID_FORMAT: .*tinyurl\.com/,
    );
    expect(reasonOf(def('Track it at bit.ly/abc today.'))).toMatch(/^INVALID_FORMAT: .*shortener/);
    expect(reasonOf(def('Track it at https://example.com/abc today.'))).toBe('APPROVED');
    expect(
      reasonOf(def('{{1}} is your code. See https://example.com/help', { category: 'AUTHENTICATION' })),
    ).toMatch(/^INVALID_FORMAT: AUTHENTICATION templates may not contain URLs/);
    expect(reasonOf(def('{{1}} is your code 🔐', { category: 'AUTHENTICATION' }))).toMatch(/emojis/);
  });

  it('refuses asking for sensitive data as SCAM', () => {
    expect(reasonOf(def('Reply with your card number and CVV to confirm.'))).toMatch(/^SCAM: .*card number/);
    expect(reasonOf(def('Send us your password to unlock the account.', { category: 'MARKETING' }))).toMatch(
      /^SCAM/,
    );
  });
});
