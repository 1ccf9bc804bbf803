// Preparing one message for each of many recipients (estimates and bulk sends): the same checks as
// a single send, with the template looked up once. What concerns the whole batch (an unknown or
// unapproved template) refuses the whole request; what concerns one recipient (a bad number, a
// wrong parameter count, an unknown contact, a closed service window) is that recipient's error only.
import type { TemplateParameters } from '../../channels/types.ts';
import type { Sql } from '../../kernel/database/db.ts';
import { ApiError, notFound } from '../../kernel/http/errors.ts';
import { invalidFields } from '../contacts/index.ts';
import type { ApprovedTemplates } from '../templates/index.ts';
import type { SendFieldsInput } from './content.ts';
import { type PreparedMessage, prepareMessage, templateLookup } from './prepare.ts';
import { type RecipientInput as NamedRecipient, resolveRecipients } from './recipient.ts';

/** One recipient of a list: named as a send names one, with its own template parameters if any. */
export interface RecipientInput extends NamedRecipient {
  parameters?: TemplateParameters;
}

export type PreparedRecipient = { index: number; to: string } & (
  | { prepared: PreparedMessage; error: null }
  | { prepared: null; error: ApiError }
);

/** Errors that concern every recipient alike. */
const WHOLE_BATCH = new Set(['RESOURCE_NOT_FOUND', 'TEMPLATE_NOT_APPROVED']);

export async function prepareRecipients(
  sql: Sql,
  approved: ApprovedTemplates,
  account: { id: string; countryCode: string },
  fields: SendFieldsInput,
  recipients: RecipientInput[],
): Promise<PreparedRecipient[]> {
  const lookup = templateLookup(sql, account.id, approved);
  const named = await resolveRecipients(sql, account.id, recipients, (i, name) => `recipients[${i}].${name}`);
  const out: PreparedRecipient[] = [];
  for (const [index, r] of recipients.entries()) {
    // As the request named it, for a recipient refused before it had an address.
    const given = r.to ?? r.whatsappUserId ?? r.contactId ?? '';
    const n = named[index]!;
    if (n.kind === 'invalid') {
      out.push({ index, to: given, prepared: null, error: invalidFields([n.issue]) });
      continue;
    }
    if (n.kind === 'unknown_contact') {
      out.push({ index, to: given, prepared: null, error: notFound('contact') });
      continue;
    }
    const own = r.parameters !== undefined;
    try {
      const prepared = await prepareMessage(
        { ...fields, ...n.recipient, ...(own ? { parameters: r.parameters } : {}) },
        {
          countryCode: account.countryCode,
          lookup,
          toField: `recipients[${index}].to`,
          whatsappUserIdField: `recipients[${index}].whatsappUserId`,
          parametersField: own ? `recipients[${index}].parameters` : 'parameters',
        },
      );
      out.push({ index, to: prepared.to, prepared, error: null });
    } catch (err) {
      if (!(err instanceof ApiError) || WHOLE_BATCH.has(err.code)) throw err;
      out.push({ index, to: given, prepared: null, error: err });
    }
  }
  return out;
}

/**
 * The last inbound message of the contacts at these addresses (numbers or user ids), by address
 * (none: no contact, or never wrote).
 */
export async function lastInboundOf(
  sql: Sql,
  accountId: string,
  addresses: string[],
): Promise<Map<string, Date | null>> {
  const { rows } = await sql.query<{
    phone: string | null;
    whatsapp_user_id: string | null;
    last_inbound_at: Date | null;
  }>(
    `SELECT phone, whatsapp_user_id, last_inbound_at FROM contacts
      WHERE account_id = $1 AND (phone = ANY($2::text[]) OR whatsapp_user_id = ANY($2::text[]))`,
    [accountId, addresses],
  );
  const found = new Map<string, Date | null>();
  for (const r of rows)
    for (const address of [r.phone, r.whatsapp_user_id]) if (address) found.set(address, r.last_inbound_at);
  return found;
}
