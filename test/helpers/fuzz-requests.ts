// Bad requests for one OpenAPI operation, as a fast-check arbitrary. Each request starts from a
// plausible one (valid credentials for the operation's access level, a real id in each path
// parameter, a body of the schema's shape) and breaks one thing. A request marked `mustRefuse` is
// invalid by construction (wrong types, missing fields, malformed JSON, bad credentials…): the
// service must refuse it. The others (odd Unicode in a field, garbage headers, odd query values)
// may be accepted; whatever the answer, it must not be a 5xx nor an undocumented one.
import fc from 'fast-check';
import { normalizeTag } from '../../src/modules/contacts/index.ts';
import { mistypedKey } from './client.ts';
import {
  closedObjectsOf,
  deepNest,
  edgeString,
  edgeValueFor,
  fieldsOf,
  HUGE_STRING_LENGTH,
  plausible,
  RawJson,
  requiredFieldsOf,
  toJsonText,
  withField,
  wrongTypedValues,
} from './fuzz-values.ts';
import type { Operation } from './openapi-operations.ts';

export interface FuzzRequest {
  kind: string;
  mustRefuse: boolean;
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

export interface FuzzContext {
  partnerKey: string;
  liveKey: string;
  sandboxKey: string;
  /** The account the live and sandbox keys belong to. */
  accountId: string;
  bootstrapToken: string;
  /** A console session (a partner admin's) for the console's own routes; replaced when one ends it. */
  session: { cookie: string; csrf: string };
  /**
   * Ids of real resources for path parameters, so that handlers run on them. Never the fuzzing
   * account itself nor its keys: a plausible DELETE may well succeed.
   */
  realIds: string[];
  bodyLimit: number;
}

export type Headers = Record<string, string>;

/** A path parameter's value: text (encoded when the URL is built) or already-encoded bytes. */
export type Segment = { text: string } | { encoded: string };

function segmentText(s: Segment): string {
  if ('encoded' in s) return s.encoded;
  try {
    return encodeURIComponent(s.text);
  } catch {
    // Unpaired surrogates have no UTF-8 form; send the bytes a careless client would.
    return encodeURIComponent(s.text.replace(/[\ud800-\udfff]/g, '\ufffd'));
  }
}

export function urlOf(op: Operation, params: Record<string, Segment>, query = ''): string {
  const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => segmentText(params[name]!));
  return query ? `${path}?${query}` : path;
}

/** The credentials of an ordinary call of the operation (the live key for an account's routes). */
export function usualAuth(op: Operation, ctx: FuzzContext): Headers {
  switch (op.access) {
    case 'public':
      return {};
    case 'bootstrap':
      return { authorization: `Bearer ${ctx.bootstrapToken}` };
    case 'session':
      return { cookie: `tidings_session=${ctx.session.cookie}`, 'x-csrf-token': ctx.session.csrf };
    case 'partner':
      return { 'x-api-key': ctx.partnerKey };
    case 'account':
      return { 'x-api-key': ctx.liveKey };
  }
}

function validAuth(op: Operation, ctx: FuzzContext): fc.Arbitrary<Headers> {
  if (op.access !== 'account') {
    // Read when the request is made: a sign-out in an earlier case replaced the session.
    return fc.constant(null).map(() => usualAuth(op, ctx));
  }
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant({ 'x-api-key': ctx.liveKey }) },
    { weight: 2, arbitrary: fc.constant({ 'x-api-key': ctx.sandboxKey }) },
    { weight: 1, arbitrary: fc.constant({ 'x-api-key': ctx.partnerKey, 'x-account-id': ctx.accountId }) },
    { weight: 1, arbitrary: fc.constant({ 'x-api-key': ctx.liveKey, 'x-account-id': ctx.accountId }) },
  );
}

/** Header values: odd but sendable over HTTP (no CR/LF), from empty to 100 KB. */
const headerGarbage: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({
    unit: fc.integer({ min: 0x20, max: 0xff }).map((c) => String.fromCharCode(c)),
    maxLength: 300,
  }),
  fc.constantFrom('', ' ', 'null', 'undefined', '0', '-1', 'x'.repeat(8 * 1024), 'x'.repeat(100 * 1024)),
);

