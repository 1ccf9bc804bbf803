// Every rendering is bounded while it renders, to the size its field takes (issue 43, item 2), and
// the request data that feeds Liquid is bounded: through HTTP with a sandbox key, as the issue's
// reproduction was made. A call's texts are rendered on the request (400 naming the field); a rule's
// action, a journey's step and a campaign's recipient fail with TEMPLATE_RENDER_FAILED and the field.
import { describe, expect, it } from 'vitest';
import { call } from '../helpers/client.ts';
import {
  approvedTemplate,
  eventually,
  type SandboxTenant,
  sandboxTenantWithKey,
  useMessagingApp,
} from '../helpers/messaging.ts';
import { expectError } from '../helpers/setup.ts';

const env = useMessagingApp({
  config: { automationPollMs: 50, automationScanMs: 3_600_000, campaignPollMs: 20 },
});

let numbers = 0;
const newNumber = () => `+1415555${String(7000 + numbers++).padStart(4, '0')}`;
const account = () => sandboxTenantWithKey(env.app, env.partner.partnerKey);
const LOOP = (times: number, value: string) => `{% for i in (1..${times}) %}{{ ${value} }}{% endfor %}`;

async function publishedScript(key: string, body: Record<string, unknown>): Promise<string> {
  const made = await call(env.app, 'POST', '/voice/scripts', { key, body: { name: 'Loop', ...body } });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const res = await call(env.app, 'POST', `/voice/scripts/${made.body.id}/publish`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return made.body.id;
}

const calls = async (key: string) => (await call(env.app, 'GET', '/voice/calls', { key })).body.data;

async function inbound(t: SandboxTenant, from: string, text: string) {
  const res = await call(env.app, 'POST', '/sandbox/inbound-messages', {
    key: t.sandboxKey,
    body: { from, text },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; contactId: string };
}

/** A rule on message.received with these actions; the run the customer's `text` makes. */
async function ruleRun(t: SandboxTenant, actions: unknown[], text: string) {
  const rule = await call(env.app, 'POST', '/rules', {
    key: t.apiKey,
    body: { name: 'Echo', trigger: { event: 'message.received' }, actions },
  });
  expect(rule.status, JSON.stringify(rule.body)).toBe(201);
  const msg = await inbound(t, newNumber(), text);
  const runs = await eventually(
    () => call(env.app, 'GET', `/rules/${rule.body.id}/runs`, { key: t.apiKey }),
    (r) => r.body.data?.length === 1,
  );
  return { run: runs.body.data[0], contactId: msg.contactId };
}

const outbound = async (t: SandboxTenant) =>
  (await call(env.app, 'GET', '/messages', { key: t.apiKey, query: { direction: 'outbound' } })).body.data;

describe('voice texts', () => {
  it("the issue's reproduction: a 400 KB variable is refused, and nothing is stored", async () => {
    const t = await account();
    const script = await publishedScript(t.sandboxKey, {
      type: 'tts',
      tts: { text: LOOP(200, 'variables.b') },
    });
    const res = await call(env.app, 'POST', '/voice/calls', {
      key: t.sandboxKey,
      body: { to: '+15005550001', scriptId: script, variables: { b: 'x'.repeat(400_000) } },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([
      { field: 'variables.b', issue: 'must NOT have more than 1000 characters' },
    ]);
    expect(await calls(t.sandboxKey)).toEqual([]);
  });

  it('a loop over a long value stops at what the voice speaks, while it renders', async () => {
    const t = await account();
    // 2,000 writes of 1,000 characters: built whole, 2 MB would pass the memory limit first.
    const script = await publishedScript(t.sandboxKey, {
      type: 'tts',
      tts: { text: LOOP(2000, 'variables.b') },
    });
    const res = await call(env.app, 'POST', '/voice/calls', {
      key: t.sandboxKey,
      body: { to: '+15005550001', scriptId: script, variables: { b: 'x'.repeat(1000) } },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([
      {
        field: 'variables',
        issue:
          "the script's tts.text renders to more than 3000 bytes (the most Twilio's <Say> speaks with the Twilio account's default voice) with these values",
      },
    ]);
    // A Google voice speaks 5,000 bytes: four writes fit, the fifth and further do not.
    const ivr = await publishedScript(t.sandboxKey, {
      type: 'ivr',
      voice: 'Google.en-US-Standard-C',
      ivr: { start: 'menu', nodes: { menu: { say: LOOP(6, 'variables.b') } } },
    });
    const google = await call(env.app, 'POST', '/voice/calls', {
      key: t.sandboxKey,
      body: { to: '+15005550001', scriptId: ivr, variables: { b: 'y'.repeat(1000) } },
    });
    expect(google.body.error.details[0].issue).toMatch(
      /^the script's ivr\.nodes\.menu\.say renders to more than 5000 bytes/,
    );
    expect(await calls(t.sandboxKey)).toEqual([]);
    const fits = await call(env.app, 'POST', '/voice/calls', {
      key: t.sandboxKey,
      body: { to: '+15005550001', scriptId: ivr, variables: { b: 'y'.repeat(800) } },
    });
    expect(fits.status, JSON.stringify(fits.body)).toBe(202);
  });

  it("counts what is written into a capture against the rendering's memory", async () => {
    const t = await account();
    const text = `{% capture x %}{% for i in (1..100) %}${LOOP(100, 'variables.b')}{% endfor %}{% endcapture %}{{ x | size }}`;
    const script = await publishedScript(t.sandboxKey, { type: 'tts', tts: { text } });
    const res = await call(env.app, 'POST', '/voice/calls', {
      key: t.sandboxKey,
      body: { to: '+15005550001', scriptId: script, variables: { b: 'x'.repeat(1000) } },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details[0].issue).toMatch(/cannot be rendered: memory alloc limit exceeded/);
  });

  it('refuses a plain text longer than its voice speaks when the script is saved', async () => {
    const t = await account();
    const text = 'é'.repeat(2000); // 4,000 bytes of UTF-8
    const res = await call(env.app, 'POST', '/voice/scripts', {
      key: t.apiKey,
      body: { name: 'Long', type: 'tts', tts: { text } },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([
      {
        field: 'tts.text',
        issue: "is 4000 bytes of UTF-8: Twilio's <Say> speaks at most 3000 with the default voice",
      },
    ]);
    const basic = await call(env.app, 'POST', '/voice/scripts', {
      key: t.apiKey,
      body: { name: 'Long', type: 'tts', voice: 'man', tts: { text } },
    });
    expect(basic.status, JSON.stringify(basic.body)).toBe(201);
  });
});

describe('request data that feeds Liquid', () => {
  it('bounds call variables: value, names, depth and the whole', async () => {
    const t = await account();
    const script = await publishedScript(t.sandboxKey, {
      type: 'tts',
      tts: { text: 'Hi {{ variables.a }}' },
    });
    const refused = async (variables: unknown) => {
      const res = await call(env.app, 'POST', '/voice/calls', {
        key: t.sandboxKey,
        body: { to: '+15005550001', scriptId: script, variables },
      });
      expectError(res, 400, 'INVALID_REQUEST');
      return res.body.error.details;
    };
    expect(await refused({ a: { b: { c: 1 } } })).toEqual([
      { field: 'variables.a.b', issue: 'must be string,number,boolean,null' },
    ]);
    expect(await refused({ ['n'.repeat(65)]: 1 })).toEqual([
      { field: `variables.${'n'.repeat(65)}`, issue: 'must NOT have more than 64 characters' },
    ]);
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
    expect(await refused(many)).toContainEqual({
      field: 'variables',
      issue: 'must NOT have more than 50 properties',
    });
    const whole = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'.repeat(1000)]));
    expect(await refused({ a: 'x', ...whole })).toEqual([
      { field: 'variables', issue: 'must be at most 16384 characters as JSON (it is 17152)' },
    ]);
    const campaign = await call(env.app, 'POST', '/voice/campaigns', {
      key: t.apiKey,
      body: {
        name: 'c',
        scriptId: script,
        audience: { tag: 'x' },
        call: { variables: { a: 'v'.repeat(1001) } },
      },
    });
    expectError(campaign, 400, 'INVALID_REQUEST');
    expect(campaign.body.error.details).toEqual([
      { field: 'call.variables.a', issue: 'must NOT have more than 1000 characters' },
    ]);
  });

  it("bounds a journey's trigger data", async () => {
    const t = await account();
    const journey = await publishedJourney(t, [{ id: 'end', type: 'end', config: {} }]);
    const res = await call(env.app, 'POST', `/journeys/${journey}/trigger`, {
      key: t.sandboxKey,
      body: { to: newNumber(), data: { b: 'x'.repeat(400_000) } },
    });
    expectError(res, 400, 'INVALID_REQUEST');
    expect(res.body.error.details).toEqual([
      { field: 'data.b', issue: 'must NOT have more than 1000 characters' },
    ]);
  });
});

describe('messages, webhook bodies and attributes rendered by rules', () => {
  it('a text longer than WhatsApp takes fails the action, and nothing is sent', async () => {
    const t = await account();
    const { run } = await ruleRun(
      t,
      [{ type: 'send_message', message: { type: 'text', text: LOOP(5, 'message.text') } }],
      'x'.repeat(1000),
    );
    expect(run.status).toBe('failed');
    expect(run.actions[0]).toMatchObject({
      type: 'send_message',
      status: 'failed',
      error: {
        code: 'TEMPLATE_RENDER_FAILED',
        message: "message.text renders to more than 4096 characters (WhatsApp's limit for a text message)",
      },
    });
    expect(await outbound(t)).toEqual([]);
  });

  it('a caption longer than 1,024 characters fails the action', async () => {
    const t = await account();
    const media = { kind: 'image', url: 'https://example.com/a.png', caption: LOOP(2, 'message.text') };
    const { run } = await ruleRun(
      t,
      [{ type: 'send_message', message: { type: 'media', media } }],
      'y'.repeat(600),
    );
    expect(run.actions[0].error).toEqual({
      code: 'TEMPLATE_RENDER_FAILED',
      message: "message.media.caption renders to more than 1024 characters (WhatsApp's limit for a caption)",
    });
    expect(await outbound(t)).toEqual([]);
  });

  it("a webhook body's strings share 64 KiB, and an attribute holds 500 characters", async () => {
    const t = await account();
    const hook = await env.receiver();
    const { run } = await ruleRun(
      t,
      [
        {
          type: 'call_webhook',
          url: hook.url(),
          body: { a: LOOP(40, 'message.text'), b: LOOP(40, 'message.text') },
        },
      ],
      'z'.repeat(1000),
    );
    expect(run.actions[0].error).toEqual({
      code: 'TEMPLATE_RENDER_FAILED',
      message: 'body renders to more than 65536 characters (in all its strings together)',
    });
    const set = await ruleRun(
      t,
      [{ type: 'set_attribute', key: 'said', value: LOOP(2, 'message.text') }],
      'w'.repeat(300),
    );
    expect(set.run.actions[0].error).toEqual({
      code: 'TEMPLATE_RENDER_FAILED',
      message: 'attributes.said renders to more than 500 characters (the most a contact attribute holds)',
    });
    const contact = await call(env.app, 'GET', `/contacts/${set.contactId}`, { key: t.apiKey });
    expect(contact.body.attributes).toEqual({});
  });
});

async function publishedJourney(t: SandboxTenant, nodes: unknown[]): Promise<string> {
  const made = await call(env.app, 'POST', '/journeys', {
    key: t.apiKey,
    body: {
      name: 'j',
      entry: { trigger: 'api', reentry: 'always', start: (nodes[0] as { id: string }).id },
      nodes,
      edges: [],
    },
  });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const res = await call(env.app, 'POST', `/journeys/${made.body.id}/publish`, { key: t.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return made.body.id;
}

async function failedRun(t: SandboxTenant, journey: string, to: string, data: Record<string, unknown>) {
  const started = await call(env.app, 'POST', `/journeys/${journey}/trigger`, {
    key: t.sandboxKey,
    body: { to, data },
  });
  expect(started.status, JSON.stringify(started.body)).toBe(202);
  const run = await eventually(
    () => call(env.app, 'GET', `/journeys/${journey}/runs/${started.body.id}`, { key: t.apiKey }),
    (r) => r.body.status === 'failed' || r.body.status === 'completed',
  );
  return run.body;
}

describe('journey texts and bodies', () => {
  it("a step's text and a webhook node's body stop at their bounds: the run fails with the field", async () => {
    const t = await account();
    const to = newNumber();
    await inbound(t, to, 'hello'); // the window is open: only the size can refuse the text
    const b = 'x'.repeat(1000);
    const text = await publishedJourney(t, [
      {
        id: 'say',
        type: 'send_message',
        config: { message: { type: 'text', text: LOOP(5, 'trigger.data.b') } },
      },
    ]);
    const said = await failedRun(t, text, to, { b });
    expect(said.status).toBe('failed');
    expect(said.steps[0].error).toEqual({
      code: 'TEMPLATE_RENDER_FAILED',
      message: "message.text renders to more than 4096 characters (WhatsApp's limit for a text message)",
    });
    const hook = await env.receiver();
    const body = await publishedJourney(t, [
      { id: 'hook', type: 'webhook', config: { url: hook.url(), body: { t: LOOP(100, 'trigger.data.b') } } },
    ]);
    const posted = await failedRun(t, body, to, { b });
    expect(posted.steps[0].error).toEqual({
      code: 'TEMPLATE_RENDER_FAILED',
      message: 'body renders to more than 65536 characters (in all its strings together)',
    });
    expect(await outbound(t)).toEqual([]);
  });
});

describe('campaign parameters', () => {
  it('a recipient whose parameter renders past 1,024 characters fails with the field', async () => {
    const t = await account();
    const template = await approvedTemplate(env.app, t.apiKey, {
      name: 'note',
      body: 'Your note: {{1}}, kept for you.',
      examples: ['hello'],
    });
    const made = await call(env.app, 'POST', '/contacts', {
      key: t.apiKey,
      body: { phone: newNumber(), attributes: { note: 'n'.repeat(500) } },
    });
    const campaign = await call(env.app, 'POST', '/campaigns', {
      key: t.apiKey,
      body: {
        name: 'Notes',
        message: {
          templateName: template.name,
          templateLanguage: 'en_US',
          parameters: [LOOP(3, 'contact.attributes.note')],
        },
        audience: { contactIds: [made.body.id] },
      },
    });
    expect(campaign.status, JSON.stringify(campaign.body)).toBe(201);
    expect(
      (await call(env.app, 'POST', `/campaigns/${campaign.body.id}/start`, { key: t.apiKey })).status,
    ).toBe(200);
    const rows = await eventually(
      () => call(env.app, 'GET', `/campaigns/${campaign.body.id}/recipients`, { key: t.apiKey }),
      (r) => r.body.data?.[0]?.status === 'failed',
    );
    expect(rows.body.data[0].error).toEqual({
      code: 'TEMPLATE_RENDER_FAILED',
      message:
        "message.parameters[0] renders to more than 1024 characters (WhatsApp's limit for a template parameter)",
    });
  });
});
