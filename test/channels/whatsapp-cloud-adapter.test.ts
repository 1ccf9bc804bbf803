// The WhatsApp Cloud API adapter against the fake Graph API over real HTTP: the exact bodies Meta
// receives for every message type, how each kind of failure becomes an outcome, template
// submission, the credential check, and Meta's side of the webhooks (signatures, the handshake,
// payload parsing, including payloads that make no sense).
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Agent } from 'undici';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  MessageContent,
  OutboundMessage,
  ProviderUpdate,
  TemplateDefinition,
} from '../../src/channels/types.ts';
import {
  parseCallback,
  readCallbackBody,
  verifyCallbackSignature,
  verifyHandshake,
} from '../../src/channels/whatsapp-cloud/callbacks.ts';
import { createGraphAgent, WhatsAppCloudAdapter } from '../../src/channels/whatsapp-cloud/client.ts';
import type { WhatsAppConnection } from '../../src/channels/whatsapp-cloud/connection.ts';
import { type FakeBusiness, FakeWhatsAppCloud, graphError } from '../fakes/whatsapp-cloud.ts';
import { Receiver } from '../helpers/receiver.ts';

let fake: FakeWhatsAppCloud;
let agent: Agent;
let business: FakeBusiness;

beforeAll(async () => {
  fake = await FakeWhatsAppCloud.start();
  agent = createGraphAgent(5_000);
  business = fake.createBusiness();
});

afterAll(async () => {
  await agent.close();
  await fake.close();
});

function connectionFor(b: FakeBusiness, overrides: Partial<WhatsAppConnection> = {}): WhatsAppConnection {
  return {
    graphUrl: fake.graphUrl,
    phoneNumberId: b.phoneNumberId,
    businessAccountId: b.businessAccountId,
    accessToken: b.accessToken,
    timeoutMs: 5_000,
    ...overrides,
  };
}

const adapterFor = (b: FakeBusiness, overrides: Partial<WhatsAppConnection> = {}) =>
  new WhatsAppCloudAdapter(connectionFor(b, overrides), agent);

const TO = '+447700900123';
const message = (content: MessageContent, to = TO): OutboundMessage => ({ id: 'msg_test', to, content });
const hello = message({ type: 'text', text: { body: 'Hello', previewUrl: false } });

async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Sends one message and returns the outcome with the request the fake saw. */
async function sendAndCapture(content: MessageContent) {
  const before = fake.requests.length;
  const outcome = await adapterFor(business).send(message(content));
  expect(fake.requests.length).toBe(before + 1);
  return { outcome, request: fake.requests.at(-1)! };
}

describe('send: the Graph body for each message type', () => {
  it('text: POST /{phone-number-id}/messages with the bearer token, accepted with the wamid', async () => {
    const { outcome, request: req } = await sendAndCapture({
      type: 'text',
      text: { body: 'Your code is 1234', previewUrl: true },
    });
    expect(req.method).toBe('POST');
    expect(req.path).toBe(`/v21.0/${business.phoneNumberId}/messages`);
    expect(req.headers.authorization).toBe(`Bearer ${business.accessToken}`);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.body).toStrictEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: TO,
      biz_opaque_callback_data: 'msg_test',
      type: 'text',
      text: { body: 'Your code is 1234', preview_url: true },
    });
    const sent = fake.sent.at(-1)!;
    expect(sent.wamid).toMatch(/^wamid\./);
    expect(sent.businessPhoneNumberId).toBe(business.phoneNumberId);
    // Meta's answer names the recipient's WhatsApp id (here its number's digits).
    expect(outcome).toStrictEqual({
      kind: 'accepted',
      providerMessageId: sent.wamid,
      recipientWaId: '447700900123',
    });
  });

  it('media: image and video with captions, audio without, document with a filename', async () => {
    const image = await sendAndCapture({
      type: 'media',
      media: { kind: 'image', url: 'https://cdn.example/a.png', caption: 'Look' },
    });
    expect(image.request.body).toStrictEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: TO,
      biz_opaque_callback_data: 'msg_test',
      type: 'image',
      image: { link: 'https://cdn.example/a.png', caption: 'Look' },
    });
    expect(image.outcome.kind).toBe('accepted');

    const video = await sendAndCapture({
      type: 'media',
      media: { kind: 'video', url: 'https://cdn.example/v.mp4' },
    });
    expect(video.request.body.type).toBe('video');
    expect(video.request.body.video).toStrictEqual({ link: 'https://cdn.example/v.mp4' });

    // Meta takes no caption (and no filename) on audio: they are left out, not sent to be refused.
    const audio = await sendAndCapture({
      type: 'media',
      media: { kind: 'audio', url: 'https://cdn.example/a.ogg', caption: 'ignored', filename: 'a.ogg' },
    });
    expect(audio.request.body.audio).toStrictEqual({ link: 'https://cdn.example/a.ogg' });
    expect(audio.outcome.kind).toBe('accepted');

    const doc = await sendAndCapture({
      type: 'media',
      media: {
        kind: 'document',
        url: 'https://cdn.example/i.pdf',
        caption: 'Invoice',
        filename: 'invoice.pdf',
      },
    });
    expect(doc.request.body.document).toStrictEqual({
      link: 'https://cdn.example/i.pdf',
      caption: 'Invoice',
      filename: 'invoice.pdf',
    });
    expect(doc.outcome.kind).toBe('accepted');
  });

  it('interactive reply buttons, with header and footer', async () => {
    const { outcome, request: req } = await sendAndCapture({
      type: 'interactive',
      interactive: {
        kind: 'buttons',
        header: 'Delivery',
        body: 'When should we come?',
        footer: 'Reply by 6pm',
        buttons: [
          { id: 'am', title: 'Morning' },
          { id: 'pm', title: 'Afternoon' },
        ],
      },
    });
    expect(req.body).toStrictEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: TO,
      biz_opaque_callback_data: 'msg_test',
      type: 'interactive',
      interactive: {
        type: 'button',
        header: { type: 'text', text: 'Delivery' },
        body: { text: 'When should we come?' },
        footer: { text: 'Reply by 6pm' },
        action: {
          buttons: [
            { type: 'reply', reply: { id: 'am', title: 'Morning' } },
            { type: 'reply', reply: { id: 'pm', title: 'Afternoon' } },
          ],
        },
      },
    });
    expect(outcome.kind).toBe('accepted');
  });

  it('interactive list, without header or footer', async () => {
    const { outcome, request: req } = await sendAndCapture({
      type: 'interactive',
      interactive: {
        kind: 'list',
        body: 'Pick a size',
        buttonText: 'Sizes',
        sections: [
          {
            title: 'Shirts',
            rows: [
              { id: 's', title: 'Small', description: 'Chest 90cm' },
              { id: 'm', title: 'Medium' },
            ],
          },
          { title: 'Hats', rows: [{ id: 'h', title: 'One size' }] },
        ],
      },
    });
    expect(req.body.interactive).toStrictEqual({
      type: 'list',
      body: { text: 'Pick a size' },
      action: {
        button: 'Sizes',
        sections: [
          {
            title: 'Shirts',
            rows: [
              { id: 's', title: 'Small', description: 'Chest 90cm' },
              { id: 'm', title: 'Medium' },
            ],
          },
          { title: 'Hats', rows: [{ id: 'h', title: 'One size' }] },
        ],
      },
    });
    expect(outcome.kind).toBe('accepted');
  });

  it('template: parameters dealt out to the TEXT header, the body, then URL buttons with {{1}}', async () => {
    const definition: TemplateDefinition = {
      name: 'order_shipped',
      language: 'en_GB',
      category: 'UTILITY',
      components: [
        { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['#1'] } },
        {
          type: 'BODY',
          text: 'Hi {{1}}, your order ships {{2}}.',
          example: { body_text: [['Ann', 'today']] },
        },
        { type: 'FOOTER', text: 'Thanks' },
        {
          type: 'BUTTONS',
          buttons: [
            { type: 'QUICK_REPLY', text: 'Stop' },
            {
              type: 'URL',
              text: 'Track',
              url: 'https://shop.example/track/{{1}}',
              example: ['https://shop.example/track/x'],
            },
            { type: 'URL', text: 'Shop', url: 'https://shop.example' },
            { type: 'PHONE_NUMBER', text: 'Call', phone_number: '+15550001111' },
          ],
        },
      ],
    };
    fake.addTemplate(business, definition);
    const { outcome, request: req } = await sendAndCapture({
      type: 'template',
      template: { ...definition, parameters: ['A-1', 'Ann', 'today', 'abc'] },
    });
    expect(req.body).toStrictEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: TO,
      biz_opaque_callback_data: 'msg_test',
      type: 'template',
      template: {
        name: 'order_shipped',
        language: { code: 'en_GB' },
        components: [
          { type: 'header', parameters: [{ type: 'text', text: 'A-1' }] },
          {
            type: 'body',
            parameters: [
              { type: 'text', text: 'Ann' },
              { type: 'text', text: 'today' },
            ],
          },
          { type: 'button', sub_type: 'url', index: '1', parameters: [{ type: 'text', text: 'abc' }] },
        ],
      },
    });
    // Meta's answer to a template send carries its pacing word, message_status.
    expect(outcome).toStrictEqual({
      kind: 'accepted',
      providerMessageId: fake.sent.at(-1)!.wamid,
      recipientWaId: '447700900123',
      providerStatus: 'accepted',
    });
  });

  it("template: a media header shows the send's first parameter; components with nothing to fill are left out", async () => {
    const definition: TemplateDefinition = {
      name: 'summer_sale',
      language: 'en',
      category: 'MARKETING',
      components: [
        { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['https://cdn.example/banner.png'] } },
        { type: 'BODY', text: 'Everything at {{1}} off' },
      ],
    };
    fake.addTemplate(business, definition);
    const { outcome, request: req } = await sendAndCapture({
      type: 'template',
      template: { ...definition, parameters: ['https://cdn.example/summer-ann.png', '50%'] },
    });
    expect(req.body.template).toStrictEqual({
      name: 'summer_sale',
      language: { code: 'en' },
      components: [
        {
          type: 'header',
          parameters: [{ type: 'image', image: { link: 'https://cdn.example/summer-ann.png' } }],
        },
        { type: 'body', parameters: [{ type: 'text', text: '50%' }] },
      ],
    });
    expect(outcome.kind).toBe('accepted');

    const plain: TemplateDefinition = {
      name: 'hello_world',
      language: 'en_US',
      category: 'UTILITY',
      components: [
        { type: 'HEADER', format: 'TEXT', text: 'Hello' },
        { type: 'BODY', text: 'Welcome aboard' },
      ],
    };
    fake.addTemplate(business, plain);
    const second = await sendAndCapture({ type: 'template', template: { ...plain, parameters: [] } });
    expect(second.request.body.template).toStrictEqual({ name: 'hello_world', language: { code: 'en_US' } });
    expect(second.outcome.kind).toBe('accepted');
  });
});

