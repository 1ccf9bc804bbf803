-- Service level agreements (docs/conversations.md § SLA policies): an account's policies, and on
-- each conversation the policy that applies, its due times and when each target was missed. A
-- breach is recorded once per target per conversation: its column set while null, the row locked.
CREATE TABLE sla_policies (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  -- Minutes from the conversation's opening to the business's first reply, and to its close.
  first_response_minutes integer CHECK (first_response_minutes > 0),
  resolution_minutes integer CHECK (resolution_minutes > 0),
  -- Counted in the account's business hours (else around the clock).
  business_hours boolean NOT NULL,
  -- Which conversations it applies to: any of these labels, any of these teams (empty: any).
  labels text[] NOT NULL,
  team_ids text[] NOT NULL,
  -- The first policy that matches applies, lowest position first.
  position integer NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (account_id, name)
);
CREATE INDEX sla_policies_account ON sla_policies (account_id, position, created_at);

-- The SLA clock's start: when it opened, or was last reopened (null: never measured).
ALTER TABLE conversations ADD COLUMN sla_started_at timestamptz;
-- The business's first reply since then (not its automatic ones: away, greeting, survey).
ALTER TABLE conversations ADD COLUMN first_response_at timestamptz;
ALTER TABLE conversations ADD COLUMN sla_policy_id text;
ALTER TABLE conversations ADD COLUMN sla_first_response_due_at timestamptz;
ALTER TABLE conversations ADD COLUMN sla_resolution_due_at timestamptz;
-- The next due time the breach scan must look at (null: none left).
ALTER TABLE conversations ADD COLUMN sla_next_due_at timestamptz;
ALTER TABLE conversations ADD COLUMN sla_first_response_breached_at timestamptz;
ALTER TABLE conversations ADD COLUMN sla_resolution_breached_at timestamptz;
-- The breach scan, across accounts.
CREATE INDEX conversations_sla_scan ON conversations (sla_next_due_at) WHERE sla_next_due_at IS NOT NULL;
-- The inbox's "due first" order.
CREATE INDEX conversations_sla_due ON conversations (account_id, sla_next_due_at, id) WHERE status = 'open';
-- The inbox: its open lists by last activity (a label's, a filter's) read open rows only, not the
-- account's closed history between them.
CREATE INDEX conversations_open_activity ON conversations (account_id, last_message_at DESC, id DESC)
  WHERE status = 'open';
