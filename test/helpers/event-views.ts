// What a caller sees of tenant A's events through each way of reading them (GET /events,
// GET /events/{id}, /events/stream, a webhook it makes), and what the routes that read the events'
// resources show it, for the isolation matrix (test/security/isolation-matrix.test.ts).
import { expect } from 'vitest';
import type { App } from '../../src/app.ts';
import type { EventType } from '../../src/kernel/outbox/events.ts';
import { EVENT_READERS, type RouteRef } from '../../src/modules/events/visibility.ts';
import { type CallOptions, call, type Reply } from './client.ts';
import { fixtureKey } from './isolation-rules.ts';
import type { World } from './world.ts';

/** A's own callers, each role the API and the console know; and callers of other tenants. */
export const OWN_ROLES = ['owner', 'ownPartner', 'sandbox', 'admin', 'partnerAdmin', 'agent'] as const;
export const STRANGER_ROLES = [
  'otherTenant',
  'otherTenantAdmin',
  'otherTenantAgent',
  'unrelatedPartner',
  'unrelatedPartnerAdmin',
] as const;
export type EventRole = (typeof OWN_ROLES)[number] | (typeof STRANGER_ROLES)[number];

/** The credentials of a role on an account route (partners name A), or on a partner route. */
export function roleCredentials(world: World, role: EventRole, route: 'account' | 'partner'): CallOptions {
  const namingA = route === 'account' ? world.accountId : undefined;
  switch (role) {
    case 'owner':
      return { key: world.keys.live };
    case 'ownPartner':
      return { key: world.partner.partnerKey, accountId: namingA };
    case 'sandbox':
      return { key: world.keys.sandbox };
    case 'otherTenant':
      return { key: world.keys.otherTenant };
    case 'unrelatedPartner':
      return { key: world.unrelatedPartner.partnerKey, accountId: namingA };
    case 'partnerAdmin':
    case 'unrelatedPartnerAdmin':
      return { ...world.sessions[role], accountId: namingA };
    default:
      return world.sessions[role];
  }
}

export interface StoredEvent {
  id: string;
  type: EventType;
  data: { kind?: string };
}

/** Every event the role's GET /events lists (all pages; none when it is refused). */
export async function listed(app: App, credentials: CallOptions): Promise<StoredEvent[]> {
  const out: StoredEvent[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 100; page++) {
    const res: Reply = await call(app, 'GET', '/events', {
      ...credentials,
      query: { limit: '100', ...(cursor ? { cursor } : {}) },
    });
    if (res.status !== 200) return out;
    // Full pages: a page is short only when it is the last.
    if (res.body.nextCursor) expect(res.body.data).toHaveLength(100);
    out.push(...res.body.data);
    cursor = res.body.nextCursor;
    if (!cursor) return out;
  }
  throw new Error('GET /events: more pages than expected');
}

/** The events an injected /events/stream replays from the start (an injected request ends at once). */
export async function streamed(app: App, credentials: CallOptions): Promise<string[]> {
  const res = await call(app, 'GET', '/events/stream', {
    ...credentials,
    query: { since: '2000-01-01T00:00:00Z' },
  });
  if (res.status !== 200) return [];
  return [...String(res.body).matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!).id as string);
}

/**
 * The events a webhook made by the role with every event (`*`) gets, replayed from the start; null
 * when the role may not make one. `partner`: a partner webhook (A's events among its accounts').
 */
export async function webhookGets(
  app: App,
  credentials: CallOptions,
  partner: boolean,
): Promise<{ ids: string[] } | { refused: number }> {
  const base = partner ? '/partner/webhooks' : '/webhooks';
  const made = await call(app, 'POST', base, {
    ...credentials,
    body: { url: 'http://127.0.0.1:9/events-matrix', events: ['*'] },
  });
  if (made.status !== 201) return { refused: made.status };
  const hook = `${base}/${made.body.id}`;
  try {
    const replay = await call(app, 'POST', `${hook}/replay`, {
      ...credentials,
      body: { since: '2000-01-01T00:00:00Z' },
    });
    expect(replay.status, JSON.stringify(replay.body)).toBe(202);
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const res: Reply = await call(app, 'GET', `${hook}/deliveries`, {
        ...credentials,
        query: { limit: '100', ...(cursor ? { cursor } : {}) },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ids.push(...res.body.data.map((d: { eventId: string }) => d.eventId));
      cursor = res.body.nextCursor;
    } while (cursor);
    return { ids };
  } finally {
    const gone = await call(app, 'DELETE', hook, credentials);
    expect(gone.status, JSON.stringify(gone.body)).toBe(204);
  }
}

/** The routes that read what an event carries. */
export function readersOf(event: StoredEvent): RouteRef[] {
  const readers = EVENT_READERS[event.type];
  if (Array.isArray(readers)) return readers;
  const refs = readers.byKind[event.data.kind ?? ''];
  if (!refs) throw new Error(`${event.type} of kind ${event.data.kind} has no readers`);
  return refs;
}

/**
 * Whether the role's GET of the route answers 2xx, with A's fixtures in its path (memoised: the
 * answer depends on the role and the route only).
 */
export function routeProbe(app: App, world: World) {
  const answers = new Map<string, Promise<boolean>>();
  return (role: EventRole, ref: RouteRef): Promise<boolean> => {
    const key = `${role} ${ref}`;
    let answer = answers.get(key);
    if (!answer) {
      const template = ref.slice('GET '.length);
      const path = template.replace(/\{(\w+)\}/g, (_, param: string) => {
        const id = world.ids[fixtureKey(template, param)];
        if (!id) throw new Error(`no fixture for {${param}} of ${ref}`);
        return encodeURIComponent(id);
      });
      answer = call(app, 'GET', path, roleCredentials(world, role, 'account')).then(
        (res) => res.status >= 200 && res.status < 300,
      );
      answers.set(key, answer);
    }
    return answer;
  };
}
