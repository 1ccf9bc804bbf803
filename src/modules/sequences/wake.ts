// POST /sandbox/wake: the current step of an active enrollment is due now (its send window still
// applies when the timer takes it: sandbox time skips waits, not the hours a contact may be written
// to). Only a sandbox enrollment wakes: a live one would send real messages early.
import type { Database } from '../../kernel/database/db.ts';
import { conflict, notFound } from '../../kernel/http/errors.ts';
import type { EnrollmentRow } from './repo.ts';

export async function wakeEnrollment(
  s: { db: Database; now: () => Date },
  accountId: string,
  enrollmentId: string,
): Promise<EnrollmentRow> {
  return s.db.transaction(async (tx) => {
    const { rows } = await tx.query<EnrollmentRow>(
      'SELECT * FROM sequence_enrollments WHERE id = $1 AND account_id = $2 FOR UPDATE',
      [enrollmentId, accountId],
    );
    const row = rows[0];
    if (!row) throw notFound('enrollment');
    if (row.status !== 'active') throw conflict(`The enrollment has ended (${row.status}).`);
    // Waking a live enrollment would send real messages early.
    if (!row.sandbox) throw conflict('Only an enrollment made in the sandbox can be woken.');
    const now = s.now();
    const { rows: woken } = await tx.query<EnrollmentRow>(
      `UPDATE sequence_enrollments SET next_run_at = $2, updated_at = $2 WHERE id = $1 RETURNING *`,
      [enrollmentId, now],
    );
    return woken[0]!;
  });
}
