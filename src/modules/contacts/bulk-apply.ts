// Contacts written many at a time, for bulk import: each row is checked exactly as POST /contacts
// checks a body, and a chunk of rows is applied with a handful of statements, whatever its size.
import type { Tx } from '../../kernel/database/db.ts';
import { validationIssues } from '../../kernel/http/error-handler.ts';
import { ApiError } from '../../kernel/http/errors.ts';
import { boundedValidators } from '../../kernel/http/validator.ts';
import { newId } from '../../kernel/values/ids.ts';
import { invalidFields, type NormalizedFields, normalizeFields } from './fields.ts';
import { CONTACT_COLUMNS, type ContactRow, type ContactValues } from './repo.ts';
import { CreateContactBody } from './schemas.ts';
import { mergeFields, phoneConflict, valuesOf } from './service.ts';

const validateInput = boundedValidators(
  { strict: false, coerceTypes: false },
  { eager: true },
)(CreateContactBody);

export type CheckedRow = { fields: NormalizedFields & { phone: string } } | { error: ApiError };

/** Checks one bulk row as POST /contacts would check its body. */
export function checkRow(item: unknown, country: string): CheckedRow {
  if (!validateInput(item)) {
    return { error: invalidFields(validationIssues(validateInput.errors ?? [], 'body')) };
  }
  try {
    const fields = normalizeFields(item as Parameters<typeof normalizeFields>[0], country);
    return { fields: { ...fields, phone: fields.phone! } };
  } catch (err) {
    if (err instanceof ApiError) return { error: err };
    throw err;
  }
}

export interface AppliedRow {
  index: number;
  outcome: 'created' | 'updated' | 'failed';
  contact: ContactRow | null;
  error: ApiError | null;
}

const RECORD = `id text, phone text, name text, email text, tags text[], attributes jsonb, opted_in boolean, marketing_opt_out boolean`;

function recordsOf(rows: { id: string; values: ContactValues }[]): string {
  return JSON.stringify(
    rows.map(({ id, values: v }) => ({
      id,
      phone: v.phone,
      name: v.name,
      email: v.email,
      tags: v.tags,
      attributes: v.attributes,
      opted_in: v.optedIn,
      marketing_opt_out: v.marketingOptOut,
    })),
  );
}

/**
 * Applies rows whose phones are all different. `create` fails a row whose phone the account
 * already has; `upsert` updates that contact instead.
 *
 * Inserting comes first, as one statement that skips the phones already taken: an import of new
 * contacts (the usual case) is then that one statement. Only the rows it skipped are looked up,
 * locked, and updated or failed.
 */
export async function applyContactRows(
  tx: Tx,
  accountId: string,
  rows: { index: number; fields: NormalizedFields & { phone: string } }[],
  mode: 'upsert' | 'create',
  now: Date,
): Promise<AppliedRow[]> {
  // The rows written are known here (ids, values, the time); only ids come back from the writes.
  const rowOf = (id: string, values: ContactValues, before?: ContactRow): ContactRow => ({
    id,
    account_id: accountId,
    phone: values.phone,
    name: values.name,
    email: values.email,
    tags: values.tags,
    attributes: values.attributes,
    opted_in: values.optedIn,
    marketing_opt_out: values.marketingOptOut,
    created_at: before?.created_at ?? now,
    updated_at: now,
    last_inbound_at: before?.last_inbound_at ?? null,
    wa_id: before?.wa_id ?? null,
    whatsapp_user_id: before?.whatsapp_user_id ?? null,
    whatsapp_parent_user_id: before?.whatsapp_parent_user_id ?? null,
    whatsapp_username: before?.whatsapp_username ?? null,
  });

  const attempts = rows.map(({ index, fields }) => ({
    index,
    fields,
    id: newId('contact'),
    values: valuesOf(fields),
  }));
  const { rows: inserted } = await tx.query<{ id: string }>(
    `INSERT INTO contacts (id, account_id, phone, name, email, tags, attributes, opted_in, marketing_opt_out,
                           created_at, updated_at)
     SELECT r.id, $1, r.phone, r.name, r.email, coalesce(r.tags, '{}'), coalesce(r.attributes, '{}'), r.opted_in,
            r.marketing_opt_out, $3, $3
       FROM jsonb_to_recordset($2::jsonb) AS r (${RECORD})
     ON CONFLICT (account_id, phone) DO NOTHING
     RETURNING id`,
    [accountId, recordsOf(attempts), now],
  );
  const written = new Set(inserted.map((c) => c.id));
  const outcomes = new Map<number, AppliedRow>();
  const taken: typeof attempts = [];
  for (const attempt of attempts) {
    if (written.has(attempt.id)) {
      outcomes.set(attempt.index, {
        index: attempt.index,
        outcome: 'created',
        contact: rowOf(attempt.id, attempt.values),
        error: null,
      });
    } else taken.push(attempt);
  }

  if (taken.length > 0) {
    const { rows: found } = await tx.query<ContactRow>(
      `SELECT ${CONTACT_COLUMNS} FROM contacts WHERE account_id = $1 AND phone = ANY($2::text[]) FOR UPDATE`,
      [accountId, taken.map((t) => t.fields.phone)],
    );
    const existing = new Map(found.map((c) => [c.phone, c]));
    const updates: { index: number; id: string; values: ContactValues; before: ContactRow }[] = [];
    for (const { index, fields } of taken) {
      const current = existing.get(fields.phone);
      // Gone again since the insert skipped it (deleted meanwhile): report the conflict seen.
      if (!current || mode === 'create') {
        outcomes.set(index, {
          index,
          outcome: 'failed',
          contact: null,
          error: phoneConflict(current?.id ?? 'unknown'),
        });
      } else {
        try {
          updates.push({ index, id: current.id, values: mergeFields(current, fields), before: current });
        } catch (err) {
          if (!(err instanceof ApiError)) throw err;
          outcomes.set(index, { index, outcome: 'failed', contact: null, error: err });
        }
      }
    }
    if (updates.length > 0) {
      await tx.query(
        `UPDATE contacts c
            SET name = r.name, email = r.email, tags = r.tags, attributes = r.attributes,
                opted_in = r.opted_in, marketing_opt_out = r.marketing_opt_out, updated_at = $3
           FROM jsonb_to_recordset($2::jsonb) AS r (${RECORD})
          WHERE c.account_id = $1 AND c.id = r.id`,
        [accountId, recordsOf(updates), now],
      );
      for (const { index, id, values, before } of updates) {
        outcomes.set(index, { index, outcome: 'updated', contact: rowOf(id, values, before), error: null });
      }
    }
  }
  return rows.map((r) => outcomes.get(r.index)!);
}
