-- Broadcast campaigns (docs/messaging.md § Campaigns): a template sent to an audience fixed when the
-- campaign starts, one row per contact. A recipient's status is its row's until it is messaged, then
-- its message's (messages.campaign_id), so counters are counted from the rows and their messages.
CREATE TABLE campaigns (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  message jsonb NOT NULL,
  audience jsonb NOT NULL,
  start_at timestamptz,
  send_window jsonb,
  messages_per_second integer,
  status text NOT NULL CHECK (status IN ('draft', 'scheduled', 'running', 'paused', 'completed', 'canceled')),
  -- Fixed at start by the key that started it: a sandbox key's campaign sends through the sandbox.
  mode text CHECK (mode IN ('live', 'sandbox')),
  estimated_micros bigint,
  estimated_at timestamptz,
  -- The rate it is held to after a throttling answer, and when that was set (its pace itself is
  -- counted in rate_slots, key campaign:<id>).
  backoff_rate integer,
  backoff_at timestamptz,
  -- Why the sender paused it (insufficient_balance, template_not_approved); null when paused by a user.
  paused_reason text,
  started_at timestamptz,
  completed_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX campaigns_account ON campaigns (account_id, id);
CREATE INDEX campaigns_live ON campaigns (status) WHERE status IN ('scheduled', 'running');

CREATE TABLE campaign_recipients (
  campaign_id text NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
  contact_id text NOT NULL,
  account_id text NOT NULL,
  phone text NOT NULL,
  -- pending: to be messaged at due_at (in its send window); messaged: its message was accepted
  -- (message_id; its status is the message's); skipped or failed: never messaged, with the reason.
  state text NOT NULL CHECK (state IN ('pending', 'messaged', 'skipped', 'failed')),
  reason text,
  error jsonb,
  due_at timestamptz NOT NULL,
  message_id text,
  messaged_at timestamptz,
  -- What the message's status was when the message was deleted with its conversation.
  kept_status text,
  replied_at timestamptz,
  PRIMARY KEY (campaign_id, contact_id)
);
CREATE INDEX campaign_recipients_due ON campaign_recipients (campaign_id, due_at, contact_id) WHERE state = 'pending';
-- No other index: a round's update of 500 rows maintains the primary key alone. A reply finds its
-- recipients through the messages to the number (messages_account_phone), and the messaging limit
-- tier counts the account's campaign messages of the last day (messages_account).

ALTER TABLE messages ADD COLUMN campaign_id text;
CREATE INDEX messages_campaign ON messages (campaign_id) WHERE campaign_id IS NOT NULL;

-- Per-second rate slots shared by every process (the voice CPS slots, generalised): a row per
-- (key, second); `granted` is what the last take got.
CREATE TABLE rate_slots (
  key text NOT NULL,
  second bigint NOT NULL,
  used integer NOT NULL,
  granted integer NOT NULL,
  PRIMARY KEY (key, second)
);
DROP TABLE voice_cps_slots;
