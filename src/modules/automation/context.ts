// What an automation run knows about its event: the contact it is about, the message (for message
// events), the contact's latest conversation, the time in the contact's zone, and the event's
// previous values (for changed, changed_to, changed_from). The same object is the scope of Liquid
// templates (`{{ contact.name }}`, `{{ event.data.… }}`, `{{ run.vars.… }}`).
import type { Sql } from '../../kernel/database/db.ts';
import type { EventEnvelope } from '../../kernel/outbox/events.ts';
import type { ContactRow } from '../contacts/index.ts';
import { contactCountry, toContact } from '../contacts/index.ts';
import { type BusinessHours, isOpenAt } from './business-hours.ts';
import type { Context } from './conditions.ts';
import { contactZone, localTime } from './time.ts';

export interface RunScope {
  contact: (ReturnType<typeof toContact> & { country: string | null }) | null;
  message: { text: string | null; type: string; buttonId: string | null } | null;
  conversation: {
    id: string;
    status: string;
    assigneeId: string | null;
    teamId: string | null;
    labels: string[];
  } | null;
  event: { id: string; type: string; data: Record<string, unknown> };
  /** `businessHours`: the account's, `open` or `closed` (always open without them); absent where not read. */
  time: { localHour: number; weekday: number; zone: string; businessHours?: 'open' | 'closed' };
  run: { vars: Record<string, unknown> };
}

/** The contact an event is about: the contact itself, or the one of its message or conversation. */
export function contactIdOf(event: EventEnvelope): string | null {
  const data = event.data as Record<string, unknown>;
  if (event.type.startsWith('contact.')) return typeof data.id === 'string' ? data.id : null;
  return typeof data.contactId === 'string' ? data.contactId : null;
}

function messageOf(event: EventEnvelope): RunScope['message'] {
  if (!event.type.startsWith('message.')) return null;
  const m = event.data as {
    type: string;
    text?: string | null;
    button?: { text?: string; payload?: string } | null;
    interactive?: { id?: string; title?: string } | null;
    media?: { caption?: string | null } | null;
  };
  return {
    text: m.text ?? m.button?.text ?? m.interactive?.title ?? m.media?.caption ?? null,
    type: m.type,
    buttonId: m.interactive?.id ?? m.button?.payload ?? null,
  };
}

export async function loadScope(sql: Sql, event: EventEnvelope, now: Date): Promise<RunScope> {
  const data = event.data as Record<string, unknown>;
  const conversationId = event.type.startsWith('conversation.') ? data.id : data.conversationId;
  return scopeFor(sql, event.accountId!, contactIdOf(event), { ...event, data: data }, now, {
    message: messageOf(event),
    conversationId: typeof conversationId === 'string' ? conversationId : null,
  });
}

/**
 * The scope of a run about a contact: the contact, its conversation (the one named, else its
 * latest), the time in its zone; `event` is what `{{ event.… }}` reads.
 */
export async function scopeFor(
  sql: Sql,
  accountId: string,
  contactId: string | null,
  event: RunScope['event'],
  now: Date,
  about: { message?: RunScope['message']; conversationId?: string | null } = {},
): Promise<RunScope> {
  // The contact and its conversation in one round trip (a run reads its scope once or more per event).
  const { rows } = await sql.query<
    Partial<ContactRow> & { conv: ConversationRef | null; hours: BusinessHours | null }
  >(
    `SELECT c.*,
            (SELECT json_build_object('id', v.id, 'status', v.status, 'assignee_id', v.assignee_id,
                                      'labels', v.labels, 'team_id', v.team_id)
               FROM conversations v
              WHERE v.account_id = $1
                AND ((($2::text) IS NOT NULL AND v.id = $2) OR (($2::text) IS NULL AND v.contact_id = $3))
              ORDER BY v.opened_at DESC LIMIT 1) AS conv,
            (SELECT json_build_object('timezone', h.timezone, 'weekly', h.weekly, 'holidays', h.holidays)
               FROM account_business_hours h WHERE h.account_id = $1) AS hours
       FROM (SELECT 1) one LEFT JOIN contact_rows c ON c.account_id = $1 AND c.id = $3`,
    [accountId, about.conversationId ?? null, contactId],
  );
  const { conv, hours, ...contact } = rows[0]!;
  const row = contact.id ? (contact as ContactRow) : null;
  const scope = scopeOf(row, conv, event, now, about.message ?? null);
  scope.time.businessHours = !hours || isOpenAt(hours, now) ? 'open' : 'closed';
  return scope;
}

export interface ConversationRef {
  id: string;
  status: string;
  assignee_id: string | null;
  labels?: string[];
  team_id?: string | null;
}

/** The scope from what was read: the contact row, its conversation, the event. */
export function scopeOf(
  row: ContactRow | null,
  conversation: ConversationRef | null,
  event: RunScope['event'],
  now: Date,
  message: RunScope['message'] = null,
): RunScope {
  const contact = row ? { ...toContact(row), country: contactCountry(row) } : null;
  const zone = contactZone(
    contact ? { attributes: contact.attributes, country: contact.country } : null,
    'UTC',
  );
  const c = conversation;
  return {
    contact,
    message,
    conversation: c
      ? {
          id: c.id,
          status: c.status,
          assigneeId: c.assignee_id,
          teamId: c.team_id ?? null,
          labels: c.labels ?? [],
        }
      : null,
    event: { id: event.id, type: event.type, data: event.data as Record<string, unknown> },
    time: { ...localTime(now, zone), zone },
    run: { vars: {} },
  };
}

function at(value: unknown, path: string[]): unknown {
  let v = value;
  for (const key of path) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** A field's value in the scope (`contact.attributes.plan`, `event.data.total`, `time.localHour`). */
export function fieldValue(scope: RunScope, field: string): unknown {
  return at(scope, field.split('.'));
}

/**
 * The field's value before the event, where the event says it: `previous` of contact.updated,
 * `previousStatus` of status changes, the tags before a contact.tagged or contact.untagged.
 */
export function previousOf(scope: RunScope, field: string): { known: boolean; value?: unknown } {
  const data = scope.event.data;
  const [kind, name] = field.split('.', 2);
  if (field === 'contact.tags' && scope.contact) {
    const added = (data.tagsAdded as string[] | undefined) ?? [];
    const removed = (data.tagsRemoved as string[] | undefined) ?? [];
    if (added.length === 0 && removed.length === 0) return { known: false };
    return { known: true, value: [...scope.contact.tags.filter((t) => !added.includes(t)), ...removed] };
  }
  if (name === 'status' && scope.event.type.startsWith(`${kind}.`) && 'previousStatus' in data) {
    return { known: true, value: data.previousStatus };
  }
  const previous = data.previous as Record<string, unknown> | undefined;
  if (kind === 'contact' && previous) {
    const path = field.split('.').slice(1);
    const top = path[0]!;
    if (!Object.hasOwn(previous, top)) return { known: false };
    return { known: true, value: at(previous, path) };
  }
  return { known: false };
}

export function conditionContext(scope: RunScope): Context {
  return { values: (f) => fieldValue(scope, f), previous: (f) => previousOf(scope, f) };
}
