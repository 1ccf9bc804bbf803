-- Lists filtered by a state few rows are in: contacts that opted out of marketing, failed messages.
-- Without an index such a page walks the account's rows newest first until it has its rows: at 2 %
-- of a million-row account, some 2,500 rows from cold pages, 40–70 ms at p99 (docs/decisions.md,
-- issue 27, lists). Each index holds only the rows in that state and is ordered like the lists.
--
-- A column named in an index, predicate included, makes an update that changes it non-HOT. So the
-- messages' index is on failed_at, which only the move to `failed` sets, and not on status, which
-- every delivery and read changes; an opt-out changing is rare.
CREATE INDEX contacts_marketing_opt_out ON contacts (account_id, id) WHERE marketing_opt_out;

-- Every failure sets failed_at (messages/transition.ts); the list of failed messages relies on it.
UPDATE messages SET failed_at = updated_at WHERE status = 'failed' AND failed_at IS NULL;
CREATE INDEX messages_failed ON messages (account_id, id) WHERE failed_at IS NOT NULL;
