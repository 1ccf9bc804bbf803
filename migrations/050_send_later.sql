-- Send later (docs/messaging.md § Send later): a message accepted with `sendAt` waits `scheduled`
-- (not charged, no window checked) until its release job (messages/schedule.ts) decides it as a send
-- of that moment: `queued` and dispatched, or `failed`. Until then `POST /messages/{id}/cancel`
-- makes it `canceled`, a terminal status of its own. Provider statuses never move either
-- (messages/transition.ts).
ALTER TABLE messages DROP CONSTRAINT messages_status_check;
ALTER TABLE messages ADD CONSTRAINT messages_status_check
  CHECK (status IN ('scheduled', 'queued', 'sent', 'delivered', 'read', 'failed', 'canceled', 'received'));
-- When it is to go (the sendAt accepted); null for a message sent at once.
ALTER TABLE messages ADD COLUMN send_at timestamptz;
-- GET /messages?status=scheduled: few rows of an account are waiting (as messages_failed, migration 032).
CREATE INDEX messages_scheduled ON messages (account_id, id) WHERE status = 'scheduled';

CREATE OR REPLACE VIEW message_rows AS
  SELECT id, account_id, contact_id, conversation_id, direction, type, phone, content, template_id, status, error,
         provider, sandbox, provider_message_id, country, category, list_price_micros, charged_micros, free_reason,
         refunded_at, idempotency_key, bulk_job_id, bulk_index, campaign_id, created_at, sent_at, delivered_at,
         read_at, failed_at, updated_at, provider_pricing, provider_conversation, accepted_at, provider_status,
         adjusted_micros, unpaid_micros, marked_read_at, typing_shown_at, played_at, whatsapp_user_id, price_rule,
         source, send_at
    FROM messages;
