-- What the provider reports about a message beyond its status (WhatsApp's status callbacks):
-- { billable, model, category, type } of its `pricing`, and { id, origin, expiresAt } of the
-- `conversation` it was counted in. The latest report that carries one replaces the one before.
ALTER TABLE messages ADD COLUMN provider_pricing jsonb;
ALTER TABLE messages ADD COLUMN provider_conversation jsonb;
