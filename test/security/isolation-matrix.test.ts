// The tenant isolation matrix: every operation of the OpenAPI document an API key can call, tried
// with tenant A's real ids by every kind of caller that must not reach them (tenant B's key, B's key
// naming A, a partner of no relation, A's sandbox key on live-only actions, revoked and expired
// keys, A suspended, A closed, and the console's sessions: A's agent, tenant B's account admin and
// agent, an unrelated partner's admin), each answer compared with the exact documented status and code.
// The control rows (A's own keys) prove the ids are real, and a fingerprint of A's rows before and
// after each refusing phase proves no refused request changed anything.
//
// The matrix is generated from the document the app serves: a new route is in it without an edit,
// and the coverage test fails when it has a path parameter no fixture fills or a body it lacks.
// Mismatches are collected and reported together, so a failure shows the whole picture.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeWhatsAppCloud } from '../fakes/whatsapp-cloud.ts';
import { call, createAccountKey, provision } from '../helpers/client.ts';
import { changedTables, DatabaseSnapshots } from '../helpers/db-snapshot.ts';
import {
  listed,
  OWN_ROLES,
  readersOf,
  roleCredentials,
  routeProbe,
  STRANGER_ROLES,
  streamed,
  webhookGets,
} from '../helpers/event-views.ts';
import {
  BODIES,
  type Caller,
  credentialsOf,
  documents,
  EXCEPTIONS,
  type Expected,
  expectedFor,
  fixtureKey,
  NOT_KEYED,
  type Operation,
  operationsOf,
  PREFIX,
} from '../helpers/isolation-rules.ts';
import { useTestApp } from '../helpers/setup.ts';
import { buildWorld, type World } from '../helpers/world.ts';

let fake: FakeWhatsAppCloud;
beforeAll(async () => {
  fake = await FakeWhatsAppCloud.start();
});
const env = useTestApp({
  config: () => ({ whatsappGraphUrl: fake.graphUrl, webhookAllowedHosts: ['127.0.0.1'] }),
});
afterAll(async () => {
  await fake?.close();
});

let world: World;
let operations: Operation[];
let unkeyed: ReturnType<typeof operationsOf>['unkeyed'];
beforeAll(async () => {
  const doc = await call(env.app, 'GET', `${PREFIX}/openapi.json`);
  expect(doc.status).toBe(200);
  ({ keyed: operations, unkeyed } = operationsOf(doc.body));
  world = await buildWorld(env, fake);
});

// Callers that are not tenant A: nothing of A's may change, not even its monthly call count.
const STRANGERS: Caller[] = [
  'otherTenant',
  'otherTenantNamingA',
  'unrelatedPartner',
  'revokedKey',
  'revokedPartnerKey',
  'expiredKey',
  'otherTenantAdmin',
  'otherTenantAgent',
  'unrelatedPartnerAdmin',
  // A's agent's refusals are decided before the account is resolved: not even counted.
  'agent',
];
const EVERY_CALLER: Caller[] = [
  'owner',
  'ownPartner',
  'sandbox',
  ...STRANGERS,
  'suspendedKey',
  'suspendedViaPartner',
  'closedKey',
  'closedViaPartner',
];
// A's own status changes: the suspension phase runs them (as its entry and exit), not the controls.
const STATUS_CHANGES = ['suspendAccount', 'reactivateAccount'];

interface Row {
  op: Operation;
  caller: Caller;
  expected: Expected;
  ids?: Record<string, string>;
}

function rowsOf(callers: Caller[], which: 'refusals' | 'successes'): Row[] {
  const rows: Row[] = [];
  for (const op of operations) {
    for (const caller of callers) {
      const { expected, ids } = expectedFor(op, caller);
      if (expected === null || (expected === 'success') !== (which === 'successes')) continue;
      rows.push({ op, caller, expected, ids: ids?.(world) });
    }
  }
  return rows;
}

function pathOf(row: Row, spares?: Record<string, string>): string {
  return row.op.path.replace(/\{(\w+)\}/g, (_, param: string) => {
    const id = row.ids?.[param] ?? spares?.[param] ?? world.ids[fixtureKey(row.op.path, param)];
    if (!id) throw new Error(`no fixture for {${param}} of ${row.op.operationId}`);
    return encodeURIComponent(id);
  });
}

