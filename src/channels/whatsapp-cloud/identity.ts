// A customer's WhatsApp identity changing, as Meta reports it (docs/history/issue-45-meta-identity.md
// §§ 4–5):
//   - a `system` message on the messages field: `user_changed_number` (the customer moved to a new
//     number: `system.wa_id`, with a new user id `system.user_id`; `from` is the old number) or
//     `user_changed_user_id` (only the user id changed). The previous user id is
//     `system.previous_user_id` (Meta's changelog, August 2026); where it is missing, the body's
//     "changed from <old> to <new>" names it. Before user ids, the new number was `new_wa_id` and
//     the type could be `customer_changed_number`;
//   - the `user_id_update` field ({user_id: {previous, current}}), documented in spring 2026 and
//     withdrawn by Meta in August ("not a subscribable webhook field"): read where it still comes.
// Neither is a message the customer wrote: it opens no service window and is not stored as one.
import { fromProviderDigits, providerDigits } from '../../kernel/values/phones.ts';
import { providerUserId } from '../../kernel/values/whatsapp-user-ids.ts';
import type { ProviderUpdate } from '../types.ts';
import { isRecord, type Json, records, unixSeconds } from './json.ts';

type IdentityChange = Extract<ProviderUpdate, { kind: 'identity_change' }>;

const NUMBER_CHANGES = new Set(['user_changed_number', 'customer_changed_number']);

/** "User Ann changed from US.123 to US.456": the two things named, old and new. */
function namedInBody(body: unknown): { from: string; to: string } | null {
  const found = typeof body === 'string' ? /changed from (\S+) to (\S+?)\.?$/.exec(body.trim()) : null;
  return found ? { from: found[1]!, to: found[2]! } : null;
}

/** The identity change a `system` message reports, or null for any other message. */
export function identityChangeOf(message: unknown): IdentityChange | null {
  if (!isRecord(message) || message.type !== 'system' || !isRecord(message.system)) return null;
  const system = message.system;
  const type = typeof system.type === 'string' ? system.type : '';
  const change = NUMBER_CHANGES.has(type) ? 'number' : type === 'user_changed_user_id' ? 'user_id' : null;
  const at = unixSeconds(message.timestamp);
  if (!change || !at) return null;
  const newNumber = system.wa_id ?? system.new_wa_id;
  const current = {
    phone: fromProviderDigits(newNumber),
    waId: providerDigits(newNumber),
    userId: providerUserId(system.user_id),
    parentUserId: providerUserId(system.parent_user_id),
  };
  const body = namedInBody(system.body);
  const bodyUserId = body && providerUserId(body.from)?.includes('.') ? body.from : null;
  const fromUserId = providerUserId(message.from_user_id);
  const previous = {
    phone: fromProviderDigits(message.from),
    userId:
      providerUserId(system.previous_user_id) ??
      bodyUserId ??
      (fromUserId && fromUserId !== current.userId ? fromUserId : null),
  };
  // Nothing names whom it was about, or nothing new is said: nothing to change.
  if (!previous.phone && !previous.userId) return null;
  if (!current.phone && !current.userId) return null;
  return { kind: 'identity_change', change, previous, current, at };
}

/** The withdrawn `user_id_update` field: each user id's previous and current value. */
export function userIdUpdateChange(value: Json, entryTime: unknown): ProviderUpdate[] {
  const updates = records(value.user_id_update);
  if (updates.length === 0) return [{ kind: 'unknown', field: 'user_id_update', raw: value }];
  return updates.map((u): ProviderUpdate => {
    const ids = isRecord(u.user_id) ? u.user_id : {};
    const parents = isRecord(u.parent_user_id) ? u.parent_user_id : {};
    const previousUserId = providerUserId(ids.previous);
    const userId = providerUserId(ids.current);
    const at = unixSeconds(u.timestamp) ?? unixSeconds(entryTime) ?? new Date();
    if (!userId || (!previousUserId && !u.wa_id)) return { kind: 'unknown', field: 'user_id_update', raw: u };
    return {
      kind: 'identity_change',
      change: 'user_id',
      previous: { phone: fromProviderDigits(u.wa_id), userId: previousUserId },
      current: { phone: null, waId: null, userId, parentUserId: providerUserId(parents.current) },
      at,
    };
  });
}
