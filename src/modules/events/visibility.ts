// Which events a caller sees. One rule for GET /events, GET /events/{id} and /events/stream: an
// event is shown exactly when the access policy lets the caller call every route that reads what
// the event carries (EVENT_READERS), decided by the policy's own function (kernel/access/access.ts
// refusalOf), so an agent who gets 403 on GET /account/wallet never reads a wallet.credited event.
// The rule is by the caller's kind (key scope, console role); the plan's feature gates (402) are not
// applied: they say "upgrade", not "not yours", and an account that had voice keeps its call events.
//
// Webhooks are not filtered: an endpoint is the account's (or partner's) configuration, delivering
// to whoever holds its URL and secret, and only callers that see every event may make, change or
// replay one (the webhook routes are closed to agents); the isolation matrix holds both halves.
//
// The filter is SQL (visibleCondition), so a list still fills its pages and its cursor stays right.

import { mayCall, type RouteAccess } from '../../kernel/access/access.ts';
import type { Principal } from '../../kernel/access/auth.ts';
import { EVENT_TYPES, type EventType } from '../../kernel/outbox/events.ts';

/** A route as `GET /path/{param}` (the OpenAPI document's spelling, without the /api/v1/public prefix). */
export type RouteRef = `GET /${string}`;

/** The routes whose access an event needs, or, for types about several resources, by `data.kind`. */
export type Readers = RouteRef[] | { byKind: Record<string, RouteRef[]> };

const MESSAGE: RouteRef[] = ['GET /messages/{id}'];
const CONTACT: RouteRef[] = ['GET /contacts/{id}'];
const CONVERSATION: RouteRef[] = ['GET /conversations/{id}'];
const TEMPLATE: RouteRef[] = ['GET /templates/{id}'];
const CHANNEL: RouteRef[] = ['GET /account/channel'];
const JOURNEY_RUN: RouteRef[] = ['GET /journeys/{id}/runs/{runId}'];
const ENROLLMENT: RouteRef[] = ['GET /sequences/{id}/enrollments/{enrollmentId}'];

/** For every event type, the routes that show what it carries. */
export const EVENT_READERS: Record<EventType, Readers> = {
  'message.received': MESSAGE,
  'message.sent': MESSAGE,
  'message.delivered': MESSAGE,
  'message.read': MESSAGE,
  'message.failed': MESSAGE,
  'message.scheduled': MESSAGE,
  'message.canceled': MESSAGE,
  'contact.created': CONTACT,
  'contact.updated': CONTACT,
  'contact.deleted': CONTACT,
  'contact.erased': CONTACT,
  'contact.merged': CONTACT,
  'contact.tagged': CONTACT,
  'contact.untagged': CONTACT,
  'conversation.opened': CONVERSATION,
  'conversation.assigned': CONVERSATION,
  'conversation.closed': CONVERSATION,
  'conversation.sla_breached': CONVERSATION,
  'conversation.labeled': CONVERSATION,
  // The conversation and the note that mentions a member (its text is the notes list's).
  'conversation.mentioned': [...CONVERSATION, 'GET /conversations/{id}/notes'],
  'conversation.snoozed': CONVERSATION,
  'conversation.unsnoozed': CONVERSATION,
  // The conversation, with its survey's answer.
  'csat.received': CONVERSATION,
  'template.status_changed': TEMPLATE,
  'template.quality_changed': TEMPLATE,
  'template.category_changed': TEMPLATE,
  'bulk_job.completed': {
    byKind: {
      contacts: ['GET /bulk/contacts/{jobId}'],
      messages: ['GET /bulk/messages/{jobId}'],
      enrollments: ['GET /bulk/enrollments/{jobId}'],
    },
  },
  // A wallet transaction (the amount, the balance after it, the reference).
  'wallet.credited': ['GET /account/wallet/transactions'],
  'wallet.low_balance': ['GET /account/wallet'],
  // The partner's view of the account, which carries its wallet balance.
  'account.status_changed': ['GET /account', 'GET /account/wallet'],
  'channel.quality_changed': CHANNEL,
  'channel.account_updated': CHANNEL,
  'channel.error': CHANNEL,
  'channel.connected': CHANNEL,
  'channel.disconnected': CHANNEL,
  'call.status_changed': ['GET /voice/calls/{id}'],
  'campaign.status_changed': {
    byKind: { message: ['GET /campaigns/{id}'], voice: ['GET /voice/campaigns/{id}'] },
  },
  'journey_run.completed': JOURNEY_RUN,
  'journey_run.failed': JOURNEY_RUN,
  'rule.run_failed': ['GET /rules/{id}/runs'],
  'enrollment.completed': ENROLLMENT,
  'enrollment.exited': ENROLLMENT,
  'webhook.test': ['GET /webhooks/{id}'],
};