describe('send: what Meta refuses, as the fake checks it', () => {
  const template = (name: string, parameters: string[]): MessageContent => ({
    type: 'template',
    template: {
      name,
      language: 'en',
      category: 'UTILITY',
      components: [{ type: 'BODY', text: 'Hi {{1}}, see you {{2}}' }],
      parameters,
    },
  });

  it('a parameter count that does not match the template: 132000, TEMPLATE_NOT_USABLE', async () => {
    fake.addTemplate(business, {
      name: 'see_you',
      language: 'en',
      components: [{ type: 'BODY', text: 'Hi {{1}}, see you {{2}}' }],
    });
    const { outcome } = await sendAndCapture(template('see_you', ['Ann']));
    expect(outcome).toStrictEqual({
      kind: 'rejected',
      error: {
        code: 'TEMPLATE_NOT_USABLE',
        message:
          '(#132000) Number of parameters does not match the expected number of params: body: number of localizable_params (1) does not match the expected number of params (2)',
        providerCode: 132000,
      },
    });
  });

  it('a template Meta does not know, or has not approved: 132001; paused: 132015; disabled: 132016', async () => {
    const unknown = await sendAndCapture(template('no_such_template', ['a', 'b']));
    expect(unknown.outcome).toStrictEqual({
      kind: 'rejected',
      error: {
        code: 'TEMPLATE_NOT_USABLE',
        message:
          '(#132001) Template name does not exist in the translation: template name (no_such_template) does not exist in en',
        providerCode: 132001,
      },
    });
    const components = [{ type: 'BODY', text: 'Hi {{1}}, see you {{2}}' }];
    fake.addTemplate(business, { name: 'still_pending', language: 'en', components }, 'PENDING');
    const pending = await sendAndCapture(template('still_pending', ['a', 'b']));
    expect(pending.outcome.kind === 'rejected' && pending.outcome.error.providerCode).toBe(132001);

    fake.addTemplate(business, { name: 'paused_one', language: 'en', components }, 'PAUSED');
    const paused = await sendAndCapture(template('paused_one', ['a', 'b']));
    expect(paused.outcome.kind === 'rejected' && paused.outcome.error).toStrictEqual({
      code: 'TEMPLATE_NOT_USABLE',
      message: '(#132015) Template is Paused: template paused_one is paused',
      providerCode: 132015,
    });

    fake.addTemplate(business, { name: 'disabled_one', language: 'en', components }, 'DISABLED');
    const disabled = await sendAndCapture(template('disabled_one', ['a', 'b']));
    expect(disabled.outcome.kind === 'rejected' && disabled.outcome.error.providerCode).toBe(132016);
  });

  it('a text body over 4096 characters: 100, MESSAGE_NOT_SUPPORTED', async () => {
    const { outcome } = await sendAndCapture({
      type: 'text',
      text: { body: 'x'.repeat(4097), previewUrl: false },
    });
    expect(outcome).toStrictEqual({
      kind: 'rejected',
      error: {
        code: 'MESSAGE_NOT_SUPPORTED',
        message: "(#100) Param text['body'] must be at most 4096 characters long.",
        providerCode: 100,
      },
    });
    const exact = await sendAndCapture({ type: 'text', text: { body: 'x'.repeat(4096), previewUrl: false } });
    expect(exact.outcome.kind).toBe('accepted');
  });

  it('a token that is not valid: HTTP 401, 190, CHANNEL_UNAUTHORIZED, rejected', async () => {
    const outcome = await adapterFor(business, { accessToken: 'EAAnot-a-real-token' }).send(hello);
    expect(outcome).toStrictEqual({
      kind: 'rejected',
      error: {
        code: 'CHANNEL_UNAUTHORIZED',
        message: 'Invalid OAuth access token - Cannot parse access token',
        providerCode: 190,
      },
    });
  });

  it("another business's token on this number: 190; an unknown number id: CHANNEL_UNAUTHORIZED too", async () => {
    const other = fake.createBusiness();
    const crossed = await adapterFor(business, { accessToken: other.accessToken }).send(hello);
    expect(crossed.kind === 'rejected' && crossed.error.code).toBe('CHANNEL_UNAUTHORIZED');
    expect(crossed.kind === 'rejected' && crossed.error.providerCode).toBe(190);

    const unknown = await adapterFor(business, { phoneNumberId: '100000000000001' }).send(hello);
    expect(unknown).toStrictEqual({
      kind: 'rejected',
      error: {
        code: 'CHANNEL_UNAUTHORIZED',
        message:
          "Unsupported post request. Object with ID '100000000000001' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api",
        providerCode: 100,
      },
    });
  });
});

