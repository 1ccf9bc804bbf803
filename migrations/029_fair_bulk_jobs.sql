-- Bulk jobs served fairly across accounts (issue 27): each contacts or enrollments job gets a round
-- when it is accepted, the account's next after its own unfinished jobs, or the round being served
-- now if it has none, and its queue entry a priority from it. A worker takes the lowest round first,
-- so an account with 20 jobs queued takes its turns between the other accounts' jobs instead of
-- before them. NULL for the jobs accepted before this, and for bulk sends (no queue).
ALTER TABLE bulk_jobs ADD COLUMN fair_round integer;
CREATE INDEX bulk_jobs_unfinished_rounds ON bulk_jobs (kind, fair_round)
  WHERE status IN ('queued', 'processing');
CREATE INDEX bulk_jobs_unfinished_account ON bulk_jobs (account_id, kind, fair_round)
  WHERE status IN ('queued', 'processing');
