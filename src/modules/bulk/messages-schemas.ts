import { Type } from 'typebox';
import { nullable } from '../../kernel/http/schemas.ts';
import {
  ErrorInfo,
  MessageStatusSchema,
  messageFields,
  RecipientSchema,
  templateSendFields,
} from '../messages/index.ts';
import type { BulkJobRow } from './repo.ts';
import { jobProperties, toJobBase } from './schemas.ts';

/** Recipients per POST /bulk/messages (the published API's limit: docs/messaging.md § Bulk sends). */
export const MAX_BULK_RECIPIENTS = 100;

export const BulkMessagesBody = Type.Object(
  {
    ...messageFields,
    ...templateSendFields,
    recipients: Type.Array(RecipientSchema, {
      minItems: 1,
      maxItems: MAX_BULK_RECIPIENTS,
      description: `1–${MAX_BULK_RECIPIENTS} recipients; each may bring its own template parameters.`,
    }),
  },
  {
    additionalProperties: false,
    description:
      'The fields of POST /messages without `to` (what to send), and the recipients. Usually a template; free-form messages go only to recipients whose customer service window is open.',
  },
);

export const BulkMessageResult = Type.Object({
  index: Type.Integer({ description: 'Position in `recipients`, from 0.' }),
  to: Type.String(),
  messageId: nullable(Type.String({ description: 'null: refused when the job was accepted (see error).' })),
  status: Type.Union([MessageStatusSchema, Type.Literal('refused'), Type.Literal('deleted')], {
    description:
      "The message's current status; refused (never accepted), or deleted (with its conversation).",
  }),
  error: nullable(ErrorInfo),
});

export const BulkMessageJob = Type.Object(
  {
    ...jobProperties,
    results: Type.Array(BulkMessageResult, { description: 'One per recipient, in order.' }),
  },
  {
    title: 'BulkMessageJob',
    description:
      'processed counts messages handed to the provider (succeeded) or failed, and recipients refused at accept (failed); the job completes when every message has been handed over or has failed. Delivery and read statuses keep arriving in `results` and as message events after that.',
  },
);

export interface AcceptOutcome {
  index: number;
  to: string;
  messageId: string | null;
  error: { code: string; message: string; details?: unknown } | null;
}

/**
 * The job as the API shows it; `live`, the current status of its messages (left out when they have
 * just been accepted, all queued): one not in it was deleted with its conversation.
 */
export function toMessageJob(
  row: BulkJobRow,
  outcomes: AcceptOutcome[],
  live?: Map<string, { status: string; error: unknown }>,
) {
  return {
    ...toJobBase(row),
    results: outcomes.map((o) => {
      const message = o.messageId ? live?.get(o.messageId) : undefined;
      return {
        index: o.index,
        to: o.to,
        messageId: o.messageId,
        status: (message?.status ?? (!o.messageId ? 'refused' : live ? 'deleted' : 'queued')) as 'queued',
        error: (message?.error as never) ?? o.error,
      };
    }),
  };
}