describe('send: every class of failure', () => {
  // [Meta code, HTTP status (Meta's own when undefined), Tidings code, outcome]
  const table: [number, number | undefined, string, 'rejected' | 'retry'][] = [
    [190, undefined, 'CHANNEL_UNAUTHORIZED', 'rejected'],
    [10, 403, 'CHANNEL_UNAUTHORIZED', 'rejected'],
    [200, 403, 'CHANNEL_UNAUTHORIZED', 'rejected'],
    [131005, 403, 'CHANNEL_UNAUTHORIZED', 'rejected'],
    [131026, undefined, 'RECIPIENT_UNREACHABLE', 'rejected'],
    [131030, undefined, 'RECIPIENT_UNREACHABLE', 'rejected'],
    [131049, undefined, 'RECIPIENT_UNREACHABLE', 'rejected'],
    [131050, 400, 'RECIPIENT_UNREACHABLE', 'rejected'],
    [131047, undefined, 'OUTSIDE_SERVICE_WINDOW', 'rejected'],
    [132000, undefined, 'TEMPLATE_NOT_USABLE', 'rejected'],
    [132001, undefined, 'TEMPLATE_NOT_USABLE', 'rejected'],
    [132005, undefined, 'TEMPLATE_NOT_USABLE', 'rejected'],
    [132007, undefined, 'TEMPLATE_NOT_USABLE', 'rejected'],
    [132012, undefined, 'TEMPLATE_NOT_USABLE', 'rejected'],
    [132015, undefined, 'TEMPLATE_NOT_USABLE', 'rejected'],
    [132016, undefined, 'TEMPLATE_NOT_USABLE', 'rejected'],
    [131051, undefined, 'MESSAGE_NOT_SUPPORTED', 'rejected'],
    [100, undefined, 'MESSAGE_NOT_SUPPORTED', 'rejected'],
    [368, undefined, 'ACCOUNT_RESTRICTED', 'rejected'],
    [131031, undefined, 'ACCOUNT_RESTRICTED', 'rejected'],
    [4, undefined, 'PROVIDER_THROTTLED', 'retry'],
    [80007, undefined, 'PROVIDER_THROTTLED', 'retry'],
    [130429, undefined, 'PROVIDER_THROTTLED', 'retry'],
    [131056, undefined, 'PROVIDER_THROTTLED', 'retry'],
    [1, undefined, 'PROVIDER_UNAVAILABLE', 'retry'],
    [2, undefined, 'PROVIDER_UNAVAILABLE', 'retry'],
    [131000, undefined, 'PROVIDER_UNAVAILABLE', 'retry'],
    [131016, undefined, 'PROVIDER_UNAVAILABLE', 'retry'],
    // Codes the table does not know fall back on the HTTP status.
    [999_001, 400, 'PROVIDER_REJECTED', 'rejected'],
    [999_002, 401, 'CHANNEL_UNAUTHORIZED', 'rejected'],
    [999_003, 429, 'PROVIDER_THROTTLED', 'retry'],
    [999_004, 502, 'PROVIDER_UNAVAILABLE', 'retry'],
  ];

  it.each(table)('Meta %i (HTTP %s) → %s, %s', async (metaCode, status, code, kind) => {
    fake.failNext(graphError(metaCode, { status, details: 'why' }));
    const outcome = await adapterFor(business).send(hello);
    expect(outcome.kind).toBe(kind);
    expect(outcome.kind !== 'accepted' && outcome.error.code).toBe(code);
    expect(outcome.kind !== 'accepted' && outcome.error.providerCode).toBe(metaCode);
    expect(outcome.kind !== 'accepted' && outcome.error.message.endsWith(': why')).toBe(true);
    expect(outcome).not.toHaveProperty('retryAfterSeconds');
  });

  it("keeps Meta's message and details", async () => {
    fake.failNext(graphError(131026, { details: 'Message Undeliverable.' }));
    expect(await adapterFor(business).send(hello)).toStrictEqual({
      kind: 'rejected',
      error: {
        code: 'RECIPIENT_UNREACHABLE',
        message: '(#131026) Message Undeliverable.',
        providerCode: 131026,
      },
    });
    fake.failNext(
      graphError(131047, { details: 'More than 24 hours have passed since the recipient last replied' }),
    );
    expect(await adapterFor(business).send(hello)).toStrictEqual({
      kind: 'rejected',
      error: {
        code: 'OUTSIDE_SERVICE_WINDOW',
        message:
          '(#131047) Re-engagement message: More than 24 hours have passed since the recipient last replied',
        providerCode: 131047,
      },
    });
  });

  it('HTTP 500 without a Graph body: PROVIDER_UNAVAILABLE, retry', async () => {
    fake.failNext({ status: 500, body: '<html>Internal Server Error</html>' });
    expect(await adapterFor(business).send(hello)).toStrictEqual({
      kind: 'retry',
      error: {
        code: 'PROVIDER_UNAVAILABLE',
        message: 'the WhatsApp Cloud API answered HTTP 500',
        providerCode: null,
      },
    });
  });

  it('HTTP 429 with Retry-After: PROVIDER_THROTTLED, retry after that many seconds', async () => {
    fake.failNext(graphError(130429, { status: 429, headers: { 'retry-after': '17' } }));
    expect(await adapterFor(business).send(hello)).toStrictEqual({
      kind: 'retry',
      error: { code: 'PROVIDER_THROTTLED', message: '(#130429) Rate limit hit', providerCode: 130429 },
      retryAfterSeconds: 17,
    });
    fake.failNext({ status: 429, body: '' });
    expect(await adapterFor(business).send(hello)).toStrictEqual({
      kind: 'retry',
      error: {
        code: 'PROVIDER_THROTTLED',
        message: 'the WhatsApp Cloud API answered HTTP 429',
        providerCode: null,
      },
    });
  });

  it('no answer within timeoutMs: in doubt (the request went out; Meta may have the message)', async () => {
    fake.failNext({ status: 200, hang: true });
    const started = Date.now();
    const outcome = await adapterFor(business, { timeoutMs: 300 }).send(hello);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(outcome).toStrictEqual({
      kind: 'in_doubt',
      error: {
        code: 'PROVIDER_UNAVAILABLE',
        message: 'the WhatsApp Cloud API could not be reached: timed out after 300 ms',
        providerCode: null,
      },
    });
  });

  it('a body that stalls after the headers times out too: in doubt', async () => {
    const stalling: Server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"messaging_product":"whatsapp",');
    });
    stalling.listen(0, '127.0.0.1');
    await once(stalling, 'listening');
    try {
      const { port } = stalling.address() as AddressInfo;
      const started = Date.now();
      const outcome = await adapterFor(business, {
        graphUrl: `http://127.0.0.1:${port}/v21.0`,
        timeoutMs: 300,
      }).send(hello);
      expect(Date.now() - started).toBeLessThan(3_000);
      expect(outcome).toStrictEqual({
        kind: 'in_doubt',
        error: {
          code: 'PROVIDER_UNAVAILABLE',
          message: 'the WhatsApp Cloud API could not be reached: timed out after 300 ms',
          providerCode: null,
        },
      });
    } finally {
      stalling.closeAllConnections();
      stalling.close();
    }
  });

  it('connection refused: PROVIDER_UNAVAILABLE, retry (the request never left)', async () => {
    const port = await closedPort();
    const outcome = await adapterFor(business, { graphUrl: `http://127.0.0.1:${port}/v21.0` }).send(hello);
    expect(outcome.kind).toBe('retry');
    expect(outcome.kind === 'retry' && outcome.error.code).toBe('PROVIDER_UNAVAILABLE');
    expect(outcome.kind === 'retry' && outcome.error.providerCode).toBe(null);
    expect(outcome.kind === 'retry' && outcome.error.message).toMatch(
      /^the WhatsApp Cloud API could not be reached: ECONNREFUSED/,
    );
  });

  it('a success without a message id is not taken as accepted, nor sent again blindly: in doubt', async () => {
    fake.failNext({ status: 200, body: { messaging_product: 'whatsapp', messages: [] } });
    expect(await adapterFor(business).send(hello)).toStrictEqual({
      kind: 'in_doubt',
      error: {
        code: 'PROVIDER_UNAVAILABLE',
        message: 'the WhatsApp Cloud API answered HTTP 200 without a message id',
        providerCode: null,
      },
    });
  });

  it('reads at most 64 KiB of an answer: a longer Graph error is classified by its status alone', async () => {
    fake.failNext({
      status: 400,
      body: JSON.stringify({ error: { code: 131056, message: `(#131056) ${'x'.repeat(100_000)}` } }),
    });
    expect(await adapterFor(business).send(hello)).toStrictEqual({
      kind: 'rejected',
      error: {
        code: 'PROVIDER_REJECTED',
        message: 'the WhatsApp Cloud API answered HTTP 400',
        providerCode: null,
      },
    });
  });

  it("trims Meta's message to 500 characters", async () => {
    fake.failNext(graphError(131026, { message: 'y'.repeat(2_000) }));
    const outcome = await adapterFor(business).send(hello);
    expect(outcome.kind === 'rejected' && outcome.error.message.length).toBe(500);
  });

  it('never lets the access token into an outcome', async () => {
    const token = business.accessToken;
    const outcomes = [];
    fake.failNext(
      graphError(190, { message: `Error validating access token ${token}`, details: `token=${token}` }),
    );
    outcomes.push(await adapterFor(business).send(hello));
    outcomes.push(await adapterFor(business, { accessToken: `${token}x` }).send(hello));
    fake.failNext(graphError(131000, { status: 500, message: `boom ${token}` }));
    outcomes.push(await adapterFor(business).send(hello));
    fake.respond = (req) =>
      req.path.endsWith('/message_templates') ? graphError(100, { userMessage: token }) : undefined;
    try {
      outcomes.push(
        await adapterFor(business).submitTemplate({
          name: 'x',
          language: 'en',
          category: 'UTILITY',
          components: [{ type: 'BODY', text: 'x' }],
        }),
      );
    } finally {
      fake.respond = undefined;
    }
    outcomes.push(await adapterFor(business, { accessToken: `${token}x` }).fetchPhoneNumber());
    expect(outcomes.map((o) => ('kind' in o ? o.kind : o.ok))).toStrictEqual([
      'rejected',
      'rejected',
      'retry',
      'rejected',
      false,
    ]);
    expect(outcomes[0]).toStrictEqual({
      kind: 'rejected',
      error: {
        code: 'CHANNEL_UNAUTHORIZED',
        message: 'Error validating access token [redacted]: token=[redacted]',
        providerCode: 190,
      },
    });
    for (const outcome of outcomes) expect(JSON.stringify(outcome)).not.toContain(token);
  });
});