/** Sends the row's request; answers a mismatch line, or null when the answer is the documented one. */
async function run(row: Row, spares?: Record<string, string>): Promise<string | null> {
  const { op, caller, expected } = row;
  const body = op.hasBody ? BODIES[op.operationId]!(world) : undefined;
  const res = await call(env.app, op.method, pathOf(row, spares), {
    ...credentialsOf(world, caller, op),
    body,
  });
  const want = expected === 'success' ? { status: op.success, code: undefined } : expected;
  const code = res.body?.error?.code;
  const where = `${caller.padEnd(20)} ${op.method} ${op.path} (${op.operationId})`;
  const got = `${res.status} ${code ?? ''} ${res.body?.error?.message ?? ''}`.trim();
  if (res.status !== want.status || code !== want.code)
    return `${where}: expected ${want.status} ${want.code ?? ''}, got ${got}`;
  // The answer is the documented one for this caller; the operation's document must list it too.
  if (!documents(op, res.status, code))
    return `${where}: answered ${got}, which the OpenAPI document does not list`;
  return null;
}

async function runAll(rows: Row[], mismatches: string[]): Promise<void> {
  for (const row of rows) {
    const mismatch = await run(row);
    if (mismatch) mismatches.push(mismatch);
  }
}

/** Runs `rows` between two fingerprints of A's rows, and reports any table they changed. */
async function runUnchanged(label: string, rows: Row[], mismatches: string[], skip: string[] = []) {
  const snapshots = new DatabaseSnapshots(env.app.ctx.db, {
    owner: { accountId: world.accountId, partnerId: world.partner.partnerId },
    // A key's last use is written by reading (at most once a minute), not by changing anything.
    // Likewise a console session's.
    ignore: {
      api_keys: ['last_used_at'],
      console_sessions: ['last_seen_at'],
      ...Object.fromEntries(skip.map((t) => [t, 'whole table'])),
    },
  });
  // The calls counted so far are written, and every quota lease handed back, before each snapshot:
  // the usage meter writes in the background (kernel/access/usage-meter.ts), and its write of earlier calls
  // is no change made by this phase.
  await env.app.ctx.usage.flush({ all: true });
  const before = await snapshots.take();
  await runAll(rows, mismatches);
  await env.app.ctx.usage.flush({ all: true });
  const after = await snapshots.take();
  for (const t of changedTables(before, after))
    mismatches.push(`${label} changed ${t}: ${before[t]} → ${after[t]}`);
}

function operation(operationId: string): Operation {
  const op = operations.find((o) => o.operationId === operationId);
  if (!op) throw new Error(`the document has no ${operationId}`);
  return op;
}

/**
 * A's status changed by its partner through the API (the owner row of the operation, on A itself).
 * The process that changes an account drops its cached copy at once (docs/decisions.md, "Caching
 * and revocation"), and this app is that process, so no wait for the one-second cache is needed.
 */
async function changeStatus(operationId: string): Promise<void> {
  const mismatch = await run({ op: operation(operationId), caller: 'owner', expected: 'success' });
  if (mismatch) throw new Error(`could not change A's status: ${mismatch}`);
}

