// The templates API through HTTP: creating and replacing (every one of Meta's rules refused with its
// exact field), the one-template-per-name-and-language rule, listing, reading, editing, replacing,
// deleting and submitting (which states allow what), the walls between tenants, the sandbox key's
// limit, and the template.status_changed events each status change records in the outbox.
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { SubmitOutcome } from '../../src/channels/types.ts';
import { applyTemplateStatus } from '../../src/modules/templates/service.ts';
import { call, listAll, type Reply, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp();

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const TEMPLATE_ID = /^tpl_[0-9a-z]{26}$/;

type Tenant = { accountId: string; apiKey: string };
type Body = Record<string, any>;

let seq = 0;
const uniqueName = (prefix = 'tpl') => `${prefix}_${process.pid}_${++seq}`;

/** A template using every component: header {{1}}, body {{1}} {{2}}, a URL button {{1}}: 4 parameters. */
function fullTemplate(overrides: Body = {}): Body {
  return {
    name: uniqueName('order_update'),
    language: 'en_US',
    category: 'UTILITY',
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['ORD-1042'] } },
      {
        type: 'BODY',
        text: 'Hi {{1}}, your order has shipped and arrives on {{2}}. Thank you!',
        example: { body_text: [['Ada', 'Friday']] },
      },
      { type: 'FOOTER', text: 'Reply STOP to opt out' },
      {
        type: 'BUTTONS',
        buttons: [
          {
            type: 'URL',
            text: 'Track it',
            url: 'https://example.com/track/{{1}}',
            example: ['https://example.com/track/ORD-1042'],
          },
          { type: 'PHONE_NUMBER', text: 'Call us', phone_number: '+14155550123' },
          { type: 'QUICK_REPLY', text: 'Stop updates' },
        ],
      },
    ],
    ...overrides,
  };
}

function bodyOnly(text = 'Your appointment is confirmed.', overrides: Body = {}): Body {
  return {
    name: uniqueName('notice'),
    language: 'en',
    category: 'UTILITY',
    components: [{ type: 'BODY', text }],
    ...overrides,
  };
}