describe('submitTemplate', () => {
  const definition: TemplateDefinition = {
    name: 'appointment_reminder',
    language: 'en_US',
    category: 'UTILITY',
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Reminder for {{1}}', example: { header_text: ['Ann'] } },
      { type: 'BODY', text: 'See you on {{1}} at {{2}}.', example: { body_text: [['Monday', '10:00']] } },
      { type: 'FOOTER', text: 'Reply STOP to opt out' },
      { type: 'BUTTONS', buttons: [{ type: 'QUICK_REPLY', text: 'Confirm' }] },
    ],
  };

  it('POSTs Meta component JSON to /{waba-id}/message_templates and comes back PENDING', async () => {
    const submitter = fake.createBusiness();
    const outcome = await adapterFor(submitter).submitTemplate(definition);
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe(`/v21.0/${submitter.businessAccountId}/message_templates`);
    expect(req.headers.authorization).toBe(`Bearer ${submitter.accessToken}`);
    expect(req.body).toStrictEqual({
      name: 'appointment_reminder',
      language: 'en_US',
      category: 'UTILITY',
      components: definition.components,
    });
    const stored = [...fake.templates.values()].find(
      (t) => t.businessAccountId === submitter.businessAccountId,
    )!;
    expect(stored.status).toBe('PENDING');
    expect(outcome).toStrictEqual({ kind: 'submitted', providerTemplateId: stored.id, status: 'PENDING' });

    // Until the fake approves it, Meta does not know it for sending; then it does.
    const send = (parameters: string[]) =>
      adapterFor(submitter).send(message({ type: 'template', template: { ...definition, parameters } }));
    expect((await send(['Ann', 'Monday', '10:00'])).kind).toBe('rejected');
    fake.approveTemplate(stored.id);
    expect((await send(['Ann', 'Monday', '10:00'])).kind).toBe('accepted');
  });

  it('Meta deciding at once: APPROVED', async () => {
    const submitter = fake.createBusiness();
    fake.autoApprove = true;
    try {
      const outcome = await adapterFor(submitter).submitTemplate(definition);
      expect(outcome.kind === 'submitted' && outcome.status).toBe('APPROVED');
    } finally {
      fake.autoApprove = false;
    }
  });

  it('a submission Meta refuses is rejected with its explanation', async () => {
    const submitter = fake.createBusiness();
    expect(await adapterFor(submitter).submitTemplate({ ...definition, name: 'Bad Name' })).toStrictEqual({
      kind: 'rejected',
      error: {
        code: 'MESSAGE_NOT_SUPPORTED',
        message:
          'Invalid parameter: Template name can only contain lowercase alphanumeric characters and underscores',
        providerCode: 100,
      },
    });
    expect((await adapterFor(submitter).submitTemplate(definition)).kind).toBe('submitted');
    const again = await adapterFor(submitter).submitTemplate(definition);
    expect(again.kind === 'rejected' && again.error.message).toBe(
      'Invalid parameter: Content in this language already exists',
    );
  });

  it('bad token: rejected CHANNEL_UNAUTHORIZED; Meta down: retry', async () => {
    const unauthorized = await adapterFor(business, { accessToken: 'nope' }).submitTemplate(definition);
    expect(unauthorized.kind === 'rejected' && unauthorized.error.code).toBe('CHANNEL_UNAUTHORIZED');
    fake.respond = (req) => (req.path.endsWith('/message_templates') ? graphError(2) : undefined);
    try {
      expect(await adapterFor(business).submitTemplate(definition)).toStrictEqual({
        kind: 'retry',
        error: {
          code: 'PROVIDER_UNAVAILABLE',
          message: '(#2) Service temporarily unavailable',
          providerCode: 2,
        },
      });
    } finally {
      fake.respond = undefined;
    }
  });
});

