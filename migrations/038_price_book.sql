-- Meta's price book as data (src/modules/pricing/book.ts): one row per price of a market and a
-- category from a date on. Rows are added, never edited, when Meta's rules change; the shipped rows
-- are rewritten at start from the release (source 'shipped'), the operator's are loaded by
-- `tidings prices load` (source 'operator'). A message names the row that priced it (price_rule).
CREATE TABLE price_book (
  id bigserial PRIMARY KEY,
  market text NOT NULL CHECK (market = '*' OR market ~ '^[A-Z]{2}$'),
  category text NOT NULL CHECK (category IN ('marketing', 'utility', 'authentication', 'service')),
  rule text NOT NULL CHECK (rule IN ('list', 'in_window')),
  price_micros bigint CHECK (price_micros >= 0),
  effective_from timestamptz NOT NULL,
  source text NOT NULL CHECK (source IN ('shipped', 'operator')),
  note text,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK (price_micros IS NOT NULL OR rule = 'in_window'),
  UNIQUE (source, market, category, rule, effective_from)
);

ALTER TABLE messages ADD COLUMN price_rule text;

CREATE OR REPLACE VIEW message_rows AS
  SELECT id, account_id, contact_id, conversation_id, direction, type, phone, content, template_id, status, error,
         provider, sandbox, provider_message_id, country, category, list_price_micros, charged_micros, free_reason,
         refunded_at, idempotency_key, bulk_job_id, bulk_index, campaign_id, created_at, sent_at, delivered_at,
         read_at, failed_at, updated_at, provider_pricing, provider_conversation, accepted_at, provider_status,
         adjusted_micros, unpaid_micros, marked_read_at, typing_shown_at, played_at, whatsapp_user_id, price_rule
    FROM messages;

-- The adjustments report (GET /account/pricing/adjustments) reads one account's adjustments of a
-- period, never its whole ledger.
CREATE INDEX wallet_transactions_adjustments ON wallet_transactions (account_id, created_at)
  WHERE type = 'adjustment';
