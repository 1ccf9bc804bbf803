-- Voice II: the voice channel and calls (docs/voice.md § Calls).

-- An account's voice provider: the sandbox (no row) or Twilio, its auth token sealed.
CREATE TABLE voice_channels (
  account_id text PRIMARY KEY REFERENCES accounts (id),
  provider text NOT NULL CHECK (provider IN ('sandbox', 'twilio')),
  account_sid text,
  from_number text,
  auth_token_sealed text,
  updated_at timestamptz NOT NULL
);

CREATE TABLE calls (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  -- The provider that carries it (a sandbox key's calls always go to the sandbox), fixed when made.
  provider text NOT NULL CHECK (provider IN ('sandbox', 'twilio')),
  mode text NOT NULL CHECK (mode IN ('live', 'sandbox')),
  to_number text NOT NULL,
  from_number text,
  country text,
  contact_id text,
  script_id text NOT NULL REFERENCES voice_scripts (id),
  script_version integer NOT NULL,
  variables jsonb NOT NULL,
  -- The script's texts rendered (Liquid) with the contact and the variables when the call was made.
  rendered jsonb NOT NULL,
  machine_detection boolean NOT NULL,
  ring_timeout_seconds integer NOT NULL,
  max_duration_seconds integer NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'initiated', 'ringing', 'in_progress', 'completed', 'busy',
                                         'no_answer', 'failed', 'canceled')),
  answered_by text CHECK (answered_by IN ('human', 'machine', 'unknown')),
  -- Keys pressed, [{nodeId, input, at}] in order.
  digits jsonb NOT NULL DEFAULT '[]',
  provider_call_id text,
  error_code text,
  error_message text,
  provider_error_code text,
  duration_seconds integer,
  billable_minutes integer,
  -- The voice rate of the call's country per minute, fixed when it was made; the hold taken from the
  -- wallet when it was dialled, and what it was charged when it ended (micro-units).
  rate_micros bigint NOT NULL DEFAULT 0,
  held_micros bigint NOT NULL DEFAULT 0,
  charged_micros bigint NOT NULL DEFAULT 0,
  -- When a queued call may be dialled (a retry after the provider throttled it waits).
  due_at timestamptz NOT NULL,
  -- A dialler that took the call holds it until then; an initiated call still without its provider
  -- id after the lease is failed as PROVIDER_UNKNOWN_OUTCOME, never dialled again.
  lease_until timestamptz,
  dial_attempts integer NOT NULL DEFAULT 0,
  -- Asked to end (cancel or hang up) while the provider had it.
  hangup_requested_at timestamptz,
  campaign_id text,
  campaign_attempt integer,
  caused_by jsonb,
  -- A journey's place_call node: the node its run waits at for the call's end.
  journey_node_id text,
  -- The sandbox simulator's state: what it plays next, and when (docs/voice.md § Sandbox).
  sim jsonb,
  sim_due_at timestamptz,
  -- Keys sent with POST /sandbox/calls/{id}/digits, pressed at the next gather.
  sim_keys text NOT NULL DEFAULT '',
  queued_at timestamptz NOT NULL,
  initiated_at timestamptz,
  ringing_at timestamptz,
  answered_at timestamptz,
  ended_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX calls_account ON calls (account_id, id);
CREATE UNIQUE INDEX calls_provider_call ON calls (provider, provider_call_id) WHERE provider_call_id IS NOT NULL;
CREATE INDEX calls_due ON calls (due_at) WHERE status = 'queued';
CREATE INDEX calls_leased ON calls (lease_until) WHERE status = 'initiated' AND provider_call_id IS NULL;
CREATE INDEX calls_sim_due ON calls (sim_due_at) WHERE sim_due_at IS NOT NULL;
CREATE INDEX calls_campaign ON calls (campaign_id, id) WHERE campaign_id IS NOT NULL;

-- Every callback that changed or was heard once: a repeat of the same (kind, key) is ignored.
-- kind `status` keys by Twilio's SequenceNumber, `gather` by node and attempt, `enter` by node.
CREATE TABLE call_callbacks (
  call_id text NOT NULL REFERENCES calls (id) ON DELETE CASCADE,
  kind text NOT NULL,
  key text NOT NULL,
  params jsonb NOT NULL,
  received_at timestamptz NOT NULL,
  PRIMARY KEY (call_id, kind, key)
);

-- Calls started per account and second, across every process (docs/voice.md § Calls per second).
CREATE TABLE voice_cps_slots (
  account_id text NOT NULL,
  second bigint NOT NULL,
  used integer NOT NULL,
  PRIMARY KEY (account_id, second)
);

-- A script's webhook actions are signed with its own secret, shown once when it is made.
ALTER TABLE voice_scripts ADD COLUMN signing_secret_sealed text;
ALTER TABLE automation_calls ADD COLUMN voice_script_id text REFERENCES voice_scripts (id) ON DELETE CASCADE;