/** What a caller sees: every event, or the classes (`type`, or `type:kind`) listed. */
export type Visible = 'all' | { classes: string[]; kinded: string[] };

/** A route of the app as the access policy reads it, found by its reference. */
export type RouteLookup = (ref: RouteRef) => RouteAccess | undefined;

export class EventVisibility {
  readonly #route: RouteLookup;
  /** By caller kind: the answer depends on nothing else. */
  readonly #byKind = new Map<string, Visible>();

  constructor(route: RouteLookup) {
    this.#route = route;
  }

  /** The events this principal sees. */
  of(principal: Pick<Principal, 'keyScope' | 'console'>): Visible {
    const kind = `${principal.keyScope}:${principal.console?.role ?? ''}`;
    let visible = this.#byKind.get(kind);
    if (!visible) {
      visible = this.#compute(principal);
      this.#byKind.set(kind, visible);
    }
    return visible;
  }

  /** Throws when EVENT_READERS names a route the app does not have (checked as the app starts). */
  check(): void {
    for (const readers of Object.values(EVENT_READERS)) {
      for (const ref of Array.isArray(readers) ? readers : Object.values(readers.byKind).flat()) {
        if (!this.#route(ref)) throw new Error(`EVENT_READERS names ${ref}, which is no route of the app`);
      }
    }
  }

  #compute(principal: Pick<Principal, 'keyScope' | 'console'>): Visible {
    const may = (refs: RouteRef[]) =>
      refs.every((ref) => {
        const route = this.#route(ref);
        return route !== undefined && mayCall(principal, route);
      });
    const classes: string[] = [];
    const kinded: string[] = [];
    let all = true;
    for (const type of EVENT_TYPES) {
      const readers = EVENT_READERS[type];
      if (Array.isArray(readers)) {
        if (may(readers)) classes.push(type);
        else all = false;
        continue;
      }
      const kinds = Object.entries(readers.byKind).filter(([, refs]) => may(refs));
      if (kinds.length === Object.keys(readers.byKind).length) classes.push(type);
      else {
        all = false;
        if (kinds.length > 0) kinded.push(type);
        for (const [kind] of kinds) classes.push(`${type}:${kind}`);
      }
    }
    return all ? 'all' : { classes, kinded };
  }
}

/**
 * The SQL keeping only the visible events (of the `events` table's `type` and `payload` columns,
 * under `alias` when given). `data.kind` is read only for the types whose visibility depends on it.
 */
export function visibleCondition(visible: Visible, params: unknown[], alias = ''): string {
  if (visible === 'all') return 'true';
  const col = (name: string) => (alias ? `${alias}.${name}` : name);
  const classes = `$${params.push(visible.classes)}::text[]`;
  if (visible.kinded.length === 0) return `${col('type')} = ANY(${classes})`;
  const kinded = `$${params.push(visible.kinded)}::text[]`;
  return `(CASE WHEN ${col('type')} = ANY(${kinded})
            THEN ${col('type')} || ':' || coalesce(${col('payload')}::jsonb #>> '{data,kind}', '')
            ELSE ${col('type')} END) = ANY(${classes})`;
}

/** A lookup over the app's route table (ctx.routes), for routes under `prefix`. */
export function routeLookup(
  routes: { method: string; url: string; access: RouteAccess['access']; agents: boolean }[],
  prefix: string,
): RouteLookup {
  return (ref) => {
    const [method, path] = ref.split(' ') as [string, string];
    const url = prefix + path.replace(/\{(\w+)\}/g, ':$1');
    const route = routes.find((r) => r.method === method && r.url === url);
    return route && { access: route.access, agents: route.agents };
  };
}