function invalidAuth(op: Operation, ctx: FuzzContext): fc.Arbitrary<Headers> {
  if (op.access === 'bootstrap') {
    return fc
      .oneof(
        fc.constant({}),
        fc.constantFrom(
          `Bearer ${ctx.bootstrapToken}x`,
          `Basic ${ctx.bootstrapToken}`,
          'Bearer ',
          ctx.bootstrapToken,
        ),
        headerGarbage,
      )
      .map((v) => (typeof v === 'string' ? { authorization: v } : v));
  }
  if (op.access === 'session') {
    const cookie = (value: string) => ({ cookie: `tidings_session=${value}` });
    return fc.oneof(
      fc.constant({}),
      fc.constant({ 'x-api-key': ctx.partnerKey }),
      headerGarbage.map(cookie),
      fc
        .constant(null)
        .map(() => ({ ...cookie(`${ctx.session.cookie}x`), 'x-csrf-token': ctx.session.csrf })),
      // A change needs the session's CSRF token (a read does not).
      ...(op.method === 'GET'
        ? []
        : [
            fc.constant(null).map(() => cookie(ctx.session.cookie)),
            fc.constant(null).map(() => ({ ...cookie(ctx.session.cookie), 'x-csrf-token': 'wrong' })),
          ]),
    );
  }
  const keys = fc.oneof(
    fc.constantFrom(
      ctx.liveKey.slice(0, -1),
      mistypedKey(ctx.liveKey),
      ctx.liveKey.toUpperCase(),
      `${ctx.liveKey} `,
      'tdg_live_',
      'tdg_test_',
      'tdg_sandbox_',
      'tdg_partner_',
      `tdg_live_${'A'.repeat(40)}`,
      mistypedKey(ctx.partnerKey),
    ),
    headerGarbage,
  );
  const wrongScope: Headers[] =
    op.access === 'partner'
      ? [{ 'x-api-key': ctx.liveKey }, { 'x-api-key': ctx.sandboxKey }]
      : [{ 'x-api-key': ctx.partnerKey }, { 'x-api-key': ctx.liveKey, 'x-account-id': 'acc_someone_else' }];
  return fc.oneof(
    fc.constant({}),
    keys.map((k) => ({ 'x-api-key': k })),
    fc.constantFrom(...wrongScope),
    headerGarbage.map((k) => ({ authorization: `Bearer ${k}` })),
  );
}

function garbageSegment(ctx: FuzzContext): fc.Arbitrary<Segment> {
  const idLike = ctx.realIds.flatMap((id) => [
    `${id}x`,
    id.slice(0, -1),
    id.toUpperCase(),
    `zzz_${id.split('_').at(-1)}`,
    `${id}/`,
    ` ${id}`,
  ]);
  // Not "." nor "..": URL parsing (the client's, before the service) resolves them to another path.
  return fc.oneof(
    edgeString.filter((s) => s.length > 0 && !/^\.+$/.test(s)).map((text) => ({ text })),
    fc
      .constantFrom(...idLike, 'x'.repeat(10_000), '0', '-1', '1e400', 'null', '...x', '%', '*')
      .map((text) => ({
        text,
      })),
    fc.constantFrom('%00', '%ED%A0%80', '%FF', '%C0%AF', '%2F', '%E2%80%AE').map((encoded) => ({
      encoded,
    })),
  );
}

/** Path parameters that name a tag or a label: any well-formed one is valid, present or not. */
const TAG_PARAMS = new Set(['tag', 'label']);
const isWellFormedTag = (segment: Segment) => 'text' in segment && normalizeTag(segment.text) !== null;

function realSegment(ctx: FuzzContext): fc.Arbitrary<Segment> {
  return fc.constantFrom(...ctx.realIds).map((text) => ({ text }));
}

function pathParams(op: Operation, value: fc.Arbitrary<Segment>): fc.Arbitrary<Record<string, Segment>> {
  return fc.record(Object.fromEntries(op.pathParams.map((p) => [p.name, value])));
}

const cursorGarbage = fc.oneof(
  fc.base64String({ maxLength: 60 }),
  fc
    .constantFrom(
      'ctc_00000000000000000000000000',
      'zz_zzzzzzzzzzzzzzzzzzzzzzzzzz',
      '{"id":1}',
      '[]',
      '\u0000',
      '\ud800',
    )
    .map((s) => Buffer.from(s).toString('base64url')),
  fc.constantFrom('!!!', '=', 'x'.repeat(300)),
);

const queryGarbage = fc.oneof(
  edgeString,
  cursorGarbage,
  fc.constantFrom(
    '-1',
    '0',
    '101',
    '1e400',
    '1.5',
    '99999999999999999999',
    'NaN',
    'true',
    'null',
    '[]',
    '2020-13-45',
  ),
);

function encodeQuery(pairs: [string, string][]): string {
  return pairs.map(([k, v]) => `${encodeURIComponent(k)}=${segmentText({ text: v })}`).join('&');
}

/** Everything about one request but what a kind breaks. */
interface Base {
  auth: Headers;
  params: Record<string, Segment>;
  body: unknown;
}

