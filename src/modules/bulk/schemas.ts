import { Type } from 'typebox';
import { NullableTimestamp, nullable, Timestamp } from '../../kernel/http/schemas.ts';
import type { BulkJobRow, ItemResult } from './repo.ts';

/** Items per POST /bulk/contacts (the published API's limit: docs/api.md, docs/decisions.md § Bulk contact import). */
export const MAX_BULK_CONTACTS = 1000;

export const BulkContactsBody = Type.Object(
  {
    contacts: Type.Array(
      Type.Unknown({
        description:
          'A contact, as the body of POST /contacts (`ContactInput`). Each is checked on its own when the job runs: one that fails gets its own error in `results`, and the others go in.',
      }),
      { minItems: 1, maxItems: MAX_BULK_CONTACTS },
    ),
    mode: Type.Optional(
      Type.Union([Type.Literal('upsert'), Type.Literal('create')], {
        default: 'upsert',
        description:
          'upsert: a phone the account already has updates that contact with the fields given; create: it fails that row with CONFLICT.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const BulkJobParams = Type.Object({ jobId: Type.String({ maxLength: 100 }) });

const JobError = Type.Object({
  code: Type.String(),
  message: Type.String(),
  details: Type.Optional(
    Type.Array(Type.Object({ field: Type.String(), issue: Type.String() }, { additionalProperties: true })),
  ),
});

const BulkContactResult = Type.Object({
  index: Type.Integer({ description: 'Position of the item in `contacts`, from 0.' }),
  outcome: Type.Union([Type.Literal('created'), Type.Literal('updated'), Type.Literal('failed')]),
  contactId: nullable(Type.String()),
  error: nullable(JobError),
});

export const jobProperties = {
  jobId: Type.String({ examples: ['job_01jv4e2k7qf3x8m2n5p6r9s0tb'] }),
  status: Type.Union(
    [Type.Literal('queued'), Type.Literal('processing'), Type.Literal('completed'), Type.Literal('failed')],
    {
      description:
        'queued → processing → completed (every item has its outcome, some may have failed) or failed (the job itself could not finish; see `error`).',
    },
  ),
  total: Type.Integer(),
  processed: Type.Integer(),
  succeeded: Type.Integer(),
  failed: Type.Integer(),
  error: nullable(JobError),
  createdAt: Timestamp,
  startedAt: NullableTimestamp,
  completedAt: NullableTimestamp,
};

const contactJobProperties = {
  ...jobProperties,
  mode: Type.Union([Type.Literal('upsert'), Type.Literal('create')]),
};

export const BulkContactJobSummary = Type.Object(contactJobProperties, { title: 'BulkContactJobSummary' });

export const BulkContactJob = Type.Object(
  {
    ...contactJobProperties,
    results: Type.Array(BulkContactResult, { description: 'One per processed item, in item order.' }),
  },
  { title: 'BulkContactJob' },
);

/** What every bulk job shows, whatever its kind. */
export function toJobBase(row: BulkJobRow) {
  return {
    jobId: row.id,
    status: row.status,
    total: row.total,
    processed: row.processed,
    succeeded: row.succeeded,
    failed: row.failed,
    error: row.error,
    createdAt: row.created_at.toISOString(),
    startedAt: row.started_at?.toISOString() ?? null,
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}

/** A contact import as `bulk_job.completed` and the job endpoints show it (without results). */
export function toJobSummary(row: BulkJobRow) {
  return { ...toJobBase(row), mode: row.options.mode ?? 'upsert' };
}

export function toContactJob(row: BulkJobRow, results: ItemResult[]) {
  return {
    ...toJobSummary(row),
    results: results.map((r) => ({
      index: r.index,
      outcome: r.outcome as 'created' | 'updated' | 'failed',
      contactId: r.resourceId,
      error: r.error,
    })),
  };
}
