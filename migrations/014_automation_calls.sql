-- Automation I: the call_webhook action (docs/automation.md § call_webhook). A rule's run that calls
-- a URL writes the call here, in the run's transaction; the automation worker sends it after commit,
-- signed with the rule's own secret like webhook deliveries, and retries it on the webhooks'
-- schedule: at least once, as every webhook.
ALTER TABLE rules ADD COLUMN signing_secret_sealed text;

CREATE TABLE automation_calls (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  rule_id text NOT NULL REFERENCES rules (id) ON DELETE CASCADE,
  run_id text NOT NULL,
  url text NOT NULL,
  -- The JSON sent, fixed when the run made it: every attempt sends (and signs) the same bytes.
  payload text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempt_count integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  -- A worker that took the call holds it until then; after a crash it becomes due again.
  locked_until timestamptz,
  last_status_code integer,
  last_error text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX automation_calls_due ON automation_calls (next_attempt_at) WHERE status = 'pending';
CREATE INDEX automation_calls_rule ON automation_calls (rule_id);
