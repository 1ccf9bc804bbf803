// The OpenAPI document made for generators and readers (issue 25): named schemas by $ref, declared
// response headers, described success responses with examples that fit their schemas, declared tags,
// 413/415 only where a body is taken (and a body refused where none is), and the docs UI's settings.
// `npm run openapi:lint` (redocly, recommended rules, warnings fail) checks the rest.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { beforeAll, describe, expect, it } from 'vitest';
import { SchemaHoister } from '../../src/kernel/openapi/openapi-document.ts';
import { call, tenant } from '../helpers/client.ts';
import { expectError, useTestApp } from '../helpers/setup.ts';

const env = useTestApp({ resolver: async () => ['93.184.216.34'] });
const PREFIX = '/api/v1/public';
const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch']);

type Json = Record<string, any>;
interface Op {
  name: string;
  path: string;
  method: string;
  op: Json;
}

let doc: Json;
let ops: Op[];

beforeAll(async () => {
  const res = await call(env.app, 'GET', `${PREFIX}/openapi.json`);
  expect(res.status).toBe(200);
  doc = res.body;
  ops = Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([m]) => METHODS.has(m))
      .map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, path, method, op })),
  );
  expect(ops.length).toBeGreaterThan(150);
});

const successes = (op: Json) => Object.entries(op.responses as Json).filter(([s]) => s.startsWith('2'));
const refName = (schema: Json | undefined) =>
  typeof schema?.$ref === 'string' && schema.$ref.startsWith('#/components/schemas/')
    ? schema.$ref.slice('#/components/schemas/'.length)
    : null;

describe('named schemas', () => {
  it('makes every object a success response carries a $ref to a component', () => {
    const inline: string[] = [];
    for (const { name, op } of ops) {
      for (const [status, response] of successes(op)) {
        for (const media of Object.values((response.content ?? {}) as Json)) {
          const schema = media.schema as Json;
          const ref = refName(schema);
          if (ref) expect(doc.components.schemas[ref], `${name} ${status}: ${ref}`).toBeDefined();
          else if (schema.type === 'object' || schema.properties) inline.push(`${name} ${status}`);
        }
      }
    }
    expect(inline).toEqual([]);
    for (const name of ['Contact', 'Message', 'Template', 'Conversation', 'Webhook', 'Campaign', 'Call']) {
      expect(doc.components.schemas[name], name).toMatchObject({ type: 'object', title: name });
    }
  });

  it('names each page after its item, whose schema the page refers to', () => {
    const list = doc.paths[`${PREFIX}/contacts`].get.responses['200'].content['application/json'].schema;
    expect(list).toEqual({ $ref: '#/components/schemas/ContactPage' });
    const pages = Object.entries(doc.components.schemas as Json).filter(([n]) => n.endsWith('Page'));
    expect(pages.length).toBeGreaterThan(15);
    for (const [name, page] of pages) {
      expect(page.properties.data.items, name).toEqual({
        $ref: `#/components/schemas/${name.slice(0, -'Page'.length)}`,
      });
    }
  });

  it('keeps one component for one shape, and refuses one title for two shapes', () => {
    const schemas: Json = {};
    const hoister = new SchemaHoister(schemas);
    const thing = { type: 'object', title: 'Thing', properties: { id: { type: 'string' } } };
    const page = { type: 'object', properties: { data: { type: 'array', items: thing } } };
    expect(hoister.hoist(page, 'first')).toEqual({
      type: 'object',
      properties: { data: { type: 'array', items: { $ref: '#/components/schemas/Thing' } } },
    });
    expect(hoister.hoist({ ...thing }, 'second')).toEqual({ $ref: '#/components/schemas/Thing' });
    expect(Object.keys(schemas)).toEqual(['Thing']);
    // A property called `title` is a property, not a name.
    const titled = { type: 'object', properties: { title: { type: 'string' } } };
    expect(hoister.hoist(titled, 'third')).toEqual(titled);
    const other = { ...thing, properties: { id: { type: 'integer' } } };
    expect(() => hoister.hoist(other, 'GET /things')).toThrow(
      /Thing names two different schemas.*GET \/things/,
    );
  });
});

