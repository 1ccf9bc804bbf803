-- Events and webhooks: the outbox of events, the subscriptions that receive them, and a delivery
-- per (event, subscription) with every attempt logged.

-- Every event ever emitted, with its envelope exactly as it is delivered: the signed bytes stay the
-- same on every retry.
CREATE TABLE events (
  id text PRIMARY KEY,
  -- NULL only for partner-level events (a partner webhook's test event).
  account_id text REFERENCES accounts (id),
  partner_id text REFERENCES partners (id),
  type text NOT NULL,
  payload text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX events_account ON events (account_id, id DESC);

CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY,
  -- Exactly one owner: an account (its own events) or a partner (the events of all its accounts).
  account_id text REFERENCES accounts (id),
  partner_id text REFERENCES partners (id),
  url text NOT NULL,
  description text,
  event_filters text[] NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  disabled_reason text,
  -- Signing secrets, encrypted with SECRETS_KEY. After a rotation the previous one keeps signing
  -- until previous_secret_expires_at.
  secret_sealed text NOT NULL,
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  -- Start of the current run of failed attempts; NULL after a success. Five days of it disable.
  failing_since timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK ((account_id IS NULL) <> (partner_id IS NULL))
);
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, id DESC) WHERE account_id IS NOT NULL;
CREATE INDEX webhook_endpoints_partner ON webhook_endpoints (partner_id, id DESC) WHERE partner_id IS NOT NULL;

CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  endpoint_id text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id text NOT NULL REFERENCES events (id),
  event_type text NOT NULL,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempt_count integer NOT NULL DEFAULT 0,
  -- Automatic deliveries get the whole retry schedule; a manual retry allows one more attempt.
  attempts_allowed integer NOT NULL,
  next_attempt_at timestamptz,
  -- A dispatcher that claimed the delivery holds it until then; after a crash it becomes due again.
  locked_until timestamptz,
  last_attempt_at timestamptz,
  last_status_code integer,
  last_error text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);
-- For pruning old events (the foreign key check) and finding an event's deliveries.
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

CREATE TABLE webhook_attempts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id text NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempted_at timestamptz NOT NULL,
  status_code integer,
  latency_ms integer NOT NULL,
  response_excerpt text,
  error text
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);

-- wallet.low_balance is emitted when a debit takes the balance below this (NULL: never).
ALTER TABLE accounts ADD COLUMN low_balance_threshold_micros bigint CHECK (low_balance_threshold_micros >= 0);
