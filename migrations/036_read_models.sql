-- Read models: the rows of a module's table that other modules read, by name. A reader above the
-- owner (automation reading a contact, conversations reading its last message) joins the view in its
-- own statement, so the owner's column list stays in the owner (src/modules/contacts/repo.ts
-- CONTACT_COLUMNS, src/modules/messages/repo.ts MESSAGE_COLUMNS; test/platform/read-models.test.ts holds them
-- equal). Plain views: the planner inlines them, the statements' plans do not change.
-- A later migration that drops or retypes a column a view shows recreates the view.
CREATE VIEW contact_rows AS
  SELECT id, account_id, phone, name, email, tags, attributes, opted_in, marketing_opt_out, created_at, updated_at,
         last_inbound_at, wa_id
    FROM contacts;

CREATE VIEW message_rows AS
  SELECT id, account_id, contact_id, conversation_id, direction, type, phone, content, template_id, status, error,
         provider, sandbox, provider_message_id, country, category, list_price_micros, charged_micros, free_reason,
         refunded_at, idempotency_key, bulk_job_id, bulk_index, campaign_id, created_at, sent_at, delivered_at,
         read_at, failed_at, updated_at, provider_pricing, provider_conversation, accepted_at, provider_status,
         adjusted_micros, unpaid_micros, marked_read_at, typing_shown_at, played_at
    FROM messages;

-- Whether an event's stored payload was erased (src/modules/erasure/erase.ts isErasedEvent, whose
-- marks these are): named, so a statement of webhooks, sequences or journeys asks it without the
-- erasure module's text. A one-expression SQL function: the planner inlines it.
CREATE FUNCTION event_erased(payload text) RETURNS boolean
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT payload = '{"erased":true}' OR strpos(payload, '"data": {"erased": true}') > 0 $$;

-- The account a run acts for, with its channel's provider (src/modules/automation/actors.ts, whose
-- actorFrom says whether it may run): joined by the automation worker's batch statement, which
-- reads it with the events it took in one round trip.
CREATE VIEW account_actors AS
  SELECT a.id AS account_id, a.status, a.plan_code, a.addons, a.country_code, c.provider
    FROM accounts a LEFT JOIN account_channels c ON c.account_id = a.id;