async function create(t: Tenant, body: Body) {
  const res = await call(env.app, 'POST', '/templates', { key: t.apiKey, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function getOk(t: Tenant, id: string) {
  const res = await call(env.app, 'GET', `/templates/${id}`, { key: t.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

async function submit(t: Tenant, id: string) {
  return call(env.app, 'POST', `/templates/${id}/submit`, { key: t.apiKey });
}

async function decide(
  accountId: string,
  row: Body,
  event: 'APPROVED' | 'REJECTED',
  reason: string | null = null,
) {
  return env.tdb.db.transaction((tx) =>
    applyTemplateStatus(env.app.ctx, tx, accountId, {
      kind: 'template_status',
      providerTemplateId: row.providerTemplateId,
      name: row.name,
      language: row.language,
      event,
      reason,
    }),
  );
}

/** A template submitted and then decided by the provider. */
async function decided(t: Tenant, event: 'APPROVED' | 'REJECTED', body: Body = bodyOnly()) {
  const created = await create(t, body);
  const submitted = await submit(t, created.id);
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  expect(
    await decide(t.accountId, submitted.body, event, event === 'REJECTED' ? 'INVALID_FORMAT' : null),
  ).toBe(true);
  return getOk(t, created.id);
}

function detailsOf(res: Reply): { field: string; issue: string }[] {
  return res.body.error?.details ?? [];
}

async function statusEvents(accountId: string) {
  const { rows } = await env.tdb.db.query<{ type: string; payload: string }>(
    `SELECT type, payload FROM events WHERE account_id = $1 AND type = 'template.status_changed' ORDER BY id`,
    [accountId],
  );
  return rows.map((r) => JSON.parse(r.payload));
}

describe('creating a template', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant(env.app, env.partner.partnerKey);
  });

  it('answers 201 with the template as a DRAFT, its components as given and its parameter count', async () => {
    const body = fullTemplate();
    const before = Date.now();
    const res = await call(env.app, 'POST', '/templates', { key: t.apiKey, body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(TEMPLATE_ID),
      name: body.name,
      language: 'en_US',
      category: 'UTILITY',
      components: body.components,
      parameterCount: 4,
      status: 'DRAFT',
      rejectionReason: null,
      provider: null,
      providerTemplateId: null,
      submittedAt: null,
      parameterFormat: 'POSITIONAL',
      qualityScore: null,
      createdAt: expect.stringMatching(ISO),
      updatedAt: res.body.createdAt,
    });
    expect(Date.parse(res.body.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(await getOk(t, res.body.id)).toEqual(res.body);
    // Creating is not a status change.
    expect(await statusEvents(t.accountId)).toEqual([]);
  });

  it('counts parameters: header, body and URL-button placeholders', async () => {
    expect((await create(t, bodyOnly())).parameterCount).toBe(0);
    const media = await create(t, {
      ...bodyOnly(),
      category: 'MARKETING',
      components: [
        { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['https://cdn.example.com/sale.png'] } },
        {
          type: 'BODY',
          text: 'Dear {{1}}, the summer collection is here.',
          example: { body_text: [['Ada']] },
        },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'QUICK_REPLY', text: 'Tell me more' },
            { type: 'QUICK_REPLY', text: 'Not now' },
            { type: 'URL', text: 'Shop', url: 'https://example.com/shop' },
            {
              type: 'URL',
              text: 'Your offer',
              url: 'https://example.com/o?c={{1}}',
              example: ['https://example.com/o?c=A1'],
            },
          ],
        },
      ],
    });
    // The media header's link (given with each send), the body's {{1}}, the offer button's {{1}}.
    expect(media.parameterCount).toBe(3);
  });

  it("takes Meta's one-time-password shape for AUTHENTICATION: one placeholder, the code, even at the start", async () => {
    const otp = await create(t, {
      name: uniqueName('login_code'),
      language: 'en',
      category: 'AUTHENTICATION',
      components: [
        { type: 'BODY', text: '{{1}} is your verification code.', example: { body_text: [['123456']] } },
        { type: 'FOOTER', text: 'This code expires in 10 minutes.' },
        { type: 'BUTTONS', buttons: [{ type: 'URL', text: 'Help', url: 'https://example.com/help' }] },
      ],
    });
    expect(otp.parameterCount).toBe(1);
  });

  it('reports every problem at once', async () => {
    const res = await call(env.app, 'POST', '/templates', {
      key: t.apiKey,
      body: {
        ...bodyOnly('{{1}} and then {{2}}', { name: 'Bad Name', language: 'en-US' }),
      },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    const fields = detailsOf(res).map((d) => d.field);
    expect(fields).toEqual(
      expect.arrayContaining(['name', 'language', 'components[0].text', 'components[0].example.body_text']),
    );
    expect(detailsOf(res).find((d) => d.field === 'language')!.issue).toContain('use en_US');
  });
});

/** A change to the full template, and the field and issue Meta's rule refuses it with. */
interface Case {
  rule: string;
  change: (b: Body) => void;
  field: string;
  issue: RegExp;
}

const c = (b: Body, i: number) => b.components[i];
const button = (b: Body, j: number) => b.components[3].buttons[j];
const long = (n: number) => 'x'.repeat(n);

const CASES: Case[] = [
  {
    rule: 'name: lowercase',
    change: (b) => (b.name = 'Order_Update'),
    field: 'name',
    issue: /lowercase letters/,
  },
  { rule: 'name: ≤ 512', change: (b) => (b.name = long(513)), field: 'name', issue: /more than 512/ },
  { rule: 'name: no dashes', change: (b) => (b.name = 'order-update'), field: 'name', issue: /underscores/ },
  {
    rule: 'language: supported',
    change: (b) => (b.language = 'xx'),
    field: 'language',
    issue: /not a language/,
  },
  {
    rule: 'language: Meta spelling',
    change: (b) => (b.language = 'pt-BR'),
    field: 'language',
    issue: /pt_BR/,
  },
  {
    rule: 'category',
    change: (b) => (b.category = 'PROMOTIONAL'),
    field: 'category',
    issue: /must be one of/,
  },
  {
    rule: 'a BODY is required',
    change: (b) => b.components.splice(1, 1),
    field: 'components',
    issue: /must include a BODY/,
  },
  {
    rule: 'one BODY',
    change: (b) => b.components.splice(2, 0, { type: 'BODY', text: 'Another body.' }),
    field: 'components[2].type',
    issue: /at most one BODY/,
  },
  {
    rule: 'order HEADER, BODY, FOOTER, BUTTONS',
    change: (b) => b.components.splice(0, 3, c(b, 0), c(b, 2), c(b, 1)),
    field: 'components[2].type',
    issue: /out of order/,
  },
  {
    rule: 'component type',
    change: (b) => (c(b, 2).type = 'LOCATION'),
    field: 'components[2].type',
    issue: /must be one of HEADER, BODY, FOOTER, BUTTONS/,
  },
  {
    rule: 'component type given',
    change: (b) => delete c(b, 2).type,
    field: 'components[2].type',
    issue: /required/,
  },
  {
    rule: 'no unknown component fields',
    change: (b) => (c(b, 1).format = 'TEXT'),
    field: 'components[1].format',
    issue: /not a known field/,
  },
  {
    rule: 'body ≤ 1024',
    change: (b) => (c(b, 1).text = `Hi {{1}} ${long(1010)} {{2}} ok`),
    field: 'components[1].text',
    issue: /1024/,
  },
  {
    rule: 'body not blank',
    change: (b) => (c(b, 1).text = '   '),
    field: 'components[1].text',
    issue: /empty/,
  },
  {
    rule: 'body: not at the start',
    change: (b) => (c(b, 1).text = '{{1}}, your order arrives on {{2}}. Thanks!'),
    field: 'components[1].text',
    issue: /may not start with a placeholder/,
  },
  {
    rule: 'body: not at the start, after punctuation',
    change: (b) => (c(b, 1).text = '*{{1}}*, your order arrives on {{2}}. Thanks!'),
    field: 'components[1].text',
    issue: /may not start/,
  },
  {
    rule: 'body: not at the end, before punctuation',
    change: (b) => (c(b, 1).text = 'Hi {{1}}, your order arrives on {{2}}.'),
    field: 'components[1].text',
    issue: /may not end with a placeholder/,
  },
  {
    rule: 'body: not side by side',
    change: (b) => (c(b, 1).text = 'Hi {{1}} {{2}}, thanks!'),
    field: 'components[1].text',
    issue: /side by side/,
  },
  {
    rule: 'body: no gaps',
    change: (b) => (c(b, 1).text = 'Hi {{1}}, it arrives on {{3}}. Thanks!'),
    field: 'components[1].text',
    issue: /without gaps/,
  },
  {
    rule: 'body: each number once',
    change: (b) => (c(b, 1).text = 'Hi {{1}}, yes {{1}} and {{2}} now.'),
    field: 'components[1].text',
    issue: /more than once/,
  },
  {
    rule: 'body: in order',
    change: (b) => (c(b, 1).text = 'Hi {{2}}, it arrives on {{1}}. Thanks!'),
    field: 'components[1].text',
    issue: /in order/,
  },
  {
    rule: 'body: no spaces in placeholders',
    change: (b) => (c(b, 1).text = 'Hi {{ 1 }}, it arrives on {{2}}. Thanks!'),
    field: 'components[1].text',
    issue: /malformed placeholder "\{\{ 1 \}\}"/,
  },
  {
    rule: 'body: numbered placeholders only',
    change: (b) => (c(b, 1).text = 'Hi {{name}}, it arrives on {{2}}. Thanks!'),
    field: 'components[1].text',
    issue: /named placeholder/,
  },
  {
    rule: 'body: numbers from 1',
    change: (b) => (c(b, 1).text = 'Hi {{0}}, it arrives on {{1}}. Thanks!'),
    field: 'components[1].text',
    issue: /malformed/,
  },
  {
    rule: 'body: balanced braces',
    change: (b) => (c(b, 1).text = 'Hi {{1}, it arrives on {{2}}. Thanks!'),
    field: 'components[1].text',
    issue: /unbalanced/,
  },
  {
    rule: 'body: no stray braces around a placeholder',
    change: (b) => (c(b, 1).text = 'Hi {{{1}}}, it arrives on {{2}}. Thanks!'),
    field: 'components[1].text',
    issue: /unbalanced/,
  },
  {
    rule: 'body: examples required',
    change: (b) => delete c(b, 1).example,
    field: 'components[1].example.body_text',
    issue: /is required/,
  },
  {
    rule: 'body: one example per placeholder',
    change: (b) => (c(b, 1).example = { body_text: [['Ada']] }),
    field: 'components[1].example.body_text[0]',
    issue: /exactly 2 value/,
  },
  {
    rule: 'body: no examples without placeholders',
    change: (b) => (c(b, 1).text = 'Your order has shipped.'),
    field: 'components[1].example',
    issue: /left out/,
  },
  {
    rule: 'header ≤ 60',
    change: (b) => (c(b, 0).text = `Order {{1}} ${long(60)}`),
    field: 'components[0].text',
    issue: /60/,
  },
  {
    rule: 'header: at most one placeholder',
    change: (b) => (c(b, 0).text = 'Order {{1}} of {{2}}'),
    field: 'components[0].text',
    issue: /at most one placeholder/,
  },
  {
    rule: 'header: only {{1}}',
    change: (b) => (c(b, 0).text = 'Order {{2}}'),
    field: 'components[0].text',
    issue: /only use the placeholder \{\{1\}\}/,
  },
  {
    rule: 'header: one line',
    change: (b) => (c(b, 0).text = 'Order\n{{1}}'),
    field: 'components[0].text',
    issue: /line breaks/,
  },
  {
    rule: 'header: example for {{1}}',
    change: (b) => delete c(b, 0).example,
    field: 'components[0].example.header_text',
    issue: /is required/,
  },
  {
    rule: 'header: TEXT needs text',
    change: (b) => delete c(b, 0).text,
    field: 'components[0].text',
    issue: /required for a TEXT header/,
  },
  {
    rule: 'header: format',
    change: (b) => (c(b, 0).format = 'GIF'),
    field: 'components[0].format',
    issue: /must be one of/,
  },
  {
    rule: 'header: media needs an example file',
    change: (b) => (b.components[0] = { type: 'HEADER', format: 'VIDEO' }),
    field: 'components[0].example.header_handle',
    issue: /is required/,
  },
  {
    rule: 'header: media sample not blank',
    change: (b) =>
      (b.components[0] = {
        type: 'HEADER',
        format: 'IMAGE',
        example: { header_handle: ['  '] },
      }),
    field: 'components[0].example.header_handle[0]',
    issue: /1–2000 characters/,
  },
  {
    rule: 'header: media has no text',
    change: (b) =>
      (b.components[0] = {
        type: 'HEADER',
        format: 'DOCUMENT',
        text: 'Invoice',
        example: { header_handle: ['https://x.example/a.pdf'] },
      }),
    field: 'components[0].text',
    issue: /only for TEXT headers/,
  },
  { rule: 'footer ≤ 60', change: (b) => (c(b, 2).text = long(61)), field: 'components[2].text', issue: /60/ },
  {
    rule: 'footer: no placeholders',
    change: (b) => (c(b, 2).text = 'Sent to {{1}}'),
    field: 'components[2].text',
    issue: /may not contain placeholders/,
  },
  {
    rule: 'buttons: at least 1',
    change: (b) => (c(b, 3).buttons = []),
    field: 'components[3].buttons',
    issue: /fewer than 1/,
  },
  {
    rule: 'buttons: at most 10',
    change: (b) =>
      (c(b, 3).buttons = Array.from({ length: 11 }, (_, i) => ({
        type: 'QUICK_REPLY',
        text: `Option ${i}`,
      }))),
    field: 'components[3].buttons',
    issue: /more than 10/,
  },
  {
    rule: 'buttons: at most 2 URL',
    change: (b) =>
      c(b, 3).buttons.push(
        { type: 'URL', text: 'A', url: 'https://example.com/a' },
        { type: 'URL', text: 'B', url: 'https://example.com/b' },
      ),
    field: 'components[3].buttons',
    issue: /at most 2 URL/,
  },
  {
    rule: 'buttons: at most 1 PHONE_NUMBER',
    change: (b) =>
      c(b, 3).buttons.push({ type: 'PHONE_NUMBER', text: 'Other line', phone_number: '+14155550199' }),
    field: 'components[3].buttons',
    issue: /at most 1 PHONE_NUMBER/,
  },
  {
    rule: 'buttons: quick replies grouped',
    change: (b) => c(b, 3).buttons.unshift({ type: 'QUICK_REPLY', text: 'Thanks' }),
    field: 'components[3].buttons[3]',
    issue: /group them/,
  },
  {
    rule: 'buttons: type',
    change: (b) => (button(b, 2).type = 'COPY_CODE'),
    field: 'components[3].buttons[2].type',
    issue: /must be one of QUICK_REPLY, URL, PHONE_NUMBER/,
  },
  {
    rule: 'button text ≤ 25',
    change: (b) => (button(b, 2).text = long(26)),
    field: 'components[3].buttons[2].text',
    issue: /25/,
  },
  {
    rule: 'URL: http(s)',
    change: (b) => (button(b, 0).url = 'ftp://example.com/{{1}}'),
    field: 'components[3].buttons[0].url',
    issue: /http or https/,
  },
  {
    rule: 'URL: ≤ 2000',
    change: (b) => (button(b, 0).url = `https://example.com/${long(1990)}/{{1}}`),
    field: 'components[3].buttons[0].url',
    issue: /2000/,
  },
  {
    rule: 'URL: placeholder at the end',
    change: (b) => (button(b, 0).url = 'https://example.com/{{1}}/track'),
    field: 'components[3].buttons[0].url',
    issue: /only at its end/,
  },
  {
    rule: 'URL: only {{1}}',
    change: (b) => (button(b, 0).url = 'https://example.com/track/{{2}}'),
    field: 'components[3].buttons[0].url',
    issue: /only one placeholder, \{\{1\}\}/,
  },
  {
    rule: 'URL: not in the host',
    change: (b) => (button(b, 0).url = 'https://{{1}}'),
    field: 'components[3].buttons[0].url',
    issue: /host/,
  },
  {
    rule: 'URL: example with a placeholder',
    change: (b) => delete button(b, 0).example,
    field: 'components[3].buttons[0].example',
    issue: /is required/,
  },
  {
    rule: 'phone number ≤ 20',
    change: (b) => (button(b, 1).phone_number = `+${'1'.repeat(20)}`),
    field: 'components[3].buttons[1].phone_number',
    issue: /more than 20/,
  },
  {
    rule: 'phone number: digits with a country code',
    change: (b) => (button(b, 1).phone_number = 'call me'),
    field: 'components[3].buttons[1].phone_number',
    issue: /country code/,
  },
  {
    rule: 'AUTHENTICATION: exactly one placeholder',
    change: (b) => {
      b.category = 'AUTHENTICATION';
      b.components = [c(b, 1)];
    },
    field: 'components[0].text',
    issue: /exactly one placeholder/,
  },
  {
    rule: 'AUTHENTICATION: no media header',
    change: (b) => {
      b.category = 'AUTHENTICATION';
      b.components = [
        { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['https://x.example/a.png'] } },
        { type: 'BODY', text: 'Your code is {{1}}. Do not share it.', example: { body_text: [['123456']] } },
      ];
    },
    field: 'components[0].format',
    issue: /media header/,
  },
  {
    rule: 'AUTHENTICATION: no phone button',
    change: (b) => {
      b.category = 'AUTHENTICATION';
      b.components = [
        { type: 'BODY', text: 'Your code is {{1}}. Do not share it.', example: { body_text: [['123456']] } },
        { type: 'BUTTONS', buttons: [{ type: 'PHONE_NUMBER', text: 'Call', phone_number: '+14155550123' }] },
      ];
    },
    field: 'components[1].buttons[0]',
    issue: /PHONE_NUMBER/,
  },
  {
    rule: 'AUTHENTICATION: no URL placeholder',
    change: (b) => {
      b.category = 'AUTHENTICATION';
      b.components = [
        { type: 'BODY', text: 'Your code is {{1}}. Do not share it.', example: { body_text: [['123456']] } },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'URL', text: 'Open', url: 'https://x.example/{{1}}', example: ['https://x.example/1'] },
          ],
        },
      ];
    },
    field: 'components[1].buttons[0].url',
    issue: /code is the only parameter/,
  },
];