describe('fetchPhoneNumber', () => {
  it('good credentials: the display number, verified name, throughput, messaging limit tier and quality rating', async () => {
    const result = await adapterFor(business).fetchPhoneNumber();
    const req = fake.requests.at(-1)!;
    expect(req.method).toBe('GET');
    expect(req.path).toBe(
      `/v21.0/${business.phoneNumberId}?fields=display_phone_number,verified_name,throughput,messaging_limit_tier,quality_rating`,
    );
    expect(req.headers.authorization).toBe(`Bearer ${business.accessToken}`);
    expect(result).toStrictEqual({
      ok: true,
      displayPhoneNumber: business.displayPhoneNumber,
      verifiedName: business.verifiedName,
      throughputLevel: 'STANDARD',
      messagingLimitTier: 'TIER_1K',
      qualityRating: 'GREEN',
    });
  });

  it('a bad token: not ok, not retryable', async () => {
    expect(await adapterFor(business, { accessToken: 'EAAexpired' }).fetchPhoneNumber()).toStrictEqual({
      ok: false,
      error: {
        code: 'CHANNEL_UNAUTHORIZED',
        message: 'Invalid OAuth access token - Cannot parse access token',
        providerCode: 190,
      },
      retryable: false,
    });
  });

  it('Meta unreachable: not ok, retryable', async () => {
    const port = await closedPort();
    const result = await adapterFor(business, {
      graphUrl: `http://127.0.0.1:${port}/v21.0`,
    }).fetchPhoneNumber();
    expect(result.ok).toBe(false);
    expect(!result.ok && result.retryable).toBe(true);
    expect(!result.ok && result.error.code).toBe('PROVIDER_UNAVAILABLE');
  });
});

describe('callback signatures', () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await Receiver.start(() => ({ status: 200 }));
  });
  afterAll(() => receiver.close());

  /** What Meta's POST looked like on arrival: the raw body and its signature header. */
  async function arrival(signature: 'valid' | 'wrong' | 'missing' = 'valid') {
    const n = receiver.received.length;
    await fake.postStatus(
      receiver.url(),
      business,
      { wamid: 'wamid.ABC', status: 'delivered', recipientId: TO, timestamp: 1_700_000_000 },
      { signature },
    );
    const [received] = (await receiver.waitFor(n + 1)).slice(n);
    const header = received!.headers['x-hub-signature-256'];
    return {
      raw: Buffer.from(received!.body, 'utf8'),
      header: typeof header === 'string' ? header : undefined,
    };
  }

  it('accepts the signature Meta sends', async () => {
    const { raw, header } = await arrival();
    expect(header).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifyCallbackSignature(raw, header, business.appSecret)).toBe(true);
    const upperHex = `sha256=${header!.slice('sha256='.length).toUpperCase()}`;
    expect(verifyCallbackSignature(raw, upperHex, business.appSecret)).toBe(true);
  });

  it('refuses another secret, a tampered body, a missing or malformed header', async () => {
    const wrong = await arrival('wrong');
    expect(verifyCallbackSignature(wrong.raw, wrong.header, business.appSecret)).toBe(false);

    const { raw, header } = await arrival();
    expect(verifyCallbackSignature(raw, header, 'another-secret')).toBe(false);
    const tampered = Buffer.from(raw.toString('utf8').replace('delivered', 'read'));
    expect(verifyCallbackSignature(tampered, header, business.appSecret)).toBe(false);

    const missing = await arrival('missing');
    expect(missing.header).toBe(undefined);
    expect(verifyCallbackSignature(missing.raw, missing.header, business.appSecret)).toBe(false);

    const hex = header!.slice('sha256='.length);
    for (const malformed of [
      '',
      'sha256=',
      hex,
      `sha1=${hex}`,
      `sha256=${hex.slice(2)}`,
      `sha256=${'z'.repeat(64)}`,
      `sha256=${hex}00`,
    ]) {
      expect(verifyCallbackSignature(raw, malformed, business.appSecret)).toBe(false);
    }
    expect(verifyCallbackSignature(raw, header, '')).toBe(false);
  });
});

