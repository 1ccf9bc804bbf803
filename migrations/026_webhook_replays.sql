-- Webhook replays (POST /webhooks/{id}/replay): an event the endpoint already had a delivery of can
-- be delivered to it again, as a new delivery marked `replay`. The outbox still makes at most one
-- ordinary delivery per (endpoint, event); replays are outside that rule.
ALTER TABLE webhook_deliveries ADD COLUMN replay boolean NOT NULL DEFAULT false;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_event_id_key;
CREATE UNIQUE INDEX webhook_deliveries_endpoint_event ON webhook_deliveries (endpoint_id, event_id) WHERE NOT replay;
