-- Automation I: rules (docs/automation.md). A rule reacts to one event type (or a timed trigger) of
-- its account; rules of one event are evaluated in `position` order (1 … n, dense per account).
CREATE TABLE rules (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  description text,
  status text NOT NULL CHECK (status IN ('active', 'paused')),
  position integer NOT NULL CHECK (position >= 1),
  trigger_event text NOT NULL,
  -- Timed triggers only (conversation.unanswered, contact.inactive): the ISO-8601 duration as given.
  trigger_after text,
  conditions jsonb NOT NULL,
  actions jsonb NOT NULL,
  stop_processing boolean NOT NULL,
  runs integer NOT NULL DEFAULT 0,
  matched integer NOT NULL DEFAULT 0,
  failed integer NOT NULL DEFAULT 0,
  last_run_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX rules_account_position ON rules (account_id, position);
CREATE INDEX rules_account_trigger ON rules (account_id, trigger_event, position) WHERE status = 'active';