describe('the webhook handshake and callbacks end to end', () => {
  // A stand-in for Tidings' callback route: the handshake on GET, verify-then-parse on POST.
  let endpoint: Server;
  let url: string;
  const parsed: ProviderUpdate[][] = [];

  beforeAll(async () => {
    endpoint = createServer((req, res) => {
      const query = Object.fromEntries(new URL(req.url ?? '/', 'http://x').searchParams);
      if (req.method === 'GET') {
        const challenge = verifyHandshake(query, business.verifyToken);
        res.writeHead(challenge === null ? 403 : 200, { 'content-type': 'text/plain' });
        res.end(challenge ?? 'forbidden');
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const header = req.headers['x-hub-signature-256'];
        if (
          !verifyCallbackSignature(raw, typeof header === 'string' ? header : undefined, business.appSecret)
        ) {
          res.writeHead(401).end('bad signature');
          return;
        }
        parsed.push(parseCallback(readCallbackBody(raw)));
        res.writeHead(200).end('EVENT_RECEIVED');
      });
    });
    endpoint.listen(0, '127.0.0.1');
    await once(endpoint, 'listening');
    url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/callbacks/whatsapp`;
  });

  afterAll(() => {
    endpoint.closeAllConnections();
    endpoint.close();
  });

  it('the GET verification: the challenge back for the right token, 403 otherwise', async () => {
    expect(
      await fake.handshake(url, { verifyToken: business.verifyToken, challenge: '1158201444' }),
    ).toStrictEqual({
      status: 200,
      text: '1158201444',
    });
    expect(await fake.handshake(url, { verifyToken: 'wrong', challenge: '1' })).toStrictEqual({
      status: 403,
      text: 'forbidden',
    });
    expect(
      await fake.handshake(url, { verifyToken: business.verifyToken, challenge: '1', mode: 'unsubscribe' }),
    ).toStrictEqual({ status: 403, text: 'forbidden' });
  });

  it('verifyHandshake refuses what a query string can do to it', () => {
    const token = business.verifyToken;
    expect(
      verifyHandshake({ 'hub.mode': 'subscribe', 'hub.verify_token': token, 'hub.challenge': 'c' }, token),
    ).toBe('c');
    expect(
      verifyHandshake({ 'hub.mode': 'subscribe', 'hub.verify_token': [token], 'hub.challenge': 'c' }, token),
    ).toBe(null);
    expect(verifyHandshake({ 'hub.mode': 'subscribe', 'hub.verify_token': token }, token)).toBe(null);
    expect(
      verifyHandshake({ 'hub.mode': 'subscribe', 'hub.verify_token': '', 'hub.challenge': 'c' }, ''),
    ).toBe(null);
    expect(verifyHandshake({}, token)).toBe(null);
  });

  it('signed status, template and inbound callbacks are answered 200 and parsed; unsigned ones 401', async () => {
    const status = await fake.postStatus(url, business, {
      wamid: 'wamid.S1',
      status: 'read',
      recipientId: TO,
      timestamp: 1_700_000_123,
    });
    expect(status).toStrictEqual({ status: 200, body: 'EVENT_RECEIVED' });
    expect(parsed.at(-1)).toMatchObject([
      {
        kind: 'message_status',
        providerMessageId: 'wamid.S1',
        status: 'read',
        at: new Date(1_700_000_123_000),
        pricing: { billable: true, model: 'PMP', category: 'utility', type: 'regular' },
        conversation: { origin: 'utility', expiresAt: null },
      },
    ]);

    const template = fake.addTemplate(business, { name: 'promo', language: 'en', components: [] }, 'PENDING');
    expect(
      await fake.postTemplateStatus(url, business, {
        templateId: template.id,
        name: 'promo',
        language: 'en',
        event: 'REJECTED',
        reason: 'INCORRECT_CATEGORY',
      }),
    ).toStrictEqual({ status: 200, body: 'EVENT_RECEIVED' });
    expect(parsed.at(-1)).toStrictEqual([
      {
        kind: 'template_status',
        providerTemplateId: template.id,
        name: 'promo',
        language: 'en',
        event: 'REJECTED',
        reason: 'INCORRECT_CATEGORY',
      },
    ]);
    expect(fake.templates.get(template.id)!.status).toBe('REJECTED');

    expect((await fake.postInbound(url, business, { from: TO, text: 'hi' })).status).toBe(200);
    expect(parsed.at(-1)![0]!.kind).toBe('inbound_message');

    const count = parsed.length;
    const wrong = await fake.postStatus(
      url,
      business,
      { wamid: 'w', status: 'sent', recipientId: TO },
      { signature: 'wrong' },
    );
    const missing = await fake.postStatus(
      url,
      business,
      { wamid: 'w', status: 'sent', recipientId: TO },
      { signature: 'missing' },
    );
    expect([wrong, missing]).toStrictEqual([
      { status: 401, body: 'bad signature' },
      { status: 401, body: 'bad signature' },
    ]);
    expect(parsed.length).toBe(count);
  });
});

describe('parseCallback', () => {
  const AT = 1_749_416_383;
  /** What Meta's statuses (as the fake writes them) report beside the status: pricing, conversation. */
  const reportsOf = (payload: any, status: string) => {
    const conversation = payload.entry[0].changes[0].value.statuses[0].conversation;
    return {
      pricing: { billable: true, model: 'PMP', category: 'utility', type: 'regular' },
      conversation: {
        id: conversation.id,
        origin: 'utility',
        expiresAt: status === 'sent' ? new Date((AT + 86_400) * 1000) : null,
      },
    };
  };

  it('sent, delivered and read statuses, with what Meta bills and the conversation it counts', () => {
    for (const status of ['sent', 'delivered', 'read'] as const) {
      const payload = fake.statusPayload(business, {
        wamid: `wamid.${status}`,
        status,
        recipientId: TO,
        timestamp: AT,
      });
      expect(parseCallback(payload)).toStrictEqual([
        {
          kind: 'message_status',
          providerMessageId: `wamid.${status}`,
          status,
          at: new Date(AT * 1000),
          recipientWaId: TO.slice(1),
          ...reportsOf(payload, status),
        },
      ]);
    }
  });

  it("pricing says what Meta bills: billable where given, else read from per-message pricing's type", () => {
    const pricingOf = (pricing: Record<string, unknown>) => {
      const payload: any = fake.statusPayload(business, {
        wamid: 'wamid.P',
        status: 'delivered',
        recipientId: TO,
        timestamp: AT,
      });
      payload.entry[0].changes[0].value.statuses[0].pricing = pricing;
      const [update] = parseCallback(payload);
      return update?.kind === 'message_status' ? update.pricing : undefined;
    };
    expect(
      pricingOf({ pricing_model: 'PMP', category: 'utility', type: 'free_customer_service' }),
    ).toStrictEqual({
      billable: false,
      model: 'PMP',
      category: 'utility',
      type: 'free_customer_service',
    });
    expect(pricingOf({ pricing_model: 'PMP', category: 'marketing', type: 'regular' })?.billable).toBe(true);
    expect(pricingOf({ pricing_model: 'PMP', category: 'service', type: 'free_entry_point' })?.billable).toBe(
      false,
    );
    // Conversation-based pricing had only `billable`; where both are given it is Meta's own answer.
    expect(
      pricingOf({ billable: false, pricing_model: 'CBP', category: 'referral_conversion' }),
    ).toStrictEqual({
      billable: false,
      model: 'CBP',
      category: 'referral_conversion',
      type: null,
    });
    expect(pricingOf({ pricing_model: 'PMP' })?.billable).toBe(null);
  });

  it('a status names our message when Meta echoes its id (biz_opaque_callback_data), and only then', () => {
    const ours = 'msg_01jz5r8k2m4n6p8q0s2t4v6w8y';
    const payloadOf = (opaque: string) =>
      fake.statusPayload(business, {
        wamid: 'wamid.X',
        status: 'sent',
        recipientId: TO,
        timestamp: AT,
        bizOpaqueCallbackData: opaque,
      });
    const parsed = (opaque: string) => parseCallback(payloadOf(opaque));
    const payload = payloadOf(ours);
    expect(parseCallback(payload)).toStrictEqual([
      {
        kind: 'message_status',
        providerMessageId: 'wamid.X',
        messageId: ours,
        status: 'sent',
        at: new Date(AT * 1000),
        recipientWaId: TO.slice(1),
        ...reportsOf(payload, 'sent'),
      },
    ]);
    // Not one of our ids (another app's tracking string, or a mangled one): found by Meta's id alone.
    for (const other of ['order-42', `${ours}x`, 'msg_', 'con_01jz5r8k2m4n6p8q0s2t4v6w8y']) {
      expect(parsed(other)[0]).not.toHaveProperty('messageId');
    }
  });

  it('a failed status carries its first error, classified like a send error', () => {
    const failed = (errors?: { code: number; title: string; details?: string }[]) =>
      parseCallback(
        fake.statusPayload(business, {
          wamid: 'wamid.F',
          status: 'failed',
          recipientId: TO,
          timestamp: AT,
          errors,
        }),
      );
    expect(
      failed([
        { code: 131026, title: 'Message undeliverable', details: 'Message Undeliverable.' },
        { code: 131000, title: 'Something went wrong' },
      ]),
    ).toStrictEqual([
      {
        kind: 'message_status',
        providerMessageId: 'wamid.F',
        status: 'failed',
        at: new Date(AT * 1000),
        recipientWaId: TO.slice(1),
        error: {
          code: 'RECIPIENT_UNREACHABLE',
          message: 'Message undeliverable: Message Undeliverable.',
          providerCode: 131026,
        },
      },
    ]);
    const codeOf = (errors: { code: number; title: string }[]) => {
      const [update] = failed(errors);
      return update?.kind === 'message_status' ? update.error : undefined;
    };
    expect(codeOf([{ code: 131047, title: 'Re-engagement message' }])).toStrictEqual({
      code: 'OUTSIDE_SERVICE_WINDOW',
      message: 'Re-engagement message',
      providerCode: 131047,
    });
    expect(codeOf([{ code: 132015, title: 'Template is Paused' }])?.code).toBe('TEMPLATE_NOT_USABLE');
    // A code Tidings does not classify: the recipient was not reached, with Meta's code and title.
    expect(codeOf([{ code: 135999, title: 'Something new' }])).toStrictEqual({
      code: 'RECIPIENT_UNREACHABLE',
      message: 'Something new',
      providerCode: 135999,
    });

    const bare = fake.statusPayload(business, {
      wamid: 'wamid.G',
      status: 'failed',
      recipientId: TO,
      timestamp: AT,
    });
    (bare.entry[0]!.changes[0]!.value as any).statuses[0].errors = undefined;
    expect(parseCallback(bare)).toStrictEqual([
      {
        kind: 'message_status',
        providerMessageId: 'wamid.G',
        status: 'failed',
        at: new Date(AT * 1000),
        recipientWaId: TO.slice(1),
        error: {
          code: 'RECIPIENT_UNREACHABLE',
          message: 'Meta reported the message failed without an error',
          providerCode: null,
        },
      },
    ]);
  });

  it('several statuses and entries in one payload, in order', () => {
    const a = fake.statusPayload(business, {
      wamid: 'wamid.A',
      status: 'sent',
      recipientId: TO,
      timestamp: AT,
    });
    const b = fake.statusPayload(business, {
      wamid: 'wamid.B',
      status: 'delivered',
      recipientId: TO,
      timestamp: AT + 1,
    });
    const value = a.entry[0]!.changes[0]!.value as any;
    value.statuses.push({ ...value.statuses[0], id: 'wamid.A2', status: 'read', timestamp: String(AT + 2) });
    const payload = { ...a, entry: [...a.entry, ...b.entry] };
    expect(
      parseCallback(payload).map((u) =>
        u.kind === 'message_status' ? [u.providerMessageId, u.status] : u.kind,
      ),
    ).toStrictEqual([
      ['wamid.A', 'sent'],
      ['wamid.A2', 'read'],
      ['wamid.B', 'delivered'],
    ]);
  });

  it('template status events; the others are unknown', () => {
    const update = (event: string, reason?: string) =>
      parseCallback(
        readCallbackBody(
          fake.templateStatusPayload(business, {
            templateId: '1627019861106475',
            name: 'promo',
            language: 'en_US',
            event,
            reason,
          }),
        ),
      );
    expect(update('APPROVED')).toStrictEqual([
      {
        kind: 'template_status',
        providerTemplateId: '1627019861106475',
        name: 'promo',
        language: 'en_US',
        event: 'APPROVED',
        reason: null,
      },
    ]);
    expect(update('REJECTED', 'INVALID_FORMAT')[0]).toMatchObject({
      event: 'REJECTED',
      reason: 'INVALID_FORMAT',
    });
    for (const event of ['PAUSED', 'DISABLED', 'REINSTATED'])
      expect(update(event)[0]).toMatchObject({ kind: 'template_status', event });
    for (const event of ['FLAGGED', 'PENDING_DELETION', 'ARCHIVED', 'PENDING']) {
      expect(update(event)).toStrictEqual([
        {
          kind: 'unknown',
          field: 'message_template_status_update',
          raw: {
            event,
            message_template_id: 1627019861106475,
            message_template_name: 'promo',
            message_template_language: 'en_US',
            reason: 'NONE',
          },
        },
      ]);
    }
  });

  it('a template id past 2^53 keeps its digits through readCallbackBody', () => {
    const text = fake.templateStatusPayload(business, {
      templateId: '18014398509481985',
      name: 'big',
      language: 'en',
      event: 'APPROVED',
    });
    expect(text).toContain('"message_template_id":18014398509481985');
    expect(String((JSON.parse(text) as any).entry[0].changes[0].value.message_template_id)).not.toBe(
      '18014398509481985',
    );
    const [update] = parseCallback(readCallbackBody(text));
    expect(update?.kind === 'template_status' && update.providerTemplateId).toBe('18014398509481985');
  });

  it("an inbound message comes parsed, with its sender's profile name", () => {
    const payload = fake.inboundPayload(business, {
      from: '+16505551234',
      name: 'Sheena',
      text: 'Another colour?',
      timestamp: AT,
    });
    const value = payload.entry[0]!.changes[0]!.value as any;
    expect(parseCallback(payload)).toStrictEqual([
      {
        kind: 'inbound_message',
        message: {
          providerMessageId: value.messages[0].id,
          from: '+16505551234',
          waId: '16505551234',
          profileName: 'Sheena',
          sentAt: new Date(AT * 1000),
          type: 'text',
          content: { text: { body: 'Another colour?' } },
          replyTo: null,
        },
      },
    ]);
    expect(value.messages[0]).toMatchObject({
      from: '16505551234',
      timestamp: String(AT),
      type: 'text',
      text: { body: 'Another colour?' },
    });
  });

  it('the account signals: quality, account updates, errors, marketing preferences, played', () => {
    const time = 1767225600;
    const payload = {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: business.businessAccountId,
          time,
          changes: [
            {
              field: 'account_update',
              value: {
                phone_number: '15550001111',
                event: 'ACCOUNT_VIOLATION',
                violation_info: { violation_type: 'SCAM' },
              },
            },
            {
              field: 'phone_number_quality_update',
              value: {
                display_phone_number: '15550001111',
                event: 'DOWNGRADE',
                old_limit: 'TIER_10K',
                current_limit: 'TIER_1K',
              },
            },
            {
              field: 'errors',
              value: {
                errors: [
                  {
                    code: 131042,
                    title: 'Payment issue',
                    message: 'Payment issue',
                    error_data: { details: 'Card declined' },
                  },
                ],
              },
            },
            {
              field: 'user_preferences',
              value: {
                metadata: { phone_number_id: business.phoneNumberId },
                user_preferences: [
                  {
                    wa_id: '15550002222',
                    category: 'marketing_messages',
                    value: 'stop',
                    detail: 'stop',
                    timestamp: time,
                  },
                  { wa_id: '15550002222', category: 'marketing_messages', value: 'maybe', timestamp: time },
                ],
              },
            },
            {
              field: 'messages',
              value: {
                metadata: { phone_number_id: business.phoneNumberId },
                statuses: [
                  { id: 'wamid.A', status: 'played', timestamp: String(time), recipient_id: '15550002222' },
                ],
              },
            },
          ],
        },
      ],
    };
    const at = new Date(time * 1000);
    expect(parseCallback(payload)).toStrictEqual([
      {
        kind: 'account_update',
        signal: {
          event: 'ACCOUNT_VIOLATION',
          phoneNumber: '15550001111',
          details: { violation_info: { violation_type: 'SCAM' } },
          at,
        },
      },
      {
        kind: 'number_quality',
        signal: {
          displayPhoneNumber: '15550001111',
          event: 'DOWNGRADE',
          currentLimit: 'TIER_1K',
          previousLimit: 'TIER_10K',
          maxDailyConversations: null,
          at,
        },
      },
      {
        kind: 'channel_error',
        error: {
          providerCode: 131042,
          title: 'Payment issue',
          message: 'Payment issue',
          details: 'Card declined',
          at,
        },
      },
      {
        kind: 'marketing_preference',
        waId: '15550002222',
        userId: null,
        parentUserId: null,
        stopped: true,
        at,
        detail: 'stop',
      },
      {
        kind: 'unknown',
        field: 'user_preferences',
        raw: { wa_id: '15550002222', category: 'marketing_messages', value: 'maybe', timestamp: time },
      },
      { kind: 'message_played', providerMessageId: 'wamid.A', at },
    ]);
  });

  it('other fields are unknown, with their name and value', () => {
    const payload = {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: business.businessAccountId,
          changes: [
            { field: 'security', value: { event: 'PIN_CHANGED' } },
            { field: 'account_update', value: { ban_info: {} } },
            { field: 'messages', value: { messaging_product: 'whatsapp', errors: [{ code: 131000 }] } },
          ],
        },
      ],
    };
    expect(parseCallback(payload)).toStrictEqual([
      { kind: 'unknown', field: 'security', raw: { event: 'PIN_CHANGED' } },
      { kind: 'unknown', field: 'account_update', raw: { ban_info: {} } },
      {
        kind: 'unknown',
        field: 'messages',
        raw: { messaging_product: 'whatsapp', errors: [{ code: 131000 }] },
      },
    ]);
  });

  it('garbage never throws: nothing, or unknown', () => {
    for (const garbage of [null, undefined, 42, 'text', [], [1, 2], true])
      expect(parseCallback(garbage)).toStrictEqual([]);
    expect(parseCallback({})).toStrictEqual([{ kind: 'unknown', field: '', raw: {} }]);
    expect(parseCallback({ object: 'page', entry: [] })).toStrictEqual([
      { kind: 'unknown', field: 'page', raw: { object: 'page', entry: [] } },
    ]);
    const waba = (entry: unknown) => ({ object: 'whatsapp_business_account', entry });
    expect(parseCallback(waba('x'))).toStrictEqual([
      { kind: 'unknown', field: 'whatsapp_business_account', raw: waba('x') },
    ]);
    expect(parseCallback(waba([null, 5, 'x', { changes: 'x' }, { changes: [null, 7] }]))).toStrictEqual([]);
    expect(
      parseCallback(
        waba([{ changes: [{ field: 'messages', value: null }, { value: { a: 1 } }, { field: 9 }] }]),
      ),
    ).toStrictEqual([
      { kind: 'unknown', field: 'messages', raw: null },
      { kind: 'unknown', field: '', raw: { a: 1 } },
      { kind: 'unknown', field: '', raw: null },
    ]);
    const statuses = [
      null,
      {},
      { id: 'wamid.X', status: 'deleted', timestamp: '1' },
      { id: 'wamid.X', status: 'sent', timestamp: 'soon' },
      { id: 'wamid.X', status: 'sent' },
      { id: 42, status: 'sent', timestamp: '1' },
      { id: 'wamid.X', status: 'failed', timestamp: '1', errors: 'bad' },
    ];
    const updates = parseCallback(waba([{ changes: [{ field: 'messages', value: { statuses } }] }]));
    expect(updates.slice(0, 6)).toStrictEqual(
      statuses.slice(0, 6).map((raw) => ({ kind: 'unknown', field: 'messages', raw })),
    );
    expect(updates[6]).toStrictEqual({
      kind: 'message_status',
      providerMessageId: 'wamid.X',
      status: 'failed',
      at: new Date(1000),
      error: {
        code: 'RECIPIENT_UNREACHABLE',
        message: 'Meta reported the message failed without an error',
        providerCode: null,
      },
    });
    expect(
      parseCallback(
        waba([
          {
            changes: [
              {
                field: 'message_template_status_update',
                value: { event: 'APPROVED', message_template_id: {} },
              },
            ],
          },
        ]),
      ),
    ).toStrictEqual([
      {
        kind: 'unknown',
        field: 'message_template_status_update',
        raw: { event: 'APPROVED', message_template_id: {} },
      },
    ]);
    expect(() => readCallbackBody('{not json')).toThrow();
  });
});

describe('the fake is as strict as Meta', () => {
  async function post(path: string, body: unknown, token = business.accessToken) {
    const res = await request(`${fake.graphUrl}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.statusCode, body: (await res.body.json()) as any };
  }
  const base = { messaging_product: 'whatsapp', to: TO };

  it('refuses malformed messages with Graph error bodies', async () => {
    const path = `/${business.phoneNumberId}/messages`;
    const cases: [unknown, number, number][] = [
      [{ to: TO, type: 'text', text: { body: 'x' } }, 400, 100],
      [{ ...base, type: 'fax', fax: {} }, 400, 100],
      [{ ...base, type: 'text' }, 400, 131008],
      [{ ...base, type: 'audio', audio: { link: 'https://a.example/a.ogg', caption: 'no' } }, 400, 131009],
      [
        {
          ...base,
          type: 'interactive',
          interactive: {
            type: 'button',
            body: { text: 'x' },
            action: {
              buttons: [1, 2, 3, 4].map((i) => ({ type: 'reply', reply: { id: `${i}`, title: `${i}` } })),
            },
          },
        },
        400,
        131009,
      ],
    ];
    for (const [body, status, code] of cases) {
      const answer = await post(path, body);
      expect(answer.status).toBe(status);
      expect(answer.body.error.code).toBe(code);
      expect(answer.body.error.type).toBe('OAuthException');
      expect(answer.body.error.fbtrace_id).toMatch(/^A/);
    }
    const sent = fake.sent.length;
    expect((await post(path, { ...base, type: 'text', text: { body: 'ok' } })).body).toStrictEqual({
      messaging_product: 'whatsapp',
      contacts: [{ input: TO, wa_id: TO.slice(1) }],
      messages: [{ id: fake.sent.at(-1)!.wamid }],
    });
    expect(fake.sent.length).toBe(sent + 1);
  });

  it("refuses a token on another business's number, and a template edge on a phone number", async () => {
    const other = fake.createBusiness();
    expect(
      (await post(`/${other.phoneNumberId}/messages`, { ...base, type: 'text', text: { body: 'x' } })).status,
    ).toBe(401);
    const wrongEdge = await post(`/${business.phoneNumberId}/message_templates`, { name: 'x' });
    expect(wrongEdge.status).toBe(400);
    expect(wrongEdge.body.error.code).toBe(100);
  });

  it('waitForSends resolves once the sends arrived, and fails after its timeout', async () => {
    const n = fake.sent.length;
    const waiting = fake.waitForSends(n + 2, 5_000);
    await adapterFor(business).send(hello);
    await adapterFor(business).send(hello);
    expect((await waiting).length).toBe(n + 2);
    await expect(fake.waitForSends(n + 3, 50)).rejects.toThrow(`${n + 2} of ${n + 3} sends arrived`);
  });

  it('signs callbacks with HMAC-SHA256 of the exact body under the app secret', async () => {
    const receiver = await Receiver.start(() => ({ status: 200 }));
    try {
      await fake.postInbound(receiver.url(), business, { from: TO });
      const [received] = await receiver.waitFor(1);
      const expected = createHmac('sha256', business.appSecret).update(received!.body).digest('hex');
      expect(received!.headers['x-hub-signature-256']).toBe(`sha256=${expected}`);
    } finally {
      await receiver.close();
    }
  });
});