describe("Meta's rules, each refused with its exact field", () => {
  let t: Tenant;
  /** The DRAFT the PUT cases try to replace. */
  let draft: Body;
  beforeAll(async () => {
    t = await tenant(env.app, env.partner.partnerKey);
    draft = await create(t, bodyOnly());
  });

  it('the full template they start from is valid', async () => {
    await create(t, fullTemplate());
  });

  // A replace is checked exactly as a create is.
  it.each(CASES.flatMap((rule) => (['POST', 'PUT'] as const).map((method) => ({ ...rule, method }))))(
    '$rule ($method)',
    async ({ change, field, issue, method }) => {
      const body = structuredClone(fullTemplate());
      change(body);
      const path = method === 'POST' ? '/templates' : `/templates/${draft.id}`;
      const res = await call(env.app, method, path, { key: t.apiKey, body });
      expectError(res, 400, 'INVALID_REQUEST');
      const found = detailsOf(res).filter((d) => d.field === field);
      expect(found, JSON.stringify(detailsOf(res))).not.toEqual([]);
      expect(found.map((d) => d.issue).join(' | ')).toMatch(issue);
      // The message names the field too, and no other shape's complaints leak in.
      expect(res.body.error.message).toContain(field);
      expect(
        detailsOf(res)
          .map((d) => d.issue)
          .join(' '),
      ).not.toMatch(/equal to constant/);
    },
  );

  it('left the DRAFT the refused replaces were aimed at as it was', async () => {
    expect(await getOk(t, draft.id)).toEqual(draft);
  });

  it('refuses a body that is not JSON, and one without the required fields, with 400', async () => {
    expectError(
      await call(env.app, 'POST', '/templates', { key: t.apiKey, body: '{"name":' }),
      400,
      'INVALID_REQUEST',
    );
    const res = await call(env.app, 'POST', '/templates', { key: t.apiKey, body: { name: 'x' } });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(detailsOf(res).map((d) => d.field)).toEqual(
      expect.arrayContaining(['language', 'category', 'components']),
    );
  });
});