// What a role reads through events is what it reads through the routes of the events' resources
// (docs/history/issue-43.md, events): for every role of A and every event the world made, GET
// /events, GET /events/{id}, the stream and a webhook the role makes show the event exactly when
// the role's GET of each route reading what it carries answers 2xx; other tenants' callers see none
// of A's events. Run before the matrix below, which ends by closing A.
describe('events, streams and webhooks show each role what its routes show', () => {
  it('for every role and every event type the world made', async () => {
    // A's status moves too (account.status_changed), and back.
    for (const move of ['suspend', 'reactivate']) {
      const res = await call(env.app, 'POST', `/partner/accounts/${world.accountId}/${move}`, {
        key: world.partner.partnerKey,
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    const all = await listed(env.app, roleCredentials(world, 'owner', 'account'));
    const types = new Set(all.map((e) => e.type));
    // The cases of the issue are among them: costs and balances, and the inbox's own events.
    for (const type of [
      'wallet.credited',
      'call.status_changed',
      'campaign.status_changed',
      'account.status_changed',
      'template.status_changed',
      'webhook.test',
      'message.received',
      'conversation.opened',
      'contact.created',
    ])
      expect(types, `the world made no ${type}`).toContain(type);
    expect(new Set(all.map((e) => e.data.kind))).toEqual(new Set([undefined, 'message', 'voice']));

    const probe = routeProbe(env.app, world);
    const mismatches: string[] = [];
    const seenBy: Record<string, Set<string>> = {};
    for (const role of [...OWN_ROLES, ...STRANGER_ROLES]) {
      const credentials = roleCredentials(world, role, 'account');
      const expected = new Set<string>();
      if ((OWN_ROLES as readonly string[]).includes(role)) {
        for (const event of all) {
          const answers = await Promise.all(readersOf(event).map((ref) => probe(role, ref)));
          if (answers.every(Boolean)) expected.add(event.id);
        }
      }
      const ofA = (ids: Iterable<string>) => new Set([...ids].filter((id) => all.some((e) => e.id === id)));
      const compare = (way: string, got: Set<string>, want = expected) => {
        for (const e of all) {
          if (got.has(e.id) !== want.has(e.id))
            mismatches.push(
              `${role.padEnd(22)} ${way}: ${e.type}${e.data.kind ? ` (${e.data.kind})` : ''} ${got.has(e.id) ? 'shown, its routes refuse' : 'hidden, its routes show it'}`,
            );
        }
      };
      const list = ofA((await listed(env.app, credentials)).map((e) => e.id));
      compare('GET /events', list);
      seenBy[role] = list;
      const one = new Set<string>();
      for (const e of all) {
        const res = await call(env.app, 'GET', `/events/${e.id}`, credentials);
        if (res.status === 200) one.add(e.id);
        else if (res.status !== 404 && res.status !== 403)
          mismatches.push(`${role} GET /events/${e.id}: ${res.status} ${JSON.stringify(res.body)}`);
      }
      compare('GET /events/{id}', one);
      compare('GET /events/stream', ofA(await streamed(env.app, credentials)));

      // A webhook delivers what its filters take to whoever holds its URL: a role that may make one
      // must see every event it gets (webhook.test events are never replayed); one that may not
      // gets nothing that way.
      const partnerRole = role === 'ownPartner' || role === 'partnerAdmin' || role.startsWith('unrelated');
      for (const partner of partnerRole ? [false, true] : [false]) {
        const hook = await webhookGets(
          env.app,
          roleCredentials(world, role, partner ? 'partner' : 'account'),
          partner,
        );
        const replayable = new Set(
          [...expected].filter((id) => all.find((e) => e.id === id)!.type !== 'webhook.test'),
        );
        if ('ids' in hook) compare(partner ? 'a partner webhook' : 'a webhook', ofA(hook.ids), replayable);
        else if (![403, 404].includes(hook.refused))
          mismatches.push(`${role} making a webhook: ${hook.refused}`);
      }
    }
    expect(mismatches, `${mismatches.length} mismatches:\n${[...new Set(mismatches)].join('\n')}`).toEqual(
      [],
    );

    // The issue's case: an agent reads the inbox's events, not the wallet's, a call's or a campaign's.
    const typesSeen = (role: string) =>
      new Set(all.filter((e) => seenBy[role]!.has(e.id)).map((e) => e.type));
    expect([...typesSeen('agent')]).toEqual(
      expect.arrayContaining(['message.received', 'conversation.opened']),
    );
    for (const type of [
      'wallet.credited',
      'call.status_changed',
      'campaign.status_changed',
      'account.status_changed',
    ])
      expect(typesSeen('agent')).not.toContain(type);
    for (const role of ['owner', 'ownPartner', 'sandbox', 'admin', 'partnerAdmin'])
      expect(typesSeen(role)).toEqual(types);
  }, 60_000);
});

describe('tenant isolation matrix', () => {
  it('covers every operation: each path parameter has a fixture, each write a body, each DELETE a spare', () => {
    const gaps: string[] = [];
    for (const op of unkeyed) {
      if (op.params.length && !NOT_KEYED[op.operationId])
        gaps.push(`${op.operationId} (${op.path}) has a path parameter but no API key; list it in NOT_KEYED`);
    }
    for (const op of operations) {
      for (const param of op.params) {
        if (!world.ids[fixtureKey(op.path, param)])
          gaps.push(`${op.operationId}: no fixture for '${fixtureKey(op.path, param)}' in world.ts`);
      }
      if (op.hasBody && !BODIES[op.operationId]) gaps.push(`${op.operationId}: no body in BODIES`);
      if (op.method === 'DELETE' && op.params.length && !world.spares[op.path])
        gaps.push(`${op.operationId}: no spare fixture for its success row in world.ts`);
    }
    // The console's roles are callers too: an agent has both allowed and refused rows.
    const agentRows = { successes: rowsOf(['agent'], 'successes'), refusals: rowsOf(['agent'], 'refusals') };
    if (agentRows.successes.length < 10 || agentRows.refusals.length < 50)
      gaps.push(
        `the agent has too few rows: ${agentRows.successes.length} allowed, ${agentRows.refusals.length} refused`,
      );
    for (const caller of ['otherTenantAdmin', 'otherTenantAgent', 'unrelatedPartnerAdmin'] as Caller[])
      if (rowsOf([caller], 'refusals').length < 50) gaps.push(`${caller} has too few rows`);
    for (const key of Object.keys(EXCEPTIONS)) {
      if (!operations.some((o) => o.operationId === key.split(':')[0])) gaps.push(`stale exception ${key}`);
    }
    expect(gaps, gaps.join('\n')).toEqual([]);
  });

  it('answers every caller exactly as documented, and refused requests change nothing', async () => {
    const mismatches: string[] = [];
    let rowCount = 0;
    const count = (rows: Row[]) => {
      rowCount += rows.length;
      return rows;
    };

    // Strangers first, while every fixture is as built.
    await runUnchanged('strangers', count(rowsOf(STRANGERS, 'refusals')), mismatches);
    // A's sandbox key on live-only actions: a call that passed authentication counts in A's month
    // whatever its outcome (docs/decisions.md § Limits), so only the usage counters may move.
    await runUnchanged('sandbox refusals', count(rowsOf(['sandbox', 'owner'], 'refusals')), mismatches, [
      'api_usage_monthly',
      'api_usage_daily',
    ]);

    await changeStatus('suspendAccount');
    await runUnchanged(
      'suspended',
      count(rowsOf(['suspendedKey', 'suspendedViaPartner'], 'refusals')),
      mismatches,
    );
    await changeStatus('reactivateAccount');

    // The controls: A's own keys reach every id. Destructive rows last, on spare fixtures, and a
    // resource's children before the resource (untag before deleting the contact).
    const successes = count(rowsOf(['owner', 'ownPartner', 'sandbox', 'agent'], 'successes')).filter(
      (r) => !STATUS_CHANGES.includes(r.op.operationId),
    );
    await runAll(
      successes.filter((r) => r.op.method !== 'DELETE'),
      mismatches,
    );
    const deletions = successes
      .filter((r) => r.op.method === 'DELETE')
      .sort((a, b) => b.op.path.split('/').length - a.op.path.split('/').length);
    for (const row of deletions) {
      const mismatch = await run(row, world.spares[row.op.path]);
      if (mismatch) mismatches.push(mismatch);
    }

    // Closing is final: the last phase.
    await changeStatus('closeAccount');
    await runUnchanged('closed', count(rowsOf(['closedKey', 'closedViaPartner'], 'refusals')), mismatches);

    console.info(
      `isolation matrix: ${operations.length} operations × ${EVERY_CALLER.length} callers, ${rowCount} rows with a case`,
    );
    expect(mismatches, `${mismatches.length} mismatches:\n${mismatches.join('\n')}`).toEqual([]);
  }, 90_000);
});

describe("partners' Meta apps", () => {
  it('two partners, two apps: each payload reaches only the accounts of the partner whose app signed it', async () => {
    const partners = [world.partner, world.unrelatedPartner];
    const clients: { apiKey: string; business: ReturnType<typeof fake.createBusiness>; appSecret: string }[] =
      [];
    for (const [i, partner] of partners.entries()) {
      const appSecret = `app-secret-of-partner-${i}-${Date.now()}`;
      const put = await call(env.app, 'PUT', '/partner/whatsapp-app', {
        key: partner.partnerKey,
        body: { appId: `${1000 + i}`, appSecret, verifyToken: `verify-token-${i}` },
      });
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      const { accountId } = await provision(env.app, partner.partnerKey);
      const { apiKey } = await createAccountKey(env.app, partner.partnerKey, accountId);
      const business = fake.createBusiness({ appSecret });
      const channel = await call(env.app, 'PUT', '/account/channel', {
        key: apiKey,
        body: {
          provider: 'whatsapp_cloud',
          whatsapp: FakeWhatsAppCloud.partnerAppChannelSettings(business),
        },
      });
      expect(channel.status, JSON.stringify(channel.body)).toBe(200);
      clients.push({ apiKey, business, appSecret });
    }

    /** One payload with an entry for each client's number, signed by partner `signer`'s app. */
    const postBoth = async (signer: number) => {
      const entries = clients.flatMap(
        (c, i) =>
          fake.inboundPayload(c.business, { from: `+1415555019${i}`, text: `signed by ${signer}` }).entry,
      );
      const body = JSON.stringify({ object: 'whatsapp_business_account', entry: entries });
      const signature = createHmac('sha256', clients[signer]!.appSecret).update(body).digest('hex');
      return call(env.app, 'POST', '/api/v1/callbacks/whatsapp', {
        body,
        headers: { 'x-hub-signature-256': `sha256=${signature}` },
      });
    };
    for (const signer of [0, 1]) {
      const res = await postBoth(signer);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toEqual({ applied: 1, dropped: 1 });
    }
    for (const [i, c] of clients.entries()) {
      const messages = await call(env.app, 'GET', '/messages', { key: c.apiKey });
      expect(messages.body.data.map((m: any) => m.text)).toEqual([`signed by ${i}`]);
    }
  });
});
