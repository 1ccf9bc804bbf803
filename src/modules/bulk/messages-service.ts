// Bulk sends (POST /bulk/messages): up to 100 recipients accepted in one transaction. The whole
// batch's price is checked against the wallet first, under its lock: if the balance cannot pay for
// every message that would be charged, nothing is sent (402). Then each recipient is accepted as
// POST /messages would accept it, inside a savepoint, so that a recipient refused on its own (a bad
// number, a wrong parameter count, a closed service window) leaves nothing behind and does not stop
// the others. The messages are dispatched in the background like any other; the job completes when
// the last one has been handed over or has failed (messages-progress.ts).
import type { SendMode } from '../../channels/registry.ts';
import { providerFor } from '../../channels/registry.ts';
import type { AccountSnapshot } from '../../kernel/auth.ts';
import type { Tx } from '../../kernel/db.ts';
import { ApiError, notFound } from '../../kernel/errors.ts';
import { newId } from '../../kernel/ids.ts';
import { type AcceptServices, acceptIn, DISPATCH_JOB, insufficientBalance } from '../messages/accept.ts';
import {
  lastInboundOf,
  type PreparedRecipient,
  prepareRecipients,
  type RecipientInput,
} from '../messages/batch.ts';
import type { MessageFieldsInput } from '../messages/content.ts';
import { quote, windowOpen } from '../pricing/quote.ts';
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

/** The sum the batch will be charged, with the window of each recipient as it is now. */
async function batchCharge(
  s: AcceptServices,
  tx: Tx,
  account: Account,
  mode: SendMode,
  ready: PreparedRecipient[],
) {
  const provider = providerFor(account.channelProvider, mode);
  const phones = ready.flatMap((r) => (r.prepared ? [r.prepared.to] : []));
  const inbound = await lastInboundOf(tx, account.id, phones);
  const now = s.now();
  let total = 0;
  for (const r of ready) {
    if (!r.prepared) continue;
    const open = windowOpen(inbound.get(r.prepared.to) ?? null, now);
    if (r.prepared.freeForm && !open) continue;
    total += quote(s.prices, {
      country: r.prepared.country,
      category: r.prepared.category,
      windowOpen: open,
      provider,
    }).chargeMicros;
  }
  return total;
}

async function acceptOne(
  s: AcceptServices,
  tx: Tx,
  sender: { account: Account; mode: SendMode },
  jobId: string,
  r: PreparedRecipient,
): Promise<AcceptOutcome> {
  if (!r.prepared) return { index: r.index, to: r.to, messageId: null, error: errorOf(r.error) };
  await tx.query('SAVEPOINT recipient');
  try {
    const message = await acceptIn(s, tx, sender, r.prepared, { jobId, index: r.index }, { enqueue: false });
    await tx.query('RELEASE SAVEPOINT recipient');
    return { index: r.index, to: r.prepared.to, messageId: message.id, error: null };
  } catch (err) {
    await tx.query('ROLLBACK TO SAVEPOINT recipient');
    if (!(err instanceof ApiError)) throw err;
    return { index: r.index, to: r.prepared.to, messageId: null, error: errorOf(err) };
  }
}

export async function acceptBulkSend(
  s: AcceptServices,
  sender: { account: Account; mode: SendMode },
  body: MessageFieldsInput & { recipients: RecipientInput[] },
): Promise<{ job: BulkJobRow; outcomes: AcceptOutcome[] }> {
  const { recipients, ...fields } = body;
  const { account } = sender;
  const ready = await prepareRecipients(s.db, s.approvedTemplates, account, fields, recipients);
  return s.db.transaction(async (tx) => {
    const now = s.now();
    const { rows: wallet } = await tx.query<{ balance: number }>(
      'SELECT wallet_balance_micros AS balance FROM accounts WHERE id = $1 FOR NO KEY UPDATE',
      [account.id],
    );
    const charge = await batchCharge(s, tx, account, sender.mode, ready);
    const balance = wallet[0]?.balance ?? 0;
    if (charge > balance) throw insufficientBalance(charge, balance);
    const jobId = newId('bulkJob');
    await tx.query(
      `INSERT INTO bulk_jobs (id, account_id, kind, options, total, created_at, updated_at)
       VALUES ($1, $2, 'messages', $3, $4, $5, $5)`,
      [jobId, account.id, JSON.stringify(fields), recipients.length, now],
    );
    const outcomes: AcceptOutcome[] = [];
    for (const r of ready) outcomes.push(await acceptOne(s, tx, sender, jobId, r));
    const accepted = outcomes.flatMap((o) => (o.messageId ? [o.messageId] : []));
    await s.jobs.enqueueMany(
      tx,
      DISPATCH_JOB,
      accepted.map((messageId) => ({ data: { messageId } })),
    );
    const refused = outcomes.length - accepted.length;
    const done = accepted.length === 0;
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
    return { job, outcomes };
  });
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