describe('one template per name and language', () => {
  it('refuses the same name and language with 409 naming the existing template', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const first = await create(t, bodyOnly());
    const res = await call(env.app, 'POST', '/templates', {
      key: t.apiKey,
      body: bodyOnly('Something else entirely.', { name: first.name }),
    });
    expectError(res, 409, 'CONFLICT');
    expect(res.body.error.details[0]).toMatchObject({ field: 'name', templateId: first.id });
  });

  it('takes the same name in another language, and in another account', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const other = await tenant(env.app, env.partner.partnerKey);
    const first = await create(t, bodyOnly());
    const spanish = await create(
      t,
      bodyOnly('Su cita está confirmada.', { name: first.name, language: 'es' }),
    );
    expect(spanish.id).not.toBe(first.id);
    const elsewhere = await create(other, bodyOnly('Your appointment is confirmed.', { name: first.name }));
    expect(elsewhere.name).toBe(first.name);
  });
});

describe('listing templates', () => {
  let t: Tenant;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    t = await tenant(env.app, env.partner.partnerKey);
    ids.draft = (await create(t, bodyOnly('Draft one here.', { name: 'welcome', language: 'en' }))).id;
    ids.spanish = (await create(t, bodyOnly('Bienvenido a bordo.', { name: 'welcome', language: 'es' }))).id;
    ids.marketing = (await create(t, bodyOnly('Our new collection is here.', { category: 'MARKETING' }))).id;
    ids.approved = (await decided(t, 'APPROVED')).id;
    ids.rejected = (await decided(t, 'REJECTED')).id;
  });

  it('lists newest first, in pages', async () => {
    const all = await listAll(env.app, t.apiKey, '/templates');
    expect(all.map((x) => x.id)).toEqual([ids.rejected, ids.approved, ids.marketing, ids.spanish, ids.draft]);
    const first = await call(env.app, 'GET', '/templates', { key: t.apiKey, query: { limit: '2' } });
    expect(first.status).toBe(200);
    expect(first.body.data.map((x: Body) => x.id)).toEqual([ids.rejected, ids.approved]);
    const second = await call(env.app, 'GET', '/templates', {
      key: t.apiKey,
      query: { limit: '2', cursor: first.body.nextCursor },
    });
    expect(second.body.data.map((x: Body) => x.id)).toEqual([ids.marketing, ids.spanish]);
    const third = await call(env.app, 'GET', '/templates', {
      key: t.apiKey,
      query: { limit: '2', cursor: second.body.nextCursor },
    });
    expect(third.body).toEqual({ data: [expect.objectContaining({ id: ids.draft })], nextCursor: null });
  });

  it('filters by status, name, language and category, combined', async () => {
    const list = async (query: Record<string, string>) => {
      const res = await call(env.app, 'GET', '/templates', { key: t.apiKey, query });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data.map((x: Body) => x.id);
    };
    expect(await list({ status: 'APPROVED' })).toEqual([ids.approved]);
    expect(await list({ status: 'REJECTED' })).toEqual([ids.rejected]);
    expect(await list({ status: 'DRAFT', category: 'UTILITY' })).toEqual([ids.spanish, ids.draft]);
    expect(await list({ name: 'welcome' })).toEqual([ids.spanish, ids.draft]);
    expect(await list({ name: 'welcome', language: 'es' })).toEqual([ids.spanish]);
    expect(await list({ category: 'MARKETING' })).toEqual([ids.marketing]);
    expect(await list({ status: 'PAUSED' })).toEqual([]);
  });

  it('refuses unknown filter values and cursors with 400', async () => {
    const queries: Record<string, string>[] = [
      { status: 'LIVE' },
      { category: 'promo' },
      { cursor: 'nonsense' },
      { limit: '101' },
    ];
    for (const query of queries) {
      expectError(await call(env.app, 'GET', '/templates', { key: t.apiKey, query }), 400, 'INVALID_REQUEST');
    }
  });

  it("shows no other account's templates", async () => {
    const other = await tenant(env.app, env.partner.partnerKey);
    expect(await listAll(env.app, other.apiKey, '/templates')).toEqual([]);
  });
});

