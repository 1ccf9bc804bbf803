-- Who sent an outbound message (API.md: `source`): `api`, `automation` (a rule, a sequence or a
-- journey: written with caused_by), `campaign`, or `business_app` (sent from the WhatsApp Business
-- app of a coexistence number, as Meta echoes it: never charged, never dispatched). Null for
-- inbound messages and for sends stored before this column, which the view derives
-- (messages/view.ts: a campaign's or else the API's).
ALTER TABLE messages ADD COLUMN source text
  CHECK (source IN ('api', 'automation', 'campaign', 'business_app'));
UPDATE messages SET source = 'automation' WHERE caused_by IS NOT NULL AND direction = 'outbound';

CREATE OR REPLACE VIEW message_rows AS
  SELECT id, account_id, contact_id, conversation_id, direction, type, phone, content, template_id, status, error,
         provider, sandbox, provider_message_id, country, category, list_price_micros, charged_micros, free_reason,
         refunded_at, idempotency_key, bulk_job_id, bulk_index, campaign_id, created_at, sent_at, delivered_at,
         read_at, failed_at, updated_at, provider_pricing, provider_conversation, accepted_at, provider_status,
         adjusted_micros, unpaid_micros, marked_read_at, typing_shown_at, played_at, whatsapp_user_id, price_rule,
         source
    FROM messages;
