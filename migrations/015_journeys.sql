-- Automation II: journeys (docs/automation.md § Journeys). A journey holds its current definition
-- ({entry, nodes, edges, settings}); every published version is kept in journey_versions, and a run
-- reads the version it started on. A run is a row (waiting costs a row, not memory) and every node it
-- entered a step row, from which the per-node statistics are counted.
CREATE TABLE journeys (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  description text,
  status text NOT NULL CHECK (status IN ('draft', 'published', 'paused', 'archived')),
  -- The current version: edited in place while a draft, a new one for each edit once published.
  version integer NOT NULL,
  definition jsonb NOT NULL,
  -- entry.event when entry.trigger is "event", kept apart for the engine's lookup of an event's journeys.
  trigger_event text,
  -- The journey config that owns it (read-only through /journeys), if any.
  config_id text,
  -- webhook nodes sign their calls with it (shown once, when the journey is created).
  signing_secret_sealed text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX journeys_account ON journeys (account_id, id);
CREATE INDEX journeys_trigger ON journeys (account_id, trigger_event) WHERE status = 'published';

CREATE TABLE journey_versions (
  journey_id text NOT NULL REFERENCES journeys (id) ON DELETE CASCADE,
  version integer NOT NULL,
  definition jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (journey_id, version)
);

-- One contact's way through one version of a journey. The runner takes rows whose `resume_at` has
-- come (status running or waiting) FOR UPDATE SKIP LOCKED and writes their new state in the
-- transaction that acted: each node's effect happens once, across any number of processes.
CREATE TABLE journey_runs (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  journey_id text NOT NULL REFERENCES journeys (id) ON DELETE CASCADE,
  version integer NOT NULL,
  contact_id text NOT NULL,
  status text NOT NULL CHECK (status IN ('running', 'waiting', 'completed', 'failed', 'canceled', 'expired')),
  current_node_id text,
  -- When the runner takes it next; null once ended.
  resume_at timestamptz,
  -- The edge it leaves its waiting node by when it resumes (reply, or the webhook's outcome); null: the wait's own.
  resume_edge text,
  vars jsonb NOT NULL,
  trigger_data jsonb NOT NULL,
  trigger_event_id text,
  -- The automation chain it belongs to: its effects' events carry causedBy.depth = depth.
  depth integer NOT NULL,
  error jsonb,
  -- Steps taken, the last node entered and how many times in a row (the run limits).
  step_count integer NOT NULL DEFAULT 0,
  last_node_id text,
  repeat_count integer NOT NULL DEFAULT 0,
  -- Started by a sandbox key or a sandbox event: its messages go to the sandbox.
  sandbox boolean NOT NULL,
  expires_at timestamptz NOT NULL,
  started_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  ended_at timestamptz
);
CREATE INDEX journey_runs_due ON journey_runs (resume_at) WHERE status IN ('running', 'waiting');
CREATE INDEX journey_runs_journey ON journey_runs (journey_id, id);
CREATE INDEX journey_runs_contact ON journey_runs (contact_id, journey_id);

-- Every node a run entered, in order: what it did, and the edge it left by (null while it waits).
CREATE TABLE journey_run_steps (
  run_id text NOT NULL REFERENCES journey_runs (id) ON DELETE CASCADE,
  seq integer NOT NULL,
  journey_id text NOT NULL,
  node_id text NOT NULL,
  type text NOT NULL,
  status text NOT NULL CHECK (status IN ('waiting', 'completed', 'failed', 'canceled')),
  edge text,
  output jsonb,
  error jsonb,
  started_at timestamptz NOT NULL,
  ended_at timestamptz,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX journey_run_steps_node ON journey_run_steps (journey_id, node_id);

-- webhook nodes queue their calls beside call_webhook's: a call belongs to a rule or to a journey run.
ALTER TABLE automation_calls ALTER COLUMN rule_id DROP NOT NULL;
ALTER TABLE automation_calls ADD COLUMN journey_id text REFERENCES journeys (id) ON DELETE CASCADE;
ALTER TABLE automation_calls ADD COLUMN node_id text;
ALTER TABLE automation_calls ADD COLUMN max_attempts integer;
ALTER TABLE automation_calls ADD COLUMN response jsonb;
