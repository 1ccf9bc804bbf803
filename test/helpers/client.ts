// A small HTTP client over app.inject, and factories that make tenants through the public API.
import type { LightMyRequestResponse } from 'fastify';
import type { App } from '../../src/app.ts';
import { API_PREFIX } from '../../src/app.ts';
import type { Database } from '../../src/kernel/database/db.ts';
import { newId } from '../../src/kernel/values/ids.ts';
import { createKey } from '../../src/modules/keys/service.ts';
import { BOOTSTRAP_TOKEN } from './harness.ts';

export interface CallOptions {
  key?: string;
  accountId?: string;
  body?: unknown;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /** A console session's token, sent as the `tidings_session` cookie. */
  cookie?: string;
  /** The session's CSRF token, sent as X-CSRF-Token. */
  csrf?: string;
}

export interface Reply<T = any> {
  status: number;
  body: T;
  headers: LightMyRequestResponse['headers'];
  raw: LightMyRequestResponse;
}

// Paths outside the API prefix; any other path is relative to /api/v1/public.
const ROOT_PATHS = /^\/(api|docs|healthz|readyz|metrics|slow)\b/;

export async function call<T = any>(
  app: App,
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  path: string,
  options: CallOptions = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) };
  if (options.key) headers['x-api-key'] = options.key;
  if (options.accountId) headers['x-account-id'] = options.accountId;
  if (options.cookie) headers.cookie = `tidings_session=${options.cookie}`;
  if (options.csrf) headers['x-csrf-token'] = options.csrf;
  if (options.body !== undefined) headers['content-type'] ??= 'application/json';
  const raw = await app.inject({
    method,
    url: ROOT_PATHS.test(path) ? path : `${API_PREFIX}${path}`,
    headers,
    query: options.query,
    payload:
      options.body === undefined
        ? undefined
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body),
  });
  let body: unknown = raw.body;
  if ((raw.headers['content-type'] ?? '').toString().includes('json') && raw.body) body = raw.json();
  return { status: raw.statusCode, body: body as T, headers: raw.headers, raw };
}

/** A key with its last character changed: a typo that its checksum catches (never the key itself). */
export const mistypedKey = (key: string) => `${key.slice(0, -1)}${key.endsWith('A') ? 'B' : 'A'}`;

export interface Partner {
  partnerId: string;
  partnerKey: string;
}

/** Bootstraps the installation (once per database) and returns its partner and first key. */
export async function bootstrapPartner(app: App): Promise<Partner> {
  const res = await call(app, 'POST', '/partner/bootstrap', {
    headers: { authorization: `Bearer ${BOOTSTRAP_TOKEN}` },
  });
  if (res.status !== 201) throw new Error(`bootstrap failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { partnerId: res.body.partnerId, partnerKey: res.body.apiKey };
}

/** A second, independent partner (an installation bootstraps only one; this one is made directly). */
export async function otherPartner(db: Database, keyPrefix = 'tdg_'): Promise<Partner> {
  const partnerId = newId('partner');
  await db.query('INSERT INTO partners (id, name) VALUES ($1, $2)', [partnerId, 'Other partner']);
  const { apiKey } = await db.transaction((tx) =>
    createKey(tx, { partnerId }, { name: 'other', scope: 'partner' }, { keyPrefix, now: new Date() }),
  );
  return { partnerId, partnerKey: apiKey };
}

let refCounter = 0;

export async function provision(app: App, partnerKey: string, overrides: Record<string, unknown> = {}) {
  const res = await call(app, 'POST', '/partner/accounts', {
    key: partnerKey,
    body: {
      accountName: 'Test account',
      countryCode: 'US',
      planCode: 'scale',
      externalRef: `ref-${process.pid}-${Date.now()}-${refCounter++}`,
      ...overrides,
    },
  });
  if (res.status !== 201) throw new Error(`provision failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { accountId: string; status: string; planCode: string };
}

export async function createAccountKey(
  app: App,
  partnerKey: string,
  accountId: string,
  body: Record<string, unknown> = {},
) {
  const res = await call(app, 'POST', `/partner/accounts/${accountId}/keys`, {
    key: partnerKey,
    body: { name: 'test', scope: 'live', ...body },
  });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; apiKey: string; scope: string };
}

/** A fresh tenant: an account of the given plan and one API key for it. */
export async function tenant(
  app: App,
  partnerKey: string,
  account: Record<string, unknown> = {},
  key: Record<string, unknown> = {},
) {
  const acc = await provision(app, partnerKey, account);
  const k = await createAccountKey(app, partnerKey, acc.accountId, key);
  return { accountId: acc.accountId, apiKey: k.apiKey, keyId: k.id };
}

/** Every item of a list endpoint, following `nextCursor` with pages of 100 (asserting each is 200). */
export async function listAll<T = any>(app: App, key: string, path: string): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const res: Reply = await call(app, 'GET', path, {
      key,
      query: { limit: '100', ...(cursor ? { cursor } : {}) },
    });
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    out.push(...res.body.data);
    cursor = res.body.nextCursor;
    if (!cursor) return out;
  }
  throw new Error(`GET ${path}: more pages than expected`);
}
