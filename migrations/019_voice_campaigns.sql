-- Voice III: campaigns (docs/voice.md § Campaigns). A campaign's audience is fixed when it starts:
-- one row per contact, with its state, its attempts and when it may be called next; its calls are
-- ordinary calls naming the campaign. Counters are counted from the rows.
CREATE TABLE voice_campaigns (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  script_id text NOT NULL REFERENCES voice_scripts (id),
  status text NOT NULL CHECK (status IN ('draft', 'scheduled', 'running', 'paused', 'completed', 'canceled')),
  audience jsonb NOT NULL,
  start_at timestamptz,
  calling_from text NOT NULL,
  calling_until text NOT NULL,
  calls_per_second integer NOT NULL,
  max_concurrent integer NOT NULL,
  retry_on text[] NOT NULL,
  max_attempts integer NOT NULL,
  retry_after text NOT NULL,
  call_settings jsonb NOT NULL,
  -- Fixed at start by the key that started it: a sandbox key's campaign calls the sandbox.
  mode text CHECK (mode IN ('live', 'sandbox')),
  estimated_cost_micros bigint NOT NULL DEFAULT 0,
  started_at timestamptz,
  ended_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX voice_campaigns_account ON voice_campaigns (account_id, id);
CREATE INDEX voice_campaigns_live ON voice_campaigns (status) WHERE status IN ('scheduled', 'running');

CREATE TABLE voice_campaign_contacts (
  campaign_id text NOT NULL REFERENCES voice_campaigns (id) ON DELETE CASCADE,
  contact_id text NOT NULL,
  -- pending: to be called at next_attempt_at (in its calling hours); calling: its call is not over;
  -- done: its last call ended with `outcome` (and no retry is left).
  state text NOT NULL CHECK (state IN ('pending', 'calling', 'done')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL,
  last_call_id text,
  outcome text,
  answered boolean NOT NULL DEFAULT false,
  error_code text,
  PRIMARY KEY (campaign_id, contact_id)
);
CREATE INDEX voice_campaign_contacts_due ON voice_campaign_contacts (campaign_id, next_attempt_at) WHERE state = 'pending';
