-- Automation II: journey configs (docs/automation.md § Journey configs), ready-made journeys. A config
-- holds what its user set ({type, config}); the journey it owns (journeys.config_id, read-only through
-- /journeys) is compiled from it whenever it is saved, in the same transaction.
CREATE TABLE journey_configs (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  type text NOT NULL CHECK (type IN ('appointment_reminder', 'welcome_message', 're_engagement')),
  config jsonb NOT NULL,
  journey_id text NOT NULL REFERENCES journeys (id),
  -- Mirrors its journey: active = published, paused = paused.
  status text NOT NULL CHECK (status IN ('active', 'paused')),
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX journey_configs_account ON journey_configs (account_id, id);

-- Journeys with a timed entry (contact.inactive, conversation.unanswered): a run started by the scan
-- keeps its occasion's id (occ_…) as trigger_event_id, and an occasion starts at most one run of a
-- journey, however many processes scan (journeys/timed.ts).
CREATE UNIQUE INDEX journey_runs_occasion ON journey_runs (journey_id, trigger_event_id)
  WHERE trigger_event_id LIKE 'occ_%';
