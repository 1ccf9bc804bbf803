-- Automation I: the engine (docs/automation.md). Events reach it through the outbox: an event whose
-- account listens to its type (automation_interest, kept by the rules and sequences modules) gets an
-- inbox row in the emitting transaction. A worker takes inbox rows with SKIP LOCKED and runs the
-- rules of each event in one transaction with the row's deletion: at most once, across processes.
CREATE TABLE automation_interest (
  account_id text NOT NULL REFERENCES accounts (id),
  event_type text NOT NULL,
  PRIMARY KEY (account_id, event_type)
);

CREATE TABLE automation_inbox (
  event_id text PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
  account_id text NOT NULL,
  created_at timestamptz NOT NULL,
  -- A run that failed (not an action: the run itself, a bug or the database) is tried again later,
  -- a few times, without holding up the events behind it.
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz
);
CREATE INDEX automation_inbox_order ON automation_inbox (created_at, event_id);

-- One record per evaluation of a rule: why it matched or not, condition by condition, action by
-- action. A rule runs at most once per event (or timed occasion, whose id stands for the event).
CREATE TABLE rule_runs (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  rule_id text NOT NULL REFERENCES rules (id) ON DELETE CASCADE,
  event_id text NOT NULL,
  contact_id text,
  status text NOT NULL CHECK (status IN ('not_matched', 'succeeded', 'failed', 'suppressed')),
  reason text,
  depth integer NOT NULL,
  conditions jsonb NOT NULL,
  actions jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  UNIQUE (rule_id, event_id)
);
CREATE INDEX rule_runs_rule ON rule_runs (rule_id, id DESC);

-- Messages sent by automation name their cause: the per-contact cap counts them.
ALTER TABLE messages ADD COLUMN caused_by jsonb;
CREATE INDEX messages_automation_recent ON messages (contact_id, created_at) WHERE caused_by IS NOT NULL;
