-- Customers known by their WhatsApp user id, with or without a phone number (docs/messaging.md
-- § Who a customer is). Since April 2026 Meta names every customer by a business-scoped user id
-- (BSUID: `US.13491208655302741918`; a parent id `US.ENT.…` where a business portfolio shares one)
-- and, since usernames, may leave the phone out: such a customer is a contact with no phone.
--   whatsapp_user_id          the BSUID, as Meta reported it: one contact per user id per account,
--                             as per phone; a customer's messages find their contact by it first
--   whatsapp_parent_user_id   the parent BSUID, when Meta gives one
--   whatsapp_username         the username Meta showed last (without a leading @): shown and
--                             searched, never a key (a customer may change it)
-- A contact has a phone, a user id or both.
ALTER TABLE contacts ALTER COLUMN phone DROP NOT NULL;
ALTER TABLE contacts ADD COLUMN whatsapp_user_id text;
ALTER TABLE contacts ADD COLUMN whatsapp_parent_user_id text;
ALTER TABLE contacts ADD COLUMN whatsapp_username text;
ALTER TABLE contacts ADD CONSTRAINT contacts_whatsapp_user_unique UNIQUE (account_id, whatsapp_user_id);
ALTER TABLE contacts ADD CONSTRAINT contacts_phone_or_user_id
  CHECK (phone IS NOT NULL OR whatsapp_user_id IS NOT NULL);

-- `q` finds usernames too. A stored generated column's expression cannot be altered before
-- PostgreSQL 17: the column and its index are made again.
DROP INDEX contacts_search;
ALTER TABLE contacts DROP COLUMN search_text;
ALTER TABLE contacts ADD COLUMN search_text text GENERATED ALWAYS AS (
  lower(coalesce(name, '') || ' ' || coalesce(phone, '') || ' ' || coalesce(email, '') || ' ' ||
        coalesce(whatsapp_username, ''))
) STORED;
CREATE INDEX contacts_search ON contacts USING gin (account_id, search_text gin_trgm_ops);

-- A message to (or from) a customer without a phone is addressed by their user id: `phone` is the
-- number it went to when it went to one, `whatsapp_user_id` the user id it went to otherwise.
ALTER TABLE messages ALTER COLUMN phone DROP NOT NULL;
ALTER TABLE messages ADD COLUMN whatsapp_user_id text;
-- A chat's messages by user id, as messages_account_phone finds them by number.
CREATE INDEX messages_account_user_id ON messages (account_id, whatsapp_user_id, id) WHERE whatsapp_user_id IS NOT NULL;
-- A conversation's and a campaign recipient's copy of the contact's phone: none for such a contact.
ALTER TABLE conversations ALTER COLUMN phone DROP NOT NULL;
ALTER TABLE campaign_recipients ALTER COLUMN phone DROP NOT NULL;

-- The read models show the new columns (added at the end: CREATE OR REPLACE keeps the others).
CREATE OR REPLACE VIEW contact_rows AS
  SELECT id, account_id, phone, name, email, tags, attributes, opted_in, marketing_opt_out, created_at, updated_at,
         last_inbound_at, wa_id, whatsapp_user_id, whatsapp_parent_user_id, whatsapp_username
    FROM contacts;

CREATE OR REPLACE VIEW message_rows AS
  SELECT id, account_id, contact_id, conversation_id, direction, type, phone, content, template_id, status, error,
         provider, sandbox, provider_message_id, country, category, list_price_micros, charged_micros, free_reason,
         refunded_at, idempotency_key, bulk_job_id, bulk_index, campaign_id, created_at, sent_at, delivered_at,
         read_at, failed_at, updated_at, provider_pricing, provider_conversation, accepted_at, provider_status,
         adjusted_micros, unpaid_micros, marked_read_at, typing_shown_at, played_at, whatsapp_user_id
    FROM messages;

-- One person, one contact: when Meta shows that two contacts are one customer (a callback naming a
-- number and a user id that each had a contact), the other is merged into the survivor and gone
-- (src/modules/contacts/merge.ts). Its id stays known here, so the API answers it with the
-- survivor; a merge into a contact that was itself merged later points at the last survivor.
CREATE TABLE contact_merges (
  account_id text NOT NULL,
  merged_id text NOT NULL,
  survivor_id text NOT NULL,
  merged_at timestamptz NOT NULL,
  PRIMARY KEY (account_id, merged_id)
);
CREATE INDEX contact_merges_survivor ON contact_merges (account_id, survivor_id);