describe('editing a template', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant(env.app, env.partner.partnerKey);
  });

  it('changes the category and components of a DRAFT, recounting parameters', async () => {
    const created = await create(t, bodyOnly());
    const components = [
      {
        type: 'BODY',
        text: 'Hi {{1}}, your appointment is on {{2}}.\nSee you!',
        example: { body_text: [['Ada', 'Monday']] },
      },
    ];
    const res = await call(env.app, 'PATCH', `/templates/${created.id}`, {
      key: t.apiKey,
      body: { category: 'MARKETING', components },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ category: 'MARKETING', components, parameterCount: 2, status: 'DRAFT' });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
    // Only the category: the components stay.
    const again = await call(env.app, 'PATCH', `/templates/${created.id}`, {
      key: t.apiKey,
      body: { category: 'UTILITY' },
    });
    expect(again.body).toMatchObject({ category: 'UTILITY', components, parameterCount: 2 });
    // Still a DRAFT: no status change, no event.
    expect(await statusEvents(t.accountId)).toEqual([]);
  });

  it('checks the edited template by the same rules, and keeps name and language as they are', async () => {
    const created = await create(t, bodyOnly());
    const bad = await call(env.app, 'PATCH', `/templates/${created.id}`, {
      key: t.apiKey,
      body: { components: [{ type: 'BODY', text: 'Hello {{1}}' }] },
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(detailsOf(bad).map((d) => d.field)).toEqual(
      expect.arrayContaining(['components[0].text', 'components[0].example.body_text']),
    );
    const auth = await call(env.app, 'PATCH', `/templates/${created.id}`, {
      key: t.apiKey,
      body: { category: 'AUTHENTICATION' },
    });
    expectError(auth, 400, 'INVALID_REQUEST');
    expect(detailsOf(auth)[0]!.field).toBe('components[0].text');
    for (const body of [{ name: 'renamed' }, { language: 'fr' }, {}]) {
      expectError(
        await call(env.app, 'PATCH', `/templates/${created.id}`, { key: t.apiKey, body }),
        400,
        'INVALID_REQUEST',
      );
    }
    expect(await getOk(t, created.id)).toEqual(created);
  });

  it('makes a REJECTED template a DRAFT again, without its reason, and says so in an event', async () => {
    const rejected = await decided(t, 'REJECTED');
    expect(rejected).toMatchObject({ status: 'REJECTED', rejectionReason: 'INVALID_FORMAT' });
    const res = await call(env.app, 'PATCH', `/templates/${rejected.id}`, {
      key: t.apiKey,
      body: { components: [{ type: 'BODY', text: 'Your appointment is confirmed for tomorrow.' }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: 'DRAFT', rejectionReason: null });
    const events = (await statusEvents(t.accountId)).filter((e) => e.data.id === rejected.id);
    expect(events.map((e) => [e.data.previousStatus, e.data.status])).toEqual([
      ['DRAFT', 'PENDING'],
      ['PENDING', 'REJECTED'],
      ['REJECTED', 'DRAFT'],
    ]);
    const { previousStatus, ...shown } = events.at(-1)!.data;
    expect(shown).toEqual(res.body);
  });

  it('refuses to edit a PENDING or APPROVED template with 409', async () => {
    const pending = await create(t, bodyOnly());
    expect((await submit(t, pending.id)).body.status).toBe('PENDING');
    const approved = await decided(t, 'APPROVED');
    for (const id of [pending.id, approved.id]) {
      const res = await call(env.app, 'PATCH', `/templates/${id}`, {
        key: t.apiKey,
        body: { category: 'MARKETING' },
      });
      expectError(res, 409, 'CONFLICT');
      expect(res.body.error.details[0]).toMatchObject({ field: 'status', templateId: id });
    }
  });
});

describe('replacing a template (PUT)', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant(env.app, env.partner.partnerKey);
  });

  const put = (id: string, body: unknown) =>
    call(env.app, 'PUT', `/templates/${id}`, { key: t.apiKey, body: body as Body });

  it('replaces every field of a DRAFT: name, language, category, components, parameter count', async () => {
    const created = await create(t, fullTemplate());
    const body = {
      name: uniqueName('renamed'),
      language: 'es',
      category: 'MARKETING',
      components: [
        { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['https://cdn.example.com/sale.png'] } },
        {
          type: 'BODY',
          text: 'Hola {{1}}, nuestra colección de {{2}} ya está aquí.',
          example: { body_text: [['Ana', 'verano']] },
        },
      ],
    };
    const res = await put(created.id, body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      ...created,
      ...body,
      parameterCount: 3,
      updatedAt: expect.stringMatching(ISO),
    });
    expect(Date.parse(res.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
    expect(await getOk(t, created.id)).toEqual(res.body);
    // The same body again (name and language unchanged) is a replace too.
    expect((await put(created.id, body)).status).toBe(200);
    // Still a DRAFT: no status change, no event; the old name and language are free.
    expect(await statusEvents(t.accountId)).toEqual([]);
    await create(t, bodyOnly('Your order has shipped.', { name: created.name, language: created.language }));
  });

  it('makes a REJECTED template a DRAFT again, without its reason (with an event); it can be submitted again', async () => {
    const rejected = await decided(t, 'REJECTED');
    const res = await put(rejected.id, {
      name: uniqueName('fixed'),
      language: rejected.language,
      category: 'UTILITY',
      components: [{ type: 'BODY', text: 'Your appointment is confirmed for tomorrow.' }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({
      status: 'DRAFT',
      rejectionReason: null,
      // Submitted to the sandbox, which holds no name: it could be renamed; the provider's id stays.
      provider: 'sandbox',
      providerTemplateId: rejected.providerTemplateId,
    });
    const events = (await statusEvents(t.accountId)).filter((e) => e.data.id === rejected.id);
    expect(events.map((e) => [e.data.previousStatus, e.data.status])).toEqual([
      ['DRAFT', 'PENDING'],
      ['PENDING', 'REJECTED'],
      ['REJECTED', 'DRAFT'],
    ]);
    const { previousStatus, ...shown } = events.at(-1)!.data;
    expect(shown).toEqual(res.body);

    const again = await submit(t, rejected.id);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ status: 'PENDING', name: res.body.name });
    expect(await decide(t.accountId, again.body, 'APPROVED')).toBe(true);
    expect((await getOk(t, rejected.id)).status).toBe('APPROVED');
  });

  it('refuses to replace a PENDING or APPROVED template with 409, changing nothing', async () => {
    const pending = await create(t, bodyOnly());
    expect((await submit(t, pending.id)).body.status).toBe('PENDING');
    const approved = await decided(t, 'APPROVED');
    for (const id of [pending.id, approved.id]) {
      const before = await getOk(t, id);
      const res = await put(id, bodyOnly('Something else entirely.'));
      expectError(res, 409, 'CONFLICT');
      expect(res.body.error.message).toBe(
        `The template is ${before.status}; it can be replaced only while DRAFT or REJECTED.`,
      );
      expect(res.body.error.details[0]).toMatchObject({ field: 'status', templateId: id });
      expect(await getOk(t, id)).toEqual(before);
    }
  });

  it('is checked as a create is: 400 naming each faulty or missing field, before the state is looked at', async () => {
    const created = await create(t, bodyOnly());
    const approved = await decided(t, 'APPROVED');
    for (const id of [created.id, approved.id]) {
      const bad = await put(id, bodyOnly('{{1}} and then {{2}}', { name: 'Bad Name', language: 'en-US' }));
      expectError(bad, 400, 'INVALID_REQUEST');
      expect(detailsOf(bad).map((d) => d.field)).toEqual(
        expect.arrayContaining(['name', 'language', 'components[0].text', 'components[0].example.body_text']),
      );
    }
    // A full replace: what PATCH takes alone is not enough.
    const partial = await put(created.id, { category: 'MARKETING' });
    expectError(partial, 400, 'INVALID_REQUEST');
    expect(detailsOf(partial).map((d) => d.field)).toEqual(
      expect.arrayContaining(['name', 'language', 'components']),
    );
    expectError(await put(created.id, { ...bodyOnly(), status: 'APPROVED' }), 400, 'INVALID_REQUEST');
    expect(await getOk(t, created.id)).toEqual(created);
  });

  it("takes another template's name and language no more than a create does: 409 naming it", async () => {
    const first = await create(t, bodyOnly());
    const second = await create(t, bodyOnly());
    const res = await put(second.id, bodyOnly('Something else entirely.', { name: first.name }));
    expectError(res, 409, 'CONFLICT');
    expect(res.body.error.details[0]).toMatchObject({ field: 'name', templateId: first.id });
    expect(await getOk(t, second.id)).toEqual(second);
    // In another language the name is free.
    const spanish = await put(
      second.id,
      bodyOnly('Su cita está confirmada.', { name: first.name, language: 'es' }),
    );
    expect(spanish.status, JSON.stringify(spanish.body)).toBe(200);
  });

  it('keeps the name and language of a template Meta holds (409), and replaces the rest', async () => {
    const rejected = await decided(t, 'REJECTED');
    // As if submitted to the WhatsApp Cloud API and rejected there.
    await env.tdb.db.query(
      `UPDATE templates SET provider = 'whatsapp_cloud', provider_template_id = '998877' WHERE id = $1`,
      [rejected.id],
    );
    const held = await getOk(t, rejected.id);
    const renamed = await put(rejected.id, bodyOnly('Your appointment is confirmed.', { language: 'fr' }));
    expectError(renamed, 409, 'CONFLICT');
    expect(renamed.body.error.details).toEqual([
      {
        field: 'name',
        issue: 'cannot change once submitted to the WhatsApp Cloud API',
        templateId: rejected.id,
      },
      {
        field: 'language',
        issue: 'cannot change once submitted to the WhatsApp Cloud API',
        templateId: rejected.id,
      },
    ]);
    expect(await getOk(t, rejected.id)).toEqual(held);
    const res = await put(rejected.id, {
      name: held.name,
      language: held.language,
      category: 'MARKETING',
      components: [{ type: 'BODY', text: 'Our autumn collection is here.' }],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    // Its next submission edits Meta's template, under the same id.
    expect(res.body).toMatchObject({
      status: 'DRAFT',
      category: 'MARKETING',
      provider: 'whatsapp_cloud',
      providerTemplateId: '998877',
    });
  });
});

describe('deleting a template', () => {
  it('answers 204, then the template is gone (and its name free again)', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const created = await create(t, bodyOnly());
    const res = await call(env.app, 'DELETE', `/templates/${created.id}`, { key: t.apiKey });
    expect(res.status).toBe(204);
    expect(res.body).toBe('');
    expectError(
      await call(env.app, 'GET', `/templates/${created.id}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'DELETE', `/templates/${created.id}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    await create(t, bodyOnly('Your appointment is confirmed.', { name: created.name }));
  });

  it('deletes an APPROVED template too', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const approved = await decided(t, 'APPROVED');
    expect((await call(env.app, 'DELETE', `/templates/${approved.id}`, { key: t.apiKey })).status).toBe(204);
  });
});

describe('submitting a template', () => {
  let t: Tenant;
  beforeAll(async () => {
    t = await tenant(env.app, env.partner.partnerKey);
  });

  it('sends a DRAFT to the sandbox: 200 with the template PENDING, and an event', async () => {
    const created = await create(t, bodyOnly());
    const before = Date.now();
    const res = await submit(t, created.id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      ...created,
      status: 'PENDING',
      provider: 'sandbox',
      providerTemplateId: expect.stringMatching(/^sandbox\./),
      submittedAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
    });
    expect(Date.parse(res.body.submittedAt)).toBeGreaterThanOrEqual(before - 1000);
    const [event] = (await statusEvents(t.accountId)).filter((e) => e.data.id === created.id);
    expect(event).toMatchObject({
      type: 'template.status_changed',
      accountId: t.accountId,
      data: { ...res.body, previousStatus: 'DRAFT' },
    });
  });

  it('submits from DRAFT or REJECTED only: 409 while PENDING, APPROVED, PAUSED or DISABLED', async () => {
    const pending = await create(t, bodyOnly());
    await submit(t, pending.id);
    expectError(await submit(t, pending.id), 409, 'CONFLICT');
    const approved = await decided(t, 'APPROVED');
    const res = await submit(t, approved.id);
    expectError(res, 409, 'CONFLICT');
    expect(res.body.error.message).toContain('APPROVED');
    for (const status of ['PAUSED', 'DISABLED']) {
      const row = await decided(t, 'APPROVED');
      await env.tdb.db.query('UPDATE templates SET status = $1 WHERE id = $2', [status, row.id]);
      expectError(await submit(t, row.id), 409, 'CONFLICT');
    }
    const rejected = await decided(t, 'REJECTED');
    const again = await submit(t, rejected.id);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body).toMatchObject({ status: 'PENDING', rejectionReason: null });
    expect(again.body.providerTemplateId).not.toBe(rejected.providerTemplateId);
  });

  it('asks the provider to edit its own template when a rejected one is submitted again', async () => {
    const rejected = await decided(t, 'REJECTED');
    const spy = vi.spyOn(env.app.ctx.channels.sandbox, 'submitTemplate');
    try {
      const fresh = await create(t, bodyOnly());
      expect((await submit(t, fresh.id)).status).toBe(200);
      expect(spy.mock.calls.at(-1)![1]).toBeUndefined();
      expect((await submit(t, rejected.id)).status).toBe(200);
      expect(spy.mock.calls.at(-1)).toEqual([
        {
          name: rejected.name,
          language: rejected.language,
          category: rejected.category,
          components: rejected.components,
          parameterFormat: 'POSITIONAL',
        },
        { providerTemplateId: rejected.providerTemplateId },
      ]);
    } finally {
      spy.mockRestore();
    }
  });

  it('records a refusal by the provider as REJECTED with its message', async () => {
    const created = await create(t, bodyOnly());
    const refused: SubmitOutcome = {
      kind: 'rejected',
      error: {
        code: 'TEMPLATE_REFUSED',
        message: 'INVALID_FORMAT: the body is malformed',
        providerCode: 100,
      },
    };
    const spy = vi.spyOn(env.app.ctx.channels.sandbox, 'submitTemplate').mockResolvedValueOnce(refused);
    try {
      const res = await submit(t, created.id);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({
        status: 'REJECTED',
        rejectionReason: 'INVALID_FORMAT: the body is malformed',
        provider: 'sandbox',
      });
    } finally {
      spy.mockRestore();
    }
  });

  it('answers 503 with Retry-After when the provider cannot be reached, changing nothing', async () => {
    const created = await create(t, bodyOnly());
    const spy = vi.spyOn(env.app.ctx.channels.sandbox, 'submitTemplate').mockResolvedValueOnce({
      kind: 'retry',
      error: { code: 'PROVIDER_UNAVAILABLE', message: 'timed out', providerCode: null },
    });
    try {
      const res = await submit(t, created.id);
      expectError(res, 503, 'SERVICE_UNAVAILABLE');
      expect(res.headers['retry-after']).toBe('5');
    } finally {
      spy.mockRestore();
    }
    expect(await getOk(t, created.id)).toEqual(created);
  });

  it('refuses with 409 when the template changes while the provider is answering', async () => {
    const created = await create(t, bodyOnly());
    const spy = vi.spyOn(env.app.ctx.channels.sandbox, 'submitTemplate').mockImplementationOnce(async () => {
      const edit = await call(env.app, 'PATCH', `/templates/${created.id}`, {
        key: t.apiKey,
        body: { components: [{ type: 'BODY', text: 'Edited while in flight.' }] },
      });
      expect(edit.status).toBe(200);
      return { kind: 'submitted', providerTemplateId: 'sandbox.raced', status: 'PENDING' };
    });
    try {
      expectError(await submit(t, created.id), 409, 'CONFLICT');
    } finally {
      spy.mockRestore();
    }
    expect(await getOk(t, created.id)).toMatchObject({
      status: 'DRAFT',
      components: [{ text: 'Edited while in flight.' }],
    });
  });

  it('lets a sandbox key submit on a sandbox account', async () => {
    const sandboxed = await tenant(env.app, env.partner.partnerKey, {}, { scope: 'sandbox' });
    const created = await create(sandboxed, bodyOnly());
    const res = await submit(sandboxed, created.id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: 'PENDING', provider: 'sandbox' });
  });

  it('refuses a sandbox key on a WhatsApp Cloud API account with 403 (a live-only action)', async () => {
    const sandboxed = await tenant(env.app, env.partner.partnerKey, {}, { scope: 'sandbox' });
    const created = await create(sandboxed, bodyOnly());
    const now = new Date();
    await env.tdb.db.query(
      `INSERT INTO account_channels (account_id, provider, settings, secrets_sealed, created_at, updated_at)
       VALUES ($1, 'whatsapp_cloud', $2, NULL, $3, $3)`,
      [
        sandboxed.accountId,
        JSON.stringify({
          whatsapp: {
            phoneNumberId: '1',
            businessAccountId: '2',
            displayPhoneNumber: null,
            verifiedName: null,
          },
        }),
        now,
      ],
    );
    const res = await submit(sandboxed, created.id);
    expectError(res, 403, 'FORBIDDEN');
    expect(res.body.error.message).toContain('live-only');
    expect(await getOk(sandboxed, created.id)).toEqual(created);
  });
});

