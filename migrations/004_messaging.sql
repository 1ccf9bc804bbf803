-- Messaging: each account's channel (its messaging number), its templates, and the messages it
-- sends, each paid for from the wallet in the transaction that accepts it.

-- The channel an account sends through. No row: the sandbox with its default settings, which is
-- every new account's channel.
CREATE TABLE account_channels (
  account_id text PRIMARY KEY REFERENCES accounts (id),
  provider text NOT NULL CHECK (provider IN ('sandbox', 'whatsapp_cloud')),
  -- What may be shown: sandbox simulation delays, or the WhatsApp ids and display number.
  settings jsonb NOT NULL DEFAULT '{}',
  -- What may not: the provider's credentials as one JSON object sealed with SECRETS_KEY.
  secrets_sealed text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE templates (
  id text PRIMARY KEY,
  account_id text NOT NULL REFERENCES accounts (id),
  name text NOT NULL,
  language text NOT NULL,
  category text NOT NULL CHECK (category IN ('MARKETING', 'UTILITY', 'AUTHENTICATION')),
  -- As the WhatsApp Cloud API has them: HEADER, BODY, FOOTER, BUTTONS.
  components jsonb NOT NULL,
  -- Text placeholders in header, body and URL buttons: the `parameters` a send must give.
  parameter_count integer NOT NULL,
  status text NOT NULL DEFAULT 'DRAFT'
    CHECK (status IN ('DRAFT', 'PENDING', 'APPROVED', 'REJECTED', 'PAUSED', 'DISABLED')),
  rejection_reason text,
  -- The channel it was last submitted to, and that provider's id for it.
  provider text CHECK (provider IN ('sandbox', 'whatsapp_cloud')),
  provider_template_id text,
  submitted_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CONSTRAINT templates_name_language_unique UNIQUE (account_id, name, language)
);
CREATE INDEX templates_account ON templates (account_id, id);
CREATE INDEX templates_provider_id ON templates (account_id, provider_template_id)
  WHERE provider_template_id IS NOT NULL;

-- Messages in both directions. No foreign keys: the account id comes from the authenticated key
-- and the contact id from the same transaction, and each per-row check would take a share lock on
-- the account row that every charged send of that account also updates. A deleted contact's
-- messages stay, with their phone, as history.
CREATE TABLE messages (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  contact_id text,
  direction text NOT NULL CHECK (direction IN ('outbound', 'inbound')),
  -- template | text | media | interactive (outbound); inbound messages add their own kinds.
  type text NOT NULL,
  -- The customer's number in E.164: the recipient of an outbound message, the sender of an inbound one.
  phone text NOT NULL,
  -- The message as the API shows it: { template | text | media | interactive }.
  content jsonb NOT NULL,
  template_id text,
  status text NOT NULL CHECK (status IN ('queued', 'sent', 'delivered', 'read', 'failed', 'received')),
  -- Why it failed: { code, message, providerCode }.
  error jsonb,
  -- The channel that carries it, and whether a sandbox key sent it (then it never reaches a provider).
  provider text NOT NULL CHECK (provider IN ('sandbox', 'whatsapp_cloud')),
  sandbox boolean NOT NULL,
  provider_message_id text,
  -- Pricing: the recipient's country, the category billed, the list price and what the wallet paid.
  country char(2),
  category text CHECK (category IN ('marketing', 'utility', 'authentication', 'service')),
  list_price_micros bigint NOT NULL DEFAULT 0,
  charged_micros bigint NOT NULL DEFAULT 0 CHECK (charged_micros >= 0),
  -- Why a billable category cost nothing: customer_service_window | sandbox.
  free_reason text,
  refunded_at timestamptz,
  idempotency_key text,
  -- A bulk send's job, and the recipient's position in its list.
  bulk_job_id text,
  bulk_index integer,
  created_at timestamptz NOT NULL,
  sent_at timestamptz,
  delivered_at timestamptz,
  read_at timestamptz,
  failed_at timestamptz,
  updated_at timestamptz NOT NULL
);
CREATE INDEX messages_account ON messages (account_id, id);
CREATE INDEX messages_account_phone ON messages (account_id, phone, id);
-- Status callbacks find their message by the provider's id; a provider's id is one message.
CREATE UNIQUE INDEX messages_provider_id ON messages (account_id, provider_message_id)
  WHERE provider_message_id IS NOT NULL;
-- One message per Idempotency-Key, even if a request is run again after its process died between
-- committing and recording the answer.
CREATE UNIQUE INDEX messages_idempotency ON messages (account_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX messages_bulk_job ON messages (bulk_job_id, bulk_index) WHERE bulk_job_id IS NOT NULL;

-- Makes the statement that calls it fail, undoing everything it wrote, unless `ok`: the guard of a
-- statement that writes on the strength of an earlier unlocked read (accept-batch.ts).
CREATE FUNCTION abort_unless(ok boolean, reason text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
  IF NOT ok THEN
    RAISE EXCEPTION '%', reason USING ERRCODE = 'TD001';
  END IF;
  RETURN true;
END;
$$;
