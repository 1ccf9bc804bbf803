// Accepting one message (POST /messages): all at once (one transaction, or one statement when
// nothing changed since the read) the recipient's contact is found or made, the customer service
// window is checked, the price is charged to the wallet, the message is stored `queued` and its
// dispatch job is enqueued. So a message exists exactly when it was paid
// for and will be sent; a refusal (402, 422) leaves nothing behind. The dispatch job hands it to
// the provider afterwards (dispatch.ts). Sends that arrive together share that transaction
// (accept-queue.ts, accept-batch.ts).
import type { Database } from '../../kernel/database/db.ts';
import type { ApiError } from '../../kernel/http/errors.ts';
import type { Jobs } from '../../kernel/jobs/jobs.ts';
import type { EventOutbox } from '../../kernel/outbox/events.ts';
import type { PriceTable } from '../pricing/index.ts';
import type { ApprovedTemplates } from '../templates/index.ts';
import type { Sender } from './accept-batch.ts';
import type { AcceptQueue } from './accept-queue.ts';
import type { PreparedMessage } from './prepare.ts';
import { findByIdempotencyKey, type MessageRow } from './repo.ts';

export { cswViolation, DISPATCH_JOB, insufficientBalance, type Sender } from './accept-batch.ts';

export interface AcceptServices {
  db: Database;
  approvedTemplates: ApprovedTemplates;
  jobs: Jobs;
  events: EventOutbox;
  prices: PriceTable;
  now: () => Date;
}

export type Accepted =
  | { kind: 'accepted'; message: MessageRow }
  /** The Idempotency-Key had its message already: nothing new was sent or charged. */
  | { kind: 'existing'; message: MessageRow }
  | { kind: 'refused'; error: ApiError };

/** POST /messages: accepts one prepared message, with whatever else is being sent at the moment. */
export async function acceptMessage(
  s: AcceptServices & { acceptQueue: AcceptQueue },
  sender: Sender,
  m: PreparedMessage,
): Promise<Accepted> {
  const result = await s.acceptQueue.submit({ sender, message: m });
  if (result.kind === 'accepted') return { kind: 'accepted', message: result.message };
  if (result.kind === 'refused') return { kind: 'refused', error: result.error };
  const message = sender.idempotencyKey
    ? await findByIdempotencyKey(s.db, sender.account.id, sender.idempotencyKey)
    : null;
  if (!message) throw new Error('a message was not written, but no message has its Idempotency-Key');
  return { kind: 'existing', message };
}
