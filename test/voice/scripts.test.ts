// Voice scripts through HTTP: created checked (every fault named with its field), the IVR graph
// checked when published (a details entry per faulty node), the TwiML built by the twilio package
// and kept with each version, a published script's edit made the next version, DELETE of a draft and
// archiving of a published one; 402 below Business, 404 for another tenant.
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { call, provision, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp({ config: () => ({ webhookAllowedHosts: ['127.0.0.1'] }) });

const menu = (overrides: Record<string, unknown> = {}) => ({
  name: 'Appointment confirmation',
  type: 'ivr',
  voice: 'Polly.Joanna',
  ivr: {
    start: 'menu',
    nodes: {
      menu: {
        say: 'Hello {{ contact.name }}, press 1 to confirm, 2 to speak to us.',
        gather: {
          options: {
            '1': { action: { type: 'tag', tag: 'confirmed', next: 'thanks' } },
            '2': { action: { type: 'transfer', to: '+14155550100' } },
          },
          noInput: { next: 'bye' },
        },
      },
      thanks: { say: 'Thank you & see you soon.', action: { type: 'hangup' } },
      bye: { say: 'Goodbye.' },
    },
  },
  ...overrides,
});

async function create(key: string, body: Record<string, unknown>) {
  const res = await call(env.app, 'POST', '/voice/scripts', { key, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const publish = (key: string, id: string) => call(env.app, 'POST', `/voice/scripts/${id}/publish`, { key });

describe('voice scripts', () => {
  it('creates a draft with defaults; publishing builds its TwiML, each node a document', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const draft = await create(t.apiKey, menu());
    expect(draft).toMatchObject({
      type: 'ivr',
      status: 'draft',
      version: 1,
      language: 'en-US',
      voice: 'Polly.Joanna',
      onMachine: 'hangup',
      tts: null,
      twiml: null,
    });
    expect(draft.ivr.nodes.menu.gather).toMatchObject({ numDigits: 1, timeoutSeconds: 5, retries: 1 });
    const res = await publish(t.apiKey, draft.id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ status: 'published', version: 1 });
    const base = `${env.app.ctx.config.publicBaseUrl}/api/v1/callbacks/twilio/voice/${t.accountId}`;
    // The same documents the twilio package makes.
    const menuDoc = new twilio.twiml.VoiceResponse();
    menuDoc
      .gather({
        input: ['dtmf'],
        numDigits: 1,
        timeout: 5,
        action: `${base}/gather?node=menu&attempt=1`,
        method: 'POST',
        actionOnEmptyResult: true,
      })
      .say(
        { language: 'en-US', voice: 'Polly.Joanna' },
        'Hello {{ contact.name }}, press 1 to confirm, 2 to speak to us.',
      );
    expect(res.body.twiml.menu).toBe(menuDoc.toString());
    expect(res.body.twiml.thanks).toContain('Thank you &amp; see you soon.</Say><Hangup/>');
    expect(res.body.twiml.bye).toContain('Goodbye.</Say><Hangup/>');
    expectError(await publish(t.apiKey, draft.id), 409, 'CONFLICT');

    const tts = await create(t.apiKey, {
      name: 'Notice',
      type: 'tts',
      tts: { text: 'Your order has shipped.', loop: 2 },
    });
    const published = await publish(t.apiKey, tts.id);
    expect(published.body.twiml).toEqual({
      tts: '<?xml version="1.0" encoding="UTF-8"?><Response><Say language="en-US" loop="2">Your order has shipped.</Say><Hangup/></Response>',
    });
  });

  it('names every fault when saved, and every faulty node when published', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const bad = await call(env.app, 'POST', '/voice/scripts', {
      key: t.apiKey,
      body: menu({
        tts: { text: 'Hi' },
        ivr: {
          start: 'menu',
          nodes: {
            menu: {
              say: 'Hi {{ contact.name ',
              gather: {
                numDigits: 1,
                options: {
                  '12': { next: 'menu' },
                  '3': { action: { type: 'tag', tag: '#nope' } },
                  '4': { action: { type: 'webhook', url: 'http://169.254.169.254/x' } },
                  '5': { action: { type: 'transfer', to: 'the boss' } },
                },
              },
            },
          },
        },
      }),
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual([
      'tts',
      'ivr.nodes.menu.say',
      'ivr.nodes.menu.gather.options.12',
      'ivr.nodes.menu.gather.options.3.action.tag',
      'ivr.nodes.menu.gather.options.4.action.url',
      'ivr.nodes.menu.gather.options.5.action.to',
    ]);
    expect(bad.body.error.details[2].issue).toBe('must be 1 of the keys 0-9, * and # (numDigits)');

    const tangled = await create(
      t.apiKey,
      menu({
        ivr: {
          start: 'menu',
          nodes: {
            menu: {
              say: 'Press 1.',
              gather: { options: { '1': { next: 'nowhere' } }, invalid: { next: 'gone' } },
            },
            island: { say: 'Nobody comes here.' },
            empty: {},
            sorry: { gather: { options: {} } },
          },
        },
      }),
    );
    const res = await publish(t.apiKey, tangled.id);
    expectError(res, 400, 'INVALID_REQUEST');
    // Nodes are an object: their faults come in no promised order.
    expect(res.body.error.details).toHaveLength(7);
    expect(res.body.error.details).toEqual(
      expect.arrayContaining([
        { field: 'ivr.nodes.menu.gather.options.1', issue: 'leads to "nowhere", which is no node' },
        { field: 'ivr.nodes.menu.gather.invalid', issue: 'leads to "gone", which is no node' },
        { field: 'ivr.nodes.island', issue: 'island cannot be reached from the start (menu)' },
        { field: 'ivr.nodes.empty', issue: 'empty neither says, plays, gathers nor acts' },
        { field: 'ivr.nodes.empty', issue: 'empty cannot be reached from the start (menu)' },
        { field: 'ivr.nodes.sorry', issue: 'sorry cannot be reached from the start (menu)' },
        { field: 'ivr.nodes.sorry.gather.options', issue: 'must hold at least one option' },
      ]),
    );
    expect((await call(env.app, 'GET', `/voice/scripts/${tangled.id}`, { key: t.apiKey })).body.status).toBe(
      'draft',
    );
    const noStart = await create(t.apiKey, menu({ ivr: { start: 'missing', nodes: { a: { say: 'Hi' } } } }));
    expect((await publish(t.apiKey, noStart.id)).body.error.details).toEqual([
      { field: 'ivr.start', issue: 'names no node ("missing")' },
    ]);
  });

  it('makes a new version of a published script on each edit; deletes a draft, archives a published one', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const s = await create(t.apiKey, { name: 'Notice', type: 'tts', tts: { text: 'One' } });
    const edited = await call(env.app, 'PATCH', `/voice/scripts/${s.id}`, {
      key: t.apiKey,
      body: { tts: { text: 'Two' } },
    });
    expect(edited.body).toMatchObject({ version: 1, status: 'draft', tts: { text: 'Two', loop: 1 } });
    await publish(t.apiKey, s.id);
    const v2 = await call(env.app, 'PATCH', `/voice/scripts/${s.id}`, {
      key: t.apiKey,
      body: { tts: { text: 'Three' }, language: 'de-DE' },
    });
    expect(v2.body).toMatchObject({ version: 2, status: 'published', language: 'de-DE' });
    expect(v2.body.twiml.tts).toContain('<Say language="de-DE">Three</Say>');
    const bad = await call(env.app, 'PATCH', `/voice/scripts/${s.id}`, {
      key: t.apiKey,
      body: { tts: { text: '{{ broken' } },
    });
    expectError(bad, 400, 'INVALID_REQUEST');
    expect((await call(env.app, 'GET', `/voice/scripts/${s.id}`, { key: t.apiKey })).body.version).toBe(2);

    expect((await call(env.app, 'DELETE', `/voice/scripts/${s.id}`, { key: t.apiKey })).status).toBe(204);
    const archived = await call(env.app, 'GET', `/voice/scripts/${s.id}`, { key: t.apiKey });
    expect(archived.body).toMatchObject({ status: 'archived', version: 2 });
    expectError(
      await call(env.app, 'PATCH', `/voice/scripts/${s.id}`, { key: t.apiKey, body: { name: 'x' } }),
      409,
      'CONFLICT',
    );
    expectError(await call(env.app, 'DELETE', `/voice/scripts/${s.id}`, { key: t.apiKey }), 409, 'CONFLICT');
    const draft = await create(t.apiKey, { name: 'Draft', type: 'tts', tts: { text: 'x' } });
    expect((await call(env.app, 'DELETE', `/voice/scripts/${draft.id}`, { key: t.apiKey })).status).toBe(204);
    expectError(
      await call(env.app, 'GET', `/voice/scripts/${draft.id}`, { key: t.apiKey }),
      404,
      'RESOURCE_NOT_FOUND',
    );
    const list = await call(env.app, 'GET', '/voice/scripts', {
      key: t.apiKey,
      query: { status: 'archived' },
    });
    expect(list.body.data.map((x: { id: string }) => x.id)).toEqual([s.id]);
  });

  it('402 below Business; another tenant sees nothing', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const s = await create(t.apiKey, { name: 'Notice', type: 'tts', tts: { text: 'Hi' } });
    const pro = await provision(env.app, env.partner.partnerKey, { planCode: 'pro' });
    expectError(
      await call(env.app, 'GET', '/voice/scripts', { key: env.partner.partnerKey, accountId: pro.accountId }),
      402,
      'PLAN_UPGRADE_REQUIRED',
    );
    const b = await tenant(env.app, env.partner.partnerKey);
    for (const [method, path] of [
      ['GET', `/voice/scripts/${s.id}`],
      ['POST', `/voice/scripts/${s.id}/publish`],
      ['DELETE', `/voice/scripts/${s.id}`],
    ] as const) {
      expectError(await call(env.app, method, path, { key: b.apiKey }), 404, 'RESOURCE_NOT_FOUND');
    }
    expect((await call(env.app, 'GET', '/voice/scripts', { key: b.apiKey })).body.data).toEqual([]);
  });
});
