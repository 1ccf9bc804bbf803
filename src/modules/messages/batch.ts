// Preparing one message for each of many recipients (estimates and bulk sends): the same checks as
// a single send, with the template looked up once. What concerns the whole batch (an unknown or
// unapproved template) refuses the whole request; what concerns one recipient (a bad number, a
// wrong parameter count, a closed service window) is that recipient's error only.
import type { TemplateParameters } from '../../channels/types.ts';
import type { Sql } from '../../kernel/database/db.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import type { ApprovedTemplates } from '../templates/index.ts';
import type { SendFieldsInput } from './content.ts';
import { type PreparedMessage, prepareMessage, templateLookup } from './prepare.ts';

export interface RecipientInput {
  to: string;
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
  const out: PreparedRecipient[] = [];
  for (const [index, r] of recipients.entries()) {
    const own = r.parameters !== undefined;
    try {
      const prepared = await prepareMessage(
        { ...fields, to: r.to, ...(own ? { parameters: r.parameters } : {}) },
        {
          countryCode: account.countryCode,
          lookup,
          toField: `recipients[${index}].to`,
          parametersField: own ? `recipients[${index}].parameters` : 'parameters',
        },
      );
      out.push({ index, to: prepared.to, prepared, error: null });
    } catch (err) {
      if (!(err instanceof ApiError) || WHOLE_BATCH.has(err.code)) throw err;
      out.push({ index, to: r.to, prepared: null, error: err });
    }
  }
  return out;
}

/** The last inbound message of each of these numbers' contacts (none: no contact, or never wrote). */
export async function lastInboundOf(
  sql: Sql,
  accountId: string,
  phones: string[],
): Promise<Map<string, Date | null>> {
  const { rows } = await sql.query<{ phone: string; last_inbound_at: Date | null }>(
    'SELECT phone, last_inbound_at FROM contacts WHERE account_id = $1 AND phone = ANY($2::text[])',
    [accountId, phones],
  );
  return new Map(rows.map((r) => [r.phone, r.last_inbound_at]));
}