describe("another account's template", () => {
  it('is 404 on every {id} route', async () => {
    const owner = await tenant(env.app, env.partner.partnerKey);
    const stranger = await tenant(env.app, env.partner.partnerKey);
    const created = await create(owner, bodyOnly());
    const key = stranger.apiKey;
    expectError(await call(env.app, 'GET', `/templates/${created.id}`, { key }), 404, 'RESOURCE_NOT_FOUND');
    expectError(
      await call(env.app, 'PATCH', `/templates/${created.id}`, { key, body: { category: 'MARKETING' } }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'PUT', `/templates/${created.id}`, { key, body: bodyOnly() }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'POST', `/templates/${created.id}/submit`, { key }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(
      await call(env.app, 'DELETE', `/templates/${created.id}`, { key }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    expectError(await call(env.app, 'GET', '/templates/tpl_nonexistent', { key }), 404, 'RESOURCE_NOT_FOUND');
    expect(await getOk(owner, created.id)).toEqual(created);
  });
});

describe('the OpenAPI document', () => {
  it('documents every template route with its typed components and its errors', async () => {
    const res = await call(env.app, 'GET', '/api/v1/public/openapi.json');
    const paths = res.body.paths;
    expect(paths['/api/v1/public/templates'].post.operationId).toBe('createTemplate');
    expect(paths['/api/v1/public/templates'].get.operationId).toBe('listTemplates');
    expect(paths['/api/v1/public/templates/{id}'].patch.responses['409']).toBeDefined();
    const replaceOp = paths['/api/v1/public/templates/{id}'].put;
    expect(replaceOp.operationId).toBe('replaceTemplate');
    for (const status of ['200', '400', '404', '409']) expect(replaceOp.responses[status]).toBeDefined();
    expect(replaceOp.requestBody).toEqual(paths['/api/v1/public/templates'].post.requestBody);
    const submitOp = paths['/api/v1/public/templates/{id}/submit'].post;
    for (const status of ['403', '404', '409', '503']) expect(submitOp.responses[status]).toBeDefined();
    const text = JSON.stringify(paths['/api/v1/public/templates'].post.requestBody);
    for (const type of [
      'HEADER',
      'BODY',
      'FOOTER',
      'BUTTONS',
      'QUICK_REPLY',
      'PHONE_NUMBER',
      'header_handle',
    ]) {
      expect(text).toContain(type);
    }
  });
});