describe('success responses', () => {
  it('each has a description and an example of what it carries, which fits its schema', () => {
    const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
    const problems: string[] = [];
    for (const { name, op } of ops) {
      const ok = successes(op);
      expect(ok.length, name).toBeGreaterThan(0);
      for (const [status, response] of ok) {
        if (!response.description || response.description === 'Default Response')
          problems.push(`${name} ${status}: no description`);
        for (const [type, media] of Object.entries((response.content ?? {}) as Json)) {
          if (media.example === undefined) problems.push(`${name} ${status}: no ${type} example`);
        }
        const json = response.content?.['application/json'];
        if (!json || json.example === undefined) continue;
        const validate = ajv.compile({ ...json.schema, components: doc.components });
        if (!validate(json.example))
          problems.push(`${name} ${status}: example does not fit: ${ajv.errorsText(validate.errors)}`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('response headers', () => {
  it('are declared components, referenced where the server sends them', () => {
    const declared = doc.components.headers as Json;
    expect(Object.keys(declared).sort()).toEqual(
      [
        'Idempotent-Replayed',
        'Retry-After',
        'X-Quota-Limit',
        'X-Quota-Remaining',
        'X-RateLimit-Limit',
        'X-RateLimit-Remaining',
        'X-RateLimit-Reset',
        'X-Request-Id',
      ].sort(),
    );
    for (const { name, method, op } of ops) {
      const keyed = (op.security ?? []).some((s: Json) => 'ApiKey' in s || 'PartnerKey' in s);
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const headers = (response.headers ?? {}) as Json;
        for (const [header, ref] of Object.entries(headers)) {
          expect(ref.$ref, `${name} ${status} ${header}`).toBe(`#/components/headers/${header}`);
          expect(declared[header], header).toBeDefined();
        }
        expect(headers['X-Request-Id'], `${name} ${status}`).toBeDefined();
        if (status === '429' || status === '503')
          expect(headers['Retry-After'], `${name} ${status}`).toBeDefined();
        if (keyed && status.startsWith('2')) {
          expect(headers['X-RateLimit-Remaining'], `${name} ${status}`).toBeDefined();
          expect(Boolean(headers['Idempotent-Replayed']), `${name} ${status}`).toBe(method === 'post');
        }
      }
    }
  });

  it('are the headers the server sends', async () => {
    const t = await tenant(env.app, env.partner.partnerKey, { planCode: 'business' });
    const res = await call(env.app, 'GET', '/contacts', { key: t.apiKey });
    expect(res.status).toBe(200);
    for (const header of [
      'x-request-id',
      'x-ratelimit-limit',
      'x-ratelimit-remaining',
      'x-ratelimit-reset',
      'x-quota-limit',
      'x-quota-remaining',
    ]) {
      expect(res.headers[header], header).toMatch(/^\S+$/);
    }
    const headers = { 'idempotency-key': 'doc-test-1' };
    const body = { phone: '+14155552000' };
    const first = await call(env.app, 'POST', '/contacts', { key: t.apiKey, headers, body });
    const again = await call(env.app, 'POST', '/contacts', { key: t.apiKey, headers, body });
    expect([first.status, again.status]).toEqual([201, 201]);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.headers['idempotent-replayed']).toBe('true');
  });
});

describe('tags', () => {
  it('declares every tag an operation or a webhook uses, with one webhooks group', () => {
    const declared = new Set((doc.tags as Json[]).map((t) => t.name));
    const used = [
      ...ops.flatMap(({ op }) => op.tags ?? []),
      ...Object.values(doc.webhooks as Json).flatMap((item) =>
        Object.values(item as Json).flatMap((o) => o.tags),
      ),
    ];
    expect(used.filter((t) => !declared.has(t))).toEqual([]);
    expect([...declared].filter((t) => /webhook/i.test(t))).toEqual(['webhooks']);
    expect(doc.webhooks.event.post.tags).toEqual(['webhooks']);
  });
});

describe('request bodies', () => {
  it('lists 413 and 415 only where a body is taken', () => {
    for (const { name, op } of ops) {
      const takes = op.requestBody !== undefined;
      expect(op.responses['413'] !== undefined, `${name} 413`).toBe(takes);
      expect(op.responses['415'] !== undefined, `${name} 415`).toBe(takes);
      expect(op.responses['400'].description, name).toMatch(/^[A-Z_, ]*INVALID_REQUEST/);
      if (!takes) expect(op.responses['400'].description, name).toContain('takes no body');
      if ((op.parameters ?? []).some((p: Json) => p.in === 'query'))
        expect(op.responses['400'].description, name).toContain(
          'query parameter this operation does not list',
        );
    }
  });

  it('documents the WhatsApp callbacks’ body, Meta’s webhook envelope', () => {
    for (const path of ['/api/v1/callbacks/whatsapp', '/api/v1/callbacks/whatsapp/{accountId}']) {
      const json = doc.paths[path].post.requestBody.content['application/json'];
      expect(
        json.schema.properties.entry.items.properties.changes.items.properties.field,
        path,
      ).toBeDefined();
      expect(json.example.object).toBe('whatsapp_business_account');
    }
  });

  it('says a body is optional exactly where the server takes none (rotate-secret)', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const rotate = doc.paths[`${PREFIX}/webhooks/{id}/rotate-secret`].post;
    expect(rotate.requestBody.required).toBe(false);
    const hook = await call(env.app, 'POST', '/webhooks', {
      key: t.apiKey,
      body: { url: 'https://example.com/hook', events: ['*'] },
    });
    expect(hook.status).toBe(201);
    const rotated = await call(env.app, 'POST', `/webhooks/${hook.body.id}/rotate-secret`, { key: t.apiKey });
    expect(rotated.status).toBe(201);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    // And a required one is required: no body is a 400 naming it.
    expect(doc.paths[`${PREFIX}/contacts`].post.requestBody.required).toBe(true);
    const none = await call(env.app, 'POST', '/contacts', { key: t.apiKey });
    expectError(none, 400, 'INVALID_REQUEST');
  });

  it('says which bodies may be left out, as the server takes them', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const wrong: string[] = [];
    let optional = 0;
    for (const { name, path, method, op } of ops) {
      if (!op.requestBody?.content?.['application/json']) continue;
      const schemes = (op.security ?? []).flatMap((s: Json) => Object.keys(s));
      if (!schemes.includes('ApiKey') && !schemes.includes('PartnerKey')) continue;
      const key = schemes.includes('ApiKey') ? t.apiKey : env.partner.partnerKey;
      const url = path.replace(/\{[^}]+\}/g, 'xyz_unknown');
      const res = await call(env.app, method.toUpperCase() as 'POST', url, { key });
      const bodyRefused =
        res.status === 400 && (res.body.error.details ?? []).some((d: Json) => d.field === 'body');
      if (op.requestBody.required === false) optional++;
      if (bodyRefused !== (op.requestBody.required !== false))
        wrong.push(
          `${name}: documented required=${op.requestBody.required}, answered ${res.status} ${res.body.error?.message}`,
        );
    }
    expect(wrong).toEqual([]);
    expect(optional).toBeGreaterThan(5);
  });

  it('refuses a body sent to an operation that takes none, and lets an empty one or {} pass', async () => {
    const t = await tenant(env.app, env.partner.partnerKey);
    const key = t.apiKey;
    const submit = '/templates/tpl_01jv0000000000000000000000/submit';
    const refused = [
      call(env.app, 'POST', submit, { key, body: { reason: 'x' } }),
      call(env.app, 'POST', submit, { key, body: '[]' }),
      call(env.app, 'POST', submit, { key, body: 'hello', headers: { 'content-type': 'text/plain' } }),
      call(env.app, 'POST', submit, {
        key,
        body: { padding: 'x'.repeat(env.app.ctx.config.bodyLimitBytes) },
      }),
      call(env.app, 'DELETE', '/contacts/ct_unknown', { key, body: { hard: true } }),
      call(env.app, 'GET', '/contacts', { key, body: { limit: 5 } }),
      call(env.app, 'GET', '/healthz', { body: 'hello', headers: { 'content-type': 'text/plain' } }),
    ];
    for (const res of await Promise.all(refused)) {
      expectError(res, 400, 'INVALID_REQUEST');
      expect(res.body.error.details).toEqual([
        { field: 'body', issue: 'is not taken by this operation: send none (or `{}`)' },
      ]);
    }
    // Nothing to ignore: these reach the route (an unknown template is a 404).
    for (const body of [undefined, {}, '']) {
      const res = await call(env.app, 'POST', submit, { key, body });
      expectError(res, 404, 'RESOURCE_NOT_FOUND');
    }
  });
});

describe('the docs UI', () => {
  it('opens on a quickstart, with the API key preset and no hosted-service buttons', async () => {
    expect(doc.info.description).toMatch(/^Self-hostable[^\n]*\n\n## Quickstart\n\n1\. \*\*Get a key\.\*\*/);
    expect(doc.info.description).toContain('X-Api-Key');
    const res = await call(env.app, 'GET', '/docs/');
    expect(res.status).toBe(200);
    const page = String(res.body);
    const config = JSON.parse(
      page.slice(page.indexOf('{', page.indexOf('createApiReference')), page.lastIndexOf('}') + 1),
    );
    expect(config).toMatchObject({
      url: `${PREFIX}/openapi.json`,
      authentication: { preferredSecurityScheme: 'ApiKey' },
      hideClientButton: true,
      showDeveloperTools: 'never',
      agent: { disabled: true },
      mcp: { disabled: true },
      telemetry: false,
    });
    expect(doc.components.securitySchemes.ApiKey).toMatchObject({ in: 'header', name: 'X-Api-Key' });
  });
});