function request(
  op: Operation,
  kind: string,
  mustRefuse: boolean,
  base: Base,
  change: Partial<FuzzRequest> = {},
) {
  const hasBody = op.takesBody && base.body !== undefined;
  return {
    kind,
    mustRefuse,
    method: op.method,
    url: urlOf(op, base.params),
    headers: { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...base.auth },
    ...(hasBody ? { payload: toJsonText(base.body) } : {}),
    ...change,
  } satisfies FuzzRequest;
}

/** The kinds of bad request that apply to an operation, each an arbitrary of requests. */
export function badRequests(
  op: Operation,
  ctx: FuzzContext,
): { kind: string; arbitrary: fc.Arbitrary<FuzzRequest> }[] {
  const schema = op.body ?? {};
  const plausibleBody = op.body ? plausible(op.body) : undefined;
  const base = (params: fc.Arbitrary<Segment>, auth = validAuth(op, ctx)) =>
    fc.record({ auth, params: pathParams(op, params), body: fc.constant(plausibleBody) });
  const real = base(realSegment(ctx));
  const kinds: { kind: string; arbitrary: fc.Arbitrary<FuzzRequest> }[] = [];
  const add = (kind: string, arbitrary: fc.Arbitrary<FuzzRequest>) => kinds.push({ kind, arbitrary });

  if (op.access !== 'public') {
    add(
      'invalid credentials',
      fc
        .tuple(base(realSegment(ctx), invalidAuth(op, ctx)))
        .map(([b]) => request(op, 'invalid credentials', true, b)),
    );
  }
  if (op.pathParams.length > 0) {
    add(
      'garbage path parameter',
      fc
        .tuple(real, fc.constantFrom(...op.pathParams.map((p) => p.name)), garbageSegment(ctx))
        // Any well-formed tag or label is a fine one to remove (absent: removing it is idempotent).
        .filter(([, name, segment]) => !(TAG_PARAMS.has(name) && isWellFormedTag(segment)))
        .map(([b, name, segment]) =>
          request(op, 'garbage path parameter', true, { ...b, params: { ...b.params, [name]: segment } }),
        ),
    );
  }
  if (op.queryParams.length > 0) {
    const names = [...op.queryParams.map((p) => p.name), 'unknownParam'];
    add(
      'garbage query',
      fc
        .tuple(
          real,
          fc.array(fc.tuple(fc.constantFrom(...names), queryGarbage), { minLength: 1, maxLength: 4 }),
        )
        .map(([b, pairs]) => {
          const r = request(op, 'garbage query', false, b);
          return { ...r, url: `${r.url}?${encodeQuery(pairs)}` };
        }),
    );
  }
  add(
    'garbage headers',
    fc
      .tuple(
        real,
        fc.dictionary(
          fc.constantFrom(
            'x-account-id',
            'idempotency-key',
            'authorization',
            'accept',
            'x-forwarded-for',
            'x-request-id',
          ),
          headerGarbage,
          { minKeys: 1, maxKeys: 3 },
        ),
      )
      // A garbage X-Account-Id beside a key is an error of its own; the rest may be accepted.
      .map(([b, extra]) => request(op, 'garbage headers', false, { ...b, auth: { ...b.auth, ...extra } })),
  );
  if (!op.takesBody) {
    // An operation that takes no body refuses one (400), whatever its type or size, rather than
    // ignoring it; an empty body and `{}` pass (input-guard.ts).
    const kind = 'a body where none is taken';
    add(
      kind,
      fc
        .tuple(
          real,
          fc.constantFrom(
            ['application/json', '{"a":1}'],
            ['application/json', '[]'],
            ['application/json', '"x"'],
            ['application/json', 'null'],
            ['application/json', '{'],
            ['text/plain', 'hello'],
            ['application/x-www-form-urlencoded', 'a=1'],
            ['application/json', toJsonText({ padding: 'x'.repeat(ctx.bodyLimit + 1) })],
          ),
        )
        .map(([b, [type, payload]]) =>
          request(op, kind, true, b, { payload, headers: { 'content-type': type, ...b.auth } }),
        ),
    );
    return kinds;
  }

  const payload = (kind: string, mustRefuse: boolean, text: fc.Arbitrary<string>) =>
    add(
      kind,
      fc.tuple(real, text).map(([b, p]) =>
        request(op, kind, mustRefuse, b, {
          payload: p,
          headers: { 'content-type': 'application/json', ...b.auth },
        }),
      ),
    );
  payload(
    'malformed JSON',
    true,
    fc.oneof(
      fc.constantFrom(
        '{',
        '{"a":',
        '[1,]',
        "{'a':1}",
        '{"a":1}}',
        'nul',
        '{"a":1,}',
        '\u0000',
        '{"a":"\\ud800',
        '"\\x"',
        '01',
        '{"a" 1}',
      ),
      fc.string({ minLength: 1, maxLength: 40 }).filter((s) => {
        try {
          JSON.parse(s);
          return false;
        } catch {
          return s.trim() !== '';
        }
      }),
    ),
  );
  payload(
    'over the body limit',
    true,
    fc.constantFrom(ctx.bodyLimit + 1, ctx.bodyLimit * 2).map((n) => toJsonText({ padding: 'x'.repeat(n) })),
  );
  add(
    'wrong content type',
    fc
      .tuple(
        real,
        fc.constantFrom(
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/xml',
          'application/jsonx',
          'json',
          '',
        ),
      )
      .map(([b, type]) => {
        const r = request(op, 'wrong content type', true, { ...b, body: b.body ?? {} });
        r.headers['content-type'] ??= 'application/json';
        const { 'content-type': _, ...headers } = r.headers;
        return { ...r, headers: type ? { ...headers, 'content-type': type } : headers };
      }),
  );
  add(
    'body of the wrong type',
    fc
      .tuple(
        real,
        fc.constantFrom(...wrongTypedValues(op.body ?? { type: 'object' }).filter((v) => v !== null)),
      )
      // A multipart upload or a provider's form callback reads its body itself, as it sees fit.
      .map(([b, body]) => request(op, 'body of the wrong type', op.body !== null, { ...b, body })),
  );
  add(
    'deep nesting',
    fc
      .tuple(
        real,
        fc.constantFrom(1_000, 10_000, 100_000),
        fc.constantFrom('array' as const, 'object' as const),
        fc.constantFrom<(string | number)[]>([], ...fieldsOf(schema).map((f) => f.path)),
      )
      .map(([b, depth, shape, path]) =>
        // The whole body nested is the wrong type for an object schema; a nested field may be fine.
        request(op, 'deep nesting', path.length === 0 && op.body !== null, {
          ...b,
          body: withField(b.body ?? {}, schema, path, deepNest(depth, shape)),
        }),
      ),
  );
  const fields = fieldsOf(schema);
  const wrongTyped = fields.flatMap((f) =>
    wrongTypedValues(f.schema).map((v) => ({ path: f.path, value: v })),
  );
  if (wrongTyped.length > 0) {
    add(
      'field of the wrong type',
      fc.tuple(real, fc.constantFrom(...wrongTyped)).map(([b, w]) =>
        request(op, `field ${w.path.join('.')} of the wrong type`, true, {
          ...b,
          body: withField(b.body, schema, w.path, w.value),
        }),
      ),
    );
  }
  const required = requiredFieldsOf(schema);
  if (required.length > 0) {
    add(
      'missing required field',
      fc.tuple(real, fc.constantFrom(...required)).map(([b, path]) =>
        request(op, `missing ${path.join('.')}`, true, {
          ...b,
          body: withField(b.body, schema, path, undefined),
        }),
      ),
    );
  }
  const closed = closedObjectsOf(schema);
  if (closed.length > 0) {
    const unknownName = fc
      .string({ minLength: 1, maxLength: 20 })
      .filter((k) => !['__proto__', 'constructor', 'prototype'].includes(k));
    add(
      'unknown property',
      fc.tuple(real, fc.constantFrom(...closed), unknownName, edgeString).map(([b, path, name, value]) => {
        const known = fieldsOf(schema).some((f) => f.path.join('.') === [...path, name].join('.'));
        return request(op, 'unknown property', !known, {
          ...b,
          body: withField(b.body, schema, [...path, name], value),
        });
      }),
    );
  }
  if (fields.length > 0) {
    add(
      'edge value in a field',
      fc.tuple(real, fc.constantFrom(...fields)).chain(([b, f]) =>
        fc.oneof(edgeValueFor(f.schema), fc.constant('x'.repeat(HUGE_STRING_LENGTH))).map((v) =>
          request(op, `edge value in ${f.path.join('.')}`, false, {
            ...b,
            body: withField(b.body, schema, f.path, v),
          }),
        ),
      ),
    );
  }
  return kinds;
}

/** A short description of a request for failure messages (long payloads and headers cut). */
export function describeRequest(r: FuzzRequest): string {
  const cut = (s: string) => (s.length > 300 ? `${s.slice(0, 300)}…(${s.length} chars)` : s);
  const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, cut(v)]));
  return `[${r.kind}] ${r.method} ${cut(r.url)} headers=${JSON.stringify(headers)}${
    r.payload === undefined ? '' : ` body=${JSON.stringify(cut(r.payload))}`
  }`;
}

export { RawJson };
