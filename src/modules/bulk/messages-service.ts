// Bulk sends (POST /bulk/messages): up to 100 recipients accepted in one transaction, each as
// POST /messages would accept it (acceptBatch). A recipient refused on its own (a bad number, a
// wrong parameter count, a closed service window) leaves nothing behind and does not stop the
// others; but the batch is paid for whole or not at all: if the wallet cannot pay for every
// message, nothing is sent (402). The messages are dispatched in the background like any other;
// the job completes when the last one has been handed over or has failed (messages-progress.ts).
import type { SendMode } from '../../channels/registry.ts';
import type { AccountSnapshot } from '../../kernel/access/auth.ts';
import type { Tx } from '../../kernel/database/db.ts';
import { type ApiError, notFound } from '../../kernel/http/errors.ts';
import { newId } from '../../kernel/values/ids.ts';
import type { SendFieldsInput } from '../messages/index.ts';
import {
  type AcceptServices,
  acceptBatch,
  insufficientBalance,
  prepareRecipients,
  type RecipientInput,
  type SendResult,
  wakeDispatchers,
} from '../messages/index.ts';
import { emitSendCompleted } from './messages-progress.ts';
import type { AcceptOutcome } from './messages-schemas.ts';
import { type BulkJobRow, findJob, JOB_COLUMNS } from './repo.ts';

type Account = Pick<AccountSnapshot, 'id' | 'countryCode' | 'channelProvider'>;

function errorOf(err: ApiError): AcceptOutcome['error'] {
  return {
    code: err.code,
    message: err.message,
    ...(err.details === undefined ? {} : { details: err.details }),
  };
}

export async function acceptBulkSend(
  s: AcceptServices,
  sender: { account: Account; mode: SendMode },
  body: SendFieldsInput & { recipients: RecipientInput[] },
): Promise<{ job: BulkJobRow; outcomes: AcceptOutcome[] }> {
  const { recipients, ...fields } = body;
  const { account } = sender;
  const ready = await prepareRecipients(s.db, s.approvedTemplates, account, fields, recipients);
  const accepted = await s.db.transaction(async (tx) => {
    const now = s.now();
    const jobId = newId('bulkJob');
    await tx.query(
      `INSERT INTO bulk_jobs (id, account_id, kind, options, total, created_at, updated_at)
       VALUES ($1, $2, 'messages', $3, $4, $5, $5)`,
      [jobId, account.id, JSON.stringify(fields), recipients.length, now],
    );
    const accepting = ready.flatMap((r) => (r.prepared ? [{ index: r.index, message: r.prepared }] : []));
    const results = await acceptBatch(
      s,
      tx,
      accepting.map((r) => ({ sender, message: r.message, bulk: { jobId, index: r.index } })),
    );
    await refuseUnlessAllPaid(tx, account.id, results);
    const resultOf = new Map(accepting.map((r, i) => [r.index, results[i]!]));
    const outcomes: AcceptOutcome[] = ready.map((r) => {
      if (!r.prepared) return { index: r.index, to: r.to, messageId: null, error: errorOf(r.error) };
      const result = resultOf.get(r.index)!;
      return result.kind === 'accepted'
        ? { index: r.index, to: r.prepared.to, messageId: result.message.id, error: null }
        : {
            index: r.index,
            to: r.prepared.to,
            messageId: null,
            error: result.kind === 'refused' ? errorOf(result.error) : null,
          };
    });
    const refused = outcomes.filter((o) => !o.messageId).length;
    const done = refused === outcomes.length;
    const { rows } = await tx.query<BulkJobRow>(
      `WITH chunk AS (
         INSERT INTO bulk_job_chunks (job_id, first_index, results) VALUES ($1, 0, $2)
       )
       UPDATE bulk_jobs
          SET processed = $3, failed = $3, status = CASE WHEN $4 THEN 'completed' ELSE 'queued' END,
              started_at = CASE WHEN $4 THEN $5::timestamptz END, completed_at = CASE WHEN $4 THEN $5::timestamptz END
        WHERE id = $1
        RETURNING ${JOB_COLUMNS}`,
      [jobId, JSON.stringify(outcomes), refused, done, now],
    );
    const job = rows[0]!;
    if (done) await emitSendCompleted(s, tx, job);
    return { job, outcomes, results };
  });
  wakeDispatchers(s, accepted.results);
  return { job: accepted.job, outcomes: accepted.outcomes };
}

/**
 * A bulk send is paid for whole or not at all: if the wallet could not pay for one of its messages,
 * the whole batch is refused (402, the transaction rolls back) with what it would have cost.
 */
async function refuseUnlessAllPaid(tx: Tx, accountId: string, results: SendResult[]): Promise<void> {
  const unpaid = results.filter((r) => r.kind === 'refused' && r.error.code === 'INSUFFICIENT_BALANCE');
  if (unpaid.length === 0) return;
  const paid = results.reduce((sum, r) => sum + (r.kind === 'accepted' ? r.message.charged_micros : 0), 0);
  const required = paid + unpaid.reduce((sum, r) => sum + (r.kind === 'refused' ? r.chargeMicros : 0), 0);
  const { rows } = await tx.query<{ balance: number }>(
    'SELECT wallet_balance_micros AS balance FROM accounts WHERE id = $1',
    [accountId],
  );
  throw insufficientBalance(required, (rows[0]?.balance ?? 0) + paid);
}

export async function getBulkSend(
  s: Pick<AcceptServices, 'db'>,
  accountId: string,
  jobId: string,
): Promise<{
  job: BulkJobRow;
  outcomes: AcceptOutcome[];
  live: Map<string, { status: string; error: unknown }>;
}> {
  const job = await findJob(s.db, accountId, 'messages', jobId);
  if (!job) throw notFound('bulk message job');
  const [chunks, messages] = await Promise.all([
    s.db.query<{ results: AcceptOutcome[] }>('SELECT results FROM bulk_job_chunks WHERE job_id = $1', [
      jobId,
    ]),
    s.db.query<{ id: string; status: string; error: unknown }>(
      'SELECT id, status, error FROM messages WHERE bulk_job_id = $1 AND account_id = $2',
      [jobId, accountId],
    ),
  ]);
  return {
    job,
    outcomes: chunks.rows.flatMap((c) => c.results),
    live: new Map(messages.rows.map((m) => [m.id, { status: m.status, error: m.error }])),
  };
}
