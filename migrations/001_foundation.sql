-- Foundation: the installation, partners, accounts, API keys, wallet and usage counters.

CREATE TABLE installation (
  singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  -- SHA-256 of the generated bootstrap token (NULL when BOOTSTRAP_TOKEN is configured instead).
  bootstrap_token_hash text,
  bootstrapped_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO installation DEFAULT VALUES;

CREATE TABLE partners (
  id text PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE accounts (
  id text PRIMARY KEY,
  partner_id text REFERENCES partners (id),
  name text NOT NULL,
  country_code char(2) NOT NULL,
  plan_code text NOT NULL,
  addons text[] NOT NULL DEFAULT '{}',
  external_ref text,
  status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'SUSPENDED', 'CLOSED')),
  -- The wallet: integer micro-units that the database itself keeps from going negative.
  wallet_balance_micros bigint NOT NULL DEFAULT 0 CHECK (wallet_balance_micros >= 0),
  currency char(3) NOT NULL DEFAULT 'USD',
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  closed_at timestamptz
);
CREATE UNIQUE INDEX accounts_external_ref_unique ON accounts (coalesce(partner_id, ''), external_ref)
  WHERE external_ref IS NOT NULL;
CREATE INDEX accounts_partner ON accounts (partner_id, id DESC);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  partner_id text REFERENCES partners (id),
  account_id text REFERENCES accounts (id),
  scope text NOT NULL CHECK (scope IN ('live', 'sandbox', 'partner')),
  name text NOT NULL,
  -- SHA-256 of the full key text; the text itself is never stored.
  key_hash text NOT NULL UNIQUE,
  last_four text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  CHECK (
    (scope = 'partner' AND partner_id IS NOT NULL AND account_id IS NULL)
    OR (scope <> 'partner' AND account_id IS NOT NULL)
  )
);
CREATE INDEX api_keys_account ON api_keys (account_id, id DESC) WHERE account_id IS NOT NULL;
CREATE INDEX api_keys_partner ON api_keys (partner_id, id DESC) WHERE scope = 'partner';

CREATE TABLE wallet_transactions (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  type text NOT NULL CHECK (type IN ('credit', 'debit', 'refund', 'adjustment')),
  -- Signed: credits and refunds add, debits subtract.
  amount_micros bigint NOT NULL CHECK (amount_micros <> 0),
  balance_after_micros bigint NOT NULL CHECK (balance_after_micros >= 0),
  currency char(3) NOT NULL,
  reference text,
  description text,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX wallet_transactions_account ON wallet_transactions (account_id, id DESC);

CREATE FUNCTION forbid_row_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME USING ERRCODE = 'restrict_violation';
END;
$$;
CREATE TRIGGER wallet_transactions_append_only BEFORE UPDATE OR DELETE ON wallet_transactions
  FOR EACH ROW EXECUTE FUNCTION forbid_row_change();

-- API calls admitted per account: monthly for the quota (exact, checked in the same statement that
-- counts), daily for usage reports.
CREATE TABLE api_usage_monthly (
  account_id text NOT NULL REFERENCES accounts (id),
  period text NOT NULL,
  calls bigint NOT NULL,
  PRIMARY KEY (account_id, period)
);
CREATE TABLE api_usage_daily (
  account_id text NOT NULL REFERENCES accounts (id),
  day date NOT NULL,
  calls bigint NOT NULL,
  PRIMARY KEY (account_id, day)
);
