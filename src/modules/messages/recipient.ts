// Who a send goes to, as a request names them: exactly one of `to` (a number), `contactId` (that
// contact's chat: its number, or its WhatsApp user id when it has none) or `whatsappUserId` (a
// customer Meta knows by that id, with or without a number). POST /messages, its estimate, bulk
// sends and replies all name recipients this way (docs/messaging.md § Who a customer is).
import type { Sql } from '../../kernel/database/db.ts';
import type { FieldIssue } from '../../kernel/http/errors.ts';
import { notFound } from '../../kernel/http/errors.ts';
import { currentContactId, invalidFields, recipientOf } from '../contacts/index.ts';
import type { Recipient } from './prepare.ts';

export interface RecipientInput {
  to?: string;
  contactId?: string;
  whatsappUserId?: string;
}

/** What naming a recipient came to: the recipient, a field's problem, or an unknown contact. */
export type ResolvedRecipient =
  | { kind: 'recipient'; recipient: Recipient }
  | { kind: 'invalid'; issue: FieldIssue }
  | { kind: 'unknown_contact'; contactId: string };

type Addresses = { phone: string | null; whatsapp_user_id: string | null };

async function addressesOf(sql: Sql, accountId: string, ids: string[]): Promise<Map<string, Addresses>> {
  if (ids.length === 0) return new Map();
  const { rows } = await sql.query<Addresses & { id: string }>(
    'SELECT id, phone, whatsapp_user_id FROM contact_rows WHERE account_id = $1 AND id = ANY($2::text[])',
    [accountId, ids],
  );
  return new Map(rows.map((r) => [r.id, r]));
}

/**
 * The recipient each input names (`field(name)` says where its fields are, for errors), the
 * contacts named by id read in one statement. Nothing is made here: a new number or user id gets
 * its contact when the send is accepted.
 */
export async function resolveRecipients(
  sql: Sql,
  accountId: string,
  inputs: RecipientInput[],
  field: (index: number, name: string) => string,
): Promise<ResolvedRecipient[]> {
  const ids = [...new Set(inputs.flatMap((r) => (r.contactId === undefined ? [] : [r.contactId])))];
  const contacts = await addressesOf(sql, accountId, ids);
  // An id of a contact merged into another names the survivor (rare: looked up one by one).
  for (const id of ids.filter((i) => !contacts.has(i))) {
    const survivor = await currentContactId(sql, accountId, id);
    const found = survivor === id ? undefined : (await addressesOf(sql, accountId, [survivor])).get(survivor);
    if (found) contacts.set(id, found);
  }
  return inputs.map((input, i): ResolvedRecipient => {
    const given = (['to', 'contactId', 'whatsappUserId'] as const).filter((k) => input[k] !== undefined);
    if (given.length !== 1) {
      return {
        kind: 'invalid',
        issue: {
          field: field(i, given[1] ?? 'to'),
          issue: 'name the recipient by exactly one of to, contactId or whatsappUserId',
        },
      };
    }
    if (input.to !== undefined) return { kind: 'recipient', recipient: { to: input.to } };
    if (input.whatsappUserId !== undefined)
      return { kind: 'recipient', recipient: { whatsappUserId: input.whatsappUserId } };
    const contact = contacts.get(input.contactId!);
    return contact
      ? { kind: 'recipient', recipient: recipientOf(contact) }
      : { kind: 'unknown_contact', contactId: input.contactId! };
  });
}

/** The one recipient a request names, or the 400 (its field) or 404 (an unknown contact) it gets. */
export async function resolveRecipient(
  sql: Sql,
  accountId: string,
  input: RecipientInput,
): Promise<Recipient> {
  const [named] = await resolveRecipients(sql, accountId, [input], (_, name) => name);
  if (named!.kind === 'invalid') throw invalidFields([named!.issue]);
  if (named!.kind === 'unknown_contact') throw notFound('contact');
  return named!.recipient;
}
