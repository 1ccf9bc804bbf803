-- Hand-over is not sending. Meta's 200 to a send means it accepted the message (perhaps only to
-- hold it for a quality assessment); Meta's `sent` callback says when it was sent. A message stays
-- `queued` with `accepted_at` (and Meta's `message_status`, `provider_status`) until then, and its
-- `sent_at` is Meta's. Messages handed over before this migration were marked sent at hand-over:
-- their acceptance was then.
ALTER TABLE messages ADD COLUMN accepted_at timestamptz;
ALTER TABLE messages ADD COLUMN provider_status text;
UPDATE messages SET accepted_at = sent_at
 WHERE direction = 'outbound' AND provider_message_id IS NOT NULL AND sent_at IS NOT NULL;

-- What Meta bills settles the charge (modules/messages/settlement.ts): the signed sum of the
-- `adjustment` wallet transactions made for the message (positive: taken from the wallet), and
-- what an adjustment could not take because the wallet did not hold it (the wallet never goes
-- below zero; that part is not asked for again).
ALTER TABLE messages ADD COLUMN adjusted_micros bigint NOT NULL DEFAULT 0;
ALTER TABLE messages ADD COLUMN unpaid_micros bigint NOT NULL DEFAULT 0 CHECK (unpaid_micros >= 0);
